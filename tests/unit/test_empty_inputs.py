"""Empty and broken inputs get the build's answer, once (issue 49, item 3): an empty derivatives.yaml
gets torchgen's loader error, an unreadable or empty tags.yaml one `native-unreadable`, as torchgen
fails on each before it reads an entry."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer


def check(derivatives: Path, native: Path, tags: Path) -> tuple[int, list[tuple[str, str, int]]]:
    """`derivls check --format json`: its exit code and (file name, code, line) of each diagnostic."""
    run = subprocess.run(
        [sys.executable, "-m", "derivls", "check", "--format", "json", "--no-cache"]
        + ["--native", str(native), "--tags", str(tags), str(derivatives)],
        capture_output=True,
        text=True,
        check=False,
        cwd=derivatives.parent,
    )
    assert "Traceback" not in run.stderr, run.stderr
    return run.returncode, [(Path(d["path"]).name, d["code"], d["line"]) for d in json.loads(run.stdout)]


@pytest.mark.parametrize("text", ["", "# only a comment\n", "\n  \n"], ids=["empty", "a comment", "blank lines"])
def test_a_derivatives_yaml_without_entries_is_the_loaders_error(real_files, tmp_path, text):
    """torchgen: yaml.load gives None, and load_derivatives fails iterating it."""
    derivatives = tmp_path / "derivatives.yaml"
    derivatives.write_text(text)
    assert check(derivatives, real_files.native, real_files.tags) == (1, [("derivatives.yaml", "not-a-list", 1)])


def test_an_empty_list_of_entries_is_fine(real_files, tmp_path):
    """`[]` loads as a list torchgen iterates over: no entries, no error."""
    derivatives = tmp_path / "derivatives.yaml"
    derivatives.write_text("[]\n")
    assert check(derivatives, real_files.native, real_files.tags) == (0, [])
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    assert DocumentAnalyzer(index).analyse("[]\n").diagnostics == ()


@pytest.mark.parametrize(
    "tags", [b"", b"# no tags yet\n", b"\xff\xfe\x00binary\x00\xc3("], ids=["empty", "a comment", "binary"]
)
def test_an_empty_or_unreadable_tags_yaml_is_one_native_unreadable(real_files, tmp_path, tags):
    """torchgen reads tags.yaml first: an empty one ("Expected 'es' to be a list") or one that is not
    text stops it. One error in each file, not one per function that has tags (117 errors and 375 warnings):
    tags.yaml's own on its first line, and derivatives.yaml's `native-unreadable` (nothing of it is checked)."""
    (tmp_path / "tags.yaml").write_bytes(tags)
    derivatives = tmp_path / "derivatives.yaml"
    derivatives.write_text(real_files.derivatives.read_text())
    assert check(derivatives, real_files.native, tmp_path / "tags.yaml") == (
        1,
        [("tags.yaml", "native-yaml", 1), ("derivatives.yaml", "native-unreadable", 1)],
    )
