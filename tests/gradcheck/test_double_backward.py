"""`derivls gradcheck --double-backward`: after a backward formula's gradcheck passes, gradgradcheck checks
the formula's own derivatives (what test_ops' test_fn_gradgrad checks). The shipped acos formula passes it;
one whose value is right but that is cut from autograd (`self.detach()`: the build accepts it, gradcheck
passes it) fails it, on its own line. Slow (a compiler): `python -m pytest -m gradcheck`."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import gradcheck, replace_in_entry
from tests.gradcheck.test_acos import SHIPPED

pytestmark = pytest.mark.gradcheck

DETACHED = "self: grad * -((-self.detach() * self.detach() + 1).rsqrt()).conj()"


def test_double_backward_runs_gradgradcheck_after_each_backward_check_and_the_shipped_acos_passes(wheel_copy, tmp_path):
    run = gradcheck(wheel_copy, "--op", "acos", "--double-backward", cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert run.diagnostics == []
    assert run.summary["counts"] == {"checked": 1, "passed": 1, "failed": 0, "not-checkable": 0}
    checks = run.summary["checks"]
    assert checks["double-backward"] == checks["backward"] >= 2, checks  # float64 and complex128 samples


def test_without_double_backward_no_gradgradcheck_runs(wheel_copy, tmp_path):
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 0, run.stderr
    assert "double-backward" not in run.summary["checks"] and run.summary["checks"]["backward"] >= 2


def test_a_backward_formula_cut_from_autograd_fails_only_under_double_backward_on_its_line(wheel_copy, tmp_path):
    line = replace_in_entry(wheel_copy, "acos(", SHIPPED, DETACHED)
    first = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert (first.code, first.diagnostics) == (0, []), first.stderr  # its value is right: gradcheck passes
    run = gradcheck(wheel_copy, "--op", "acos", "--double-backward", cwd=tmp_path)
    assert run.code == 1, run.stderr
    assert [d["line"] for d in run.diagnostics] == [line]
    (d,) = run.diagnostics
    assert d["code"] == "gradcheck-mismatch"
    assert "derivative of the backward formula for self (gradgradcheck)" in d["message"]
    assert "float64" in d["message"] and "Tensor[" in d["message"]
