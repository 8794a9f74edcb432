"""README's command-line synopsis and docs/cli.md's are one text, and it has every subcommand and option of
the parser's `check` and `gradcheck` selection (docs/cli.md's once lacked gradcheck, explain and cache)."""

from __future__ import annotations

import re
from pathlib import Path

from derivls.cli import build_parser

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
