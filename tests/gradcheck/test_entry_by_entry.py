"""`derivls gradcheck` answers entry by entry (issues 49 and 54): a formula that never returns is that unit's "not
checkable: it ran out of N s" (DERIVLS_GRADCHECK_SECONDS, a unit's bound), an entry whose code does not compile gets
its compile error on its YAML line; the other entries of the run are checked all the same. Slow (a compiler):
`python -m pytest -m gradcheck tests/gradcheck/test_entry_by_entry.py`."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import gradcheck, replace_in_entry

pytestmark = pytest.mark.gradcheck

ACOS = "self: grad * -((-self * self + 1).rsqrt()).conj()"
SPINS = 'self: "[&]{ volatile bool spin = true; while (spin) {} return grad; }()"'  # (never returns)
MISSPELT = "self: gard * -((-self * self + 1).rsqrt()).conj()"


def units(run) -> dict[str, dict]:
    return {u["name"]: u for u in run.summary["units"]}


def test_a_formula_that_never_returns_is_not_checkable_for_its_time_and_the_other_entry_is_checked(
    wheel_copy, tmp_path
):
    replace_in_entry(wheel_copy, "acos(", ACOS, SPINS)
    run = gradcheck(
        wheel_copy, "--op", "acos", "--op", "asin", "--no-repair", cwd=tmp_path, env={"DERIVLS_GRADCHECK_SECONDS": "20"}
    )
    assert run.code == 0, run.stderr
    found = units(run)
    assert found["AcosBackward0"]["status"] == "not-checkable"
    assert found["AcosBackward0"]["reason"] == "it ran out of 20 s"
    assert found["AsinBackward0"]["status"] == "passed"


def test_an_entry_that_does_not_compile_gets_its_error_on_its_line_and_the_other_entry_is_checked(wheel_copy, tmp_path):
    line = replace_in_entry(wheel_copy, "acos(", ACOS, MISSPELT)
    run = gradcheck(wheel_copy, "--op", "acos", "--op", "asin", "--no-repair", cwd=tmp_path)
    assert run.code == 1, run.stderr
    errors = [d for d in run.diagnostics if d["code"] == "compile-error"]
    # on the formula's line, and on `result: auto_element_wise` below it (its forward formula is derived from it)
    assert line in {d["line"] for d in errors} and {d["line"] for d in errors} <= {line, line + 1}
    assert all("gard" in d["message"] for d in errors)
    assert all("unit.cpp" not in d["message"] and "/tmp" not in d["message"] for d in run.diagnostics)
    assert "unit.cpp" not in run.stderr
    found = units(run)
    assert found["AsinBackward0"]["status"] == "passed"
    assert found["AcosBackward0"]["status"] == "not-checkable"
    assert "does not compile" in found["AcosBackward0"]["reason"]
