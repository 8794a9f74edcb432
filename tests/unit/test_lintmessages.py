"""`derivls check --format lintrunner`: lintrunner's LintMessage, one JSON object a line (derivls/cli/lintmessages.py),
and the quick fixes as plain data it patches with (derivls/ide/actions.py)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from derivls.base.diagnostics import Diagnostic, Edit, Fix, Severity, Span
from derivls.cli import commandline as cli
from derivls.cli.lintmessages import file_messages
from derivls.cli.report import CheckedFile
from derivls.codes.formula import FORMULA_UNKNOWN_NAME
from derivls.ide.actions import apply_edits, unambiguous_fix
from tests.conftest import FIXTURES

KEYS = {"path", "line", "char", "code", "severity", "name", "original", "replacement", "description"}


def diagnostic(line: int, column: int, end: int, *fixes: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    span = Span(line, column, line, end)
    return Diagnostic(
        span,
        severity,
        FORMULA_UNKNOWN_NAME,
        f"a name on line {line + 1}",
        fixes=tuple(Fix(f"Replace with '{f}'", (Edit(span, f),), i == 0) for i, f in enumerate(fixes)),
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "lsp" / "checkout", root)
    return root


def lint(capsys, *args: str) -> tuple[int, list[dict]]:
    code = cli.main(["check", "--format", "lintrunner", "--no-cache", *args])
    return code, [json.loads(line) for line in capsys.readouterr().out.splitlines()]


def test_apply_edits_replaces_spans_counted_in_lsp_lines_and_keeps_the_line_endings():
    text = "a: x\r\nb: yy\rc: z\n"
    assert apply_edits(text, [Edit(Span(1, 3, 1, 5), "Y"), Edit(Span(2, 3, 2, 4), "Z")]) == "a: x\r\nb: Y\rc: Z\n"


def test_apply_edits_refuses_overlapping_or_outside_spans():
    assert apply_edits("abc\n", [Edit(Span(0, 0, 0, 2), "x"), Edit(Span(0, 1, 0, 3), "y")]) is None
    assert apply_edits("abc\n", [Edit(Span(5, 0, 5, 1), "x")]) is None
    assert apply_edits("abc\n", [Edit(Span(0, 2, 0, 9), "x")]) is None


def test_only_a_diagnostic_with_exactly_one_fix_has_an_unambiguous_fix():
    assert unambiguous_fix(diagnostic(0, 0, 1, "self")) is not None
    assert unambiguous_fix(diagnostic(0, 0, 1, "self", "self_t")) is None
    assert unambiguous_fix(diagnostic(0, 0, 1)) is None


def test_a_file_with_one_fix_gives_one_message_carrying_the_whole_file_before_and_after(tmp_path: Path):
    text = "- name: f\n  self: slef\n"
    found = file_messages(CheckedFile(tmp_path / "d.yaml", (diagnostic(1, 8, 12, "self"),)), text)
    assert [set(m) for m in found] == [KEYS]
    (m,) = found
    assert (m["line"], m["char"], m["code"], m["severity"]) == (2, 8, "DERIVLS", "error")
    assert m["name"] == "formula-unknown-name"
    assert m["path"] == str((tmp_path / "d.yaml").absolute())
    assert (m["original"], m["replacement"]) == (text, "- name: f\n  self: self\n")
    assert m["description"] == "a name on line 2. Fix: Replace with 'self'."


def test_several_fixes_of_a_file_travel_in_one_patch_since_lintrunner_takes_one_per_file(tmp_path: Path):
    text = "a: slef\nb: slef\nc: gard\n"
    diagnostics = (diagnostic(0, 3, 7, "self"), diagnostic(1, 3, 7, "self"), diagnostic(2, 3, 7, "grad", "gradd"))
    found = file_messages(CheckedFile(tmp_path / "d.yaml", diagnostics), text)
    patches = [m for m in found if m["replacement"] is not None]
    assert len(patches) == 1
    assert patches[0]["replacement"] == "a: self\nb: self\nc: gard\n"
    assert patches[0]["line"] == 1 and patches[0]["description"].startswith("2 fixes in one patch: line 1: ")
    # the fix that is a choice (two close names) is reported, without a patch
    assert [(m["line"], m["replacement"]) for m in found if m is not patches[0]] == [(3, None)]


def test_warnings_are_warnings_and_information_is_advice(tmp_path: Path):
    found = file_messages(
        CheckedFile(
            tmp_path / "d.yaml",
            (diagnostic(0, 0, 1, severity=Severity.WARNING), diagnostic(1, 0, 1, severity=Severity.INFORMATION)),
        ),
        "a\nb\n",
    )
    assert [m["severity"] for m in found] == ["warning", "advice"]


def test_check_in_lintrunner_format_reports_a_seeded_mistake_and_exits_0(checkout: Path, capsys):
    path = checkout / "tools/autograd/derivatives.yaml"
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    code, messages = lint(capsys, str(path))
    assert code == 0  # lintrunner's protocol: the linter exits 0, lintrunner judges the messages
    assert [(m["line"], m["char"], m["name"]) for m in messages] == [(4, 15, "formula-unknown-name")]
    assert messages[0]["replacement"] == path.read_text().replace("slef.sgn()", "self.sgn()")


def test_a_native_functions_yaml_path_stands_for_the_derivatives_yaml_of_its_checkout_once(checkout: Path, capsys):
    path = checkout / "tools/autograd/derivatives.yaml"
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    native = checkout / "aten/src/ATen/native/native_functions.yaml"
    code, messages = lint(capsys, str(native), str(path))
    assert code == 0
    assert [(m["path"], m["line"]) for m in messages] == [(str(path.resolve()), 4)]


def test_paths_can_come_from_a_file_as_lintrunner_passes_them(checkout: Path, tmp_path: Path, capsys):
    path = checkout / "tools/autograd/derivatives.yaml"
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    paths_file = tmp_path / "paths"
    paths_file.write_text(f"{path}\n")
    code, messages = lint(capsys, f"@{paths_file}")
    assert (code, [m["line"] for m in messages]) == (0, [4])


def test_a_check_that_cannot_run_is_a_general_linter_failure_without_a_path_and_exit_0(tmp_path: Path, capsys):
    code, messages = lint(capsys, str(tmp_path / "missing.yaml"))
    assert code == 0
    (m,) = messages
    assert (m["path"], m["line"], m["code"], m["severity"]) == (None, None, "DERIVLS", "error")
    assert "missing.yaml" in m["description"]
