"""The rule in derivls/derivatives/formulas/rules/not_bool.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import MAX_DIM, where


def test_a_tensor_scalar_or_list_is_no_condition(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    found = resolve("grad ? grad * 2 : grad", scope, headers)
    assert [(f.code, "grad ? grad * 2 : grad"[f.start : f.end], [r.text for r in f.rewrites]) for f in found] == [
        ("formula-not-bool", "grad", ["grad.defined()"])
    ]
    assert where("!self.sym_sizes().empty() && (!grad || keepdim) ? grad : grad", scope, headers) == [
        ("formula-not-bool", "grad")
    ]
    assert where("grad.defined() && !keepdim ? grad : grad", scope, headers) == []
    assert where("keepdim || self.sizes() ? grad : grad", scope, headers) == [("formula-not-bool", "self.sizes()")]
    # an operation's result is not judged (`grad > 0` is a Tensor too, but not a name a Python habit writes)
    assert where("dim > 0 ? grad : grad", scope, headers) == []
