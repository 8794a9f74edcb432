"""README's command-line synopsis and docs/cli.md's are one text, and it has every subcommand and option of
the parser's `check` and `gradcheck` selection (docs/cli.md's once lacked gradcheck, explain and cache)."""

from __future__ import annotations

import argparse
import re
from pathlib import Path

import pytest

from derivls.cli.commandline import build_parser

ROOT = Path(__file__).parents[2]


def synopsis(page: Path) -> str:
    text = page.read_text(encoding="utf-8")
    block = re.search(r"```\n(derivls {22}serve LSP.*?)```", text, re.S)
    assert block is not None, f"{page} has no synopsis block"
    return block.group(1)


def test_readme_and_docs_cli_give_the_same_synopsis():
    assert synopsis(ROOT / "README.md") == synopsis(ROOT / "docs" / "cli.md")


def test_the_synopsis_names_every_subcommand():
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    text = synopsis(ROOT / "README.md")
    assert [c for c in commands if f"derivls {c}" not in text] == []


def test_the_synopsis_names_the_selection_and_format_options_of_check_and_gradcheck():
    text = synopsis(ROOT / "README.md")
    for option in ("--since REF", "--format text|json|github|lintrunner", "--all", "--summary-json FILE", "@FILE"):
        assert option in text


def documented(text: str) -> dict[str | None, str]:
    """Each command's synopsis text (its lines, continuation lines joined; a line's description after two spaces
    dropped), keyed by the command (None: the top level's `derivls --version`)."""
    found: dict[str | None, str] = {}
    command: str | None = None
    for line in text.splitlines():
        usage = re.split(r"\s{2,}", line.strip())[0]
        start = re.match(r"derivls (\w+)\b", line)
        if start:
            command = start.group(1)
        elif re.match(r"derivls -", line):
            command = None
        elif not line.startswith(" "):
            continue  # `derivls` alone: serve's line below says its options
        found[command] = found.get(command, "") + " " + usage
    return found


def parser_options() -> dict[str | None, list[argparse.Action]]:
    parser = build_parser()
    commands = next(a for a in parser._actions if a.dest == "command").choices
    options: dict[str | None, list[argparse.Action]] = {None: parser._actions}
    options.update({name: sub._actions for name, sub in commands.items()})
    return {name: [a for a in actions if a.dest not in ("help", "command")] for name, actions in options.items()}


@pytest.mark.parametrize("page", ["README.md", "docs/cli.md"])
def test_the_synopsis_gives_every_option_of_every_command_and_no_other(page):
    """What `derivls CMD --help` lists is what the synopsis says, option by option (the gradcheck line once lacked
    --native, --tags, --cxx, --torch-include and --max-samples), choices included."""
    text = documented(synopsis(ROOT / page))
    problems = []
    for command, actions in parser_options().items():
        said = text.get(command, "")
        given = set(re.findall(r"(?<![\w-])(--?[a-z][\w-]*)", said))
        known = {s for a in actions for s in a.option_strings}
        for action in actions:
            names = action.option_strings or [action.metavar or action.dest]
            if action.option_strings and not given & set(action.option_strings):
                problems.append(f"{command}: {names[0]} is not in the synopsis")
            if action.choices and "|".join(action.choices) not in said:
                problems.append(f"{command}: {names[0]}'s choices {'|'.join(action.choices)} are not in the synopsis")
        problems += [f"{command}: {option} is in the synopsis, not in the parser" for option in given - known]
    assert problems == []


def test_the_install_line_warns_that_it_replaces_a_torch_build_in_a_development_venv():
    text = " ".join((ROOT / "README.md").read_text(encoding="utf-8").split())
    after = text[text.index("pip install -e . torch==2.13.0 && derivls check") :][:900]
    assert "leave `torch==2.13.0` out" in after and "your own torch build" in after
