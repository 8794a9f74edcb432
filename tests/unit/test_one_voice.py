"""One voice: an error line ends its sentence once, a warning has the same form, and every count derivls prints is
pluralised. (Every subcommand's refusals of bad input: test_cli_matrix.py.)"""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from derivls.base.exits import ended, error_line
from derivls.base.words import plural
from derivls.cli import commandline as cli
from tests.conftest import FIXTURES


@pytest.fixture
def checkout(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "lsp" / "checkout", root)
    monkeypatch.chdir(root)
    return root


DERIVATIVES = "tools/autograd/derivatives.yaml"


def test_an_error_line_ends_its_sentence_once():
    assert error_line("check", "derivatives.yaml not found: x.yaml") == (
        "derivls check: error: derivatives.yaml not found: x.yaml."
    )
    assert (
        error_line("gradcheck", "no torch; pass --python PY.")
        == "derivls gradcheck: error: no torch; pass --python PY."
    )
    assert error_line(None, "did you mean x?") == "derivls: error: did you mean x?"
    assert ended("a (b)") == "a (b)."


def test_counts_are_pluralised():
    assert [plural(1, "error"), plural(2, "error"), plural(0, "warning")] == ["1 error", "2 errors", "0 warnings"]
    assert [plural(1, "batch", "batches"), plural(2, "batch", "batches")] == ["1 batch", "2 batches"]
    assert plural(1, "unit") == "1 unit"


COMMAND_MODULES = (
    "cli/commandline.py",
    "cli/report.py",
    "cli/lintmessages.py",
    "project/since.py",
    "cli/cache.py",
    "cli/compile.py",
    "cli/gradcheck.py",
    "gradcheck/engine.py",
    "gradcheck/results.py",
    "cli/codegen.py",
    "cli/explain.py",
)


def test_no_command_message_counts_with_a_parenthesised_plural():
    sources = Path(cli.__file__).parent.parent
    found = [
        f"{name}:{n}: {line.strip()}"
        for name in COMMAND_MODULES
        for n, line in enumerate((sources / name).read_text(encoding="utf-8").splitlines(), 1)
        if re.search(r"[\"'][^\"']*[a-z]\((s|es)\)[^\"']*[\"']", line)  # "unit(s)", "batch(es)" in a string
    ]
    assert found == []


def test_a_refused_cache_folder_is_a_warning_in_the_same_voice(checkout: Path, capsys, monkeypatch):
    from derivls.base import diskcache

    monkeypatch.setattr(diskcache, "_said", set())
    monkeypatch.setenv("DERIVLS_CACHE_DIR", "relative/cache")
    assert cli.main(["check", DERIVATIVES]) == 0
    err = capsys.readouterr().err
    assert err.startswith("derivls: warning: ") and err.endswith(".\n") and err.count("\n") == 1, err
