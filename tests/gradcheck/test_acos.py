"""`derivls gradcheck --op acos` on the 2.13 file against the installed torch 2.13: the shipped formula
passes; with its minus sign dropped, it fails on the formula's own line, with the sample and the
largest mismatch. Slow (a compiler; the precompiled header the first time): `python -m pytest -m gradcheck`."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import gradcheck, line_of, replace_in_entry

pytestmark = pytest.mark.gradcheck

SHIPPED = "self: grad * -((-self * self + 1).rsqrt()).conj()"
SIGN_DROPPED = "self: grad * ((-self * self + 1).rsqrt()).conj()"


def test_the_shipped_acos_formula_passes(wheel_copy, tmp_path):
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert run.diagnostics == []
    assert run.summary["counts"] == {"checked": 1, "passed": 1, "failed": 0, "not-checkable": 0}
    assert run.summary["units"][0]["inputs"] == "opinfo"


def test_acos_with_its_sign_dropped_fails_on_the_formula_line(wheel_copy, tmp_path):
    line = replace_in_entry(wheel_copy, "acos(", SHIPPED, SIGN_DROPPED)
    assert line == line_of(wheel_copy, SIGN_DROPPED, "- name: acos(")
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 1, run.stderr
    backward = [d for d in run.diagnostics if "backward formula" in d["message"]]
    assert [d["line"] for d in backward] == [line]
    (d,) = backward
    assert d["code"] == "gradcheck-mismatch" and d["column"] == len("  self: ") + 1
    assert "float64" in d["message"] and "Tensor[" in d["message"]  # the sample
    assert "largest mismatch" in d["message"]
    # acos's forward formula is derived from it (auto_element_wise): that line fails too, and no other
    assert {x["line"] for x in run.diagnostics} <= {line, line + 1}


def test_acos_with_its_sign_dropped_gets_the_shipped_formula_as_its_one_suggestion(wheel_copy, tmp_path):
    line = replace_in_entry(wheel_copy, "acos(", SHIPPED, SIGN_DROPPED)
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 1, run.stderr
    formula = SHIPPED[len("self: ") :]
    (suggestion,) = run.suggestions
    assert suggestion["formula"] == formula and suggestion["replacement"] == formula
    assert (suggestion["line"], suggestion["column"]) == (line, len("  self: ") + 1)
    assert suggestion["end_column"] == len("  " + SIGN_DROPPED) + 1
    assert suggestion["how"] == "sign" and suggestion["samples"] > 0
    # the suggestion is the fix of the backward formula's diagnostic, and the file is left as it was
    (backward,) = [d for d in run.diagnostics if "backward formula" in d["message"]]
    assert backward["line"] == line
    assert SIGN_DROPPED in wheel_copy.read_text()
    assert "repairs" in run.stderr


def test_no_repair_is_tried_with_no_repair(wheel_copy, tmp_path):
    replace_in_entry(wheel_copy, "acos(", SHIPPED, SIGN_DROPPED)
    run = gradcheck(wheel_copy, "--op", "acos", "--no-repair", cwd=tmp_path)
    assert run.code == 1, run.stderr
    assert run.suggestions == [] and "repairs" not in run.stderr


def test_a_file_of_another_release_is_refused_unless_forced(wheel_copy, tmp_path):
    (wheel_copy.parents[3] / "torch" / "version.py").write_text("__version__ = '2.4.1'\n")
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 2
    assert "2.4.1" in run.stderr and "--force" in run.stderr
