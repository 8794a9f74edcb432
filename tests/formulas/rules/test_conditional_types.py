"""The rule in derivls/derivatives/formulas/rules/conditional_types.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, MAX_DIM, codes, where


def test_the_branches_of_a_conditional_need_a_common_type(scope_of, headers):
    scope = scope_of(ABS, "self")
    fine = "grad.defined() ? grad * self.sgn() : zeros_like(grad) + (self.dim() > 0 ? 1 : 0.5) * grad"
    assert codes(fine, scope, headers) == []
    found = resolve("grad.defined() ? grad * self.sgn() : 0", scope, headers)
    assert [(f.code, "grad.defined() ? grad * self.sgn() : 0"[f.start : f.end]) for f in found] == [
        ("formula-conditional-types", "?")
    ]
    assert found[0].message.startswith("The branches of '?:' have no common type: 'grad * self.sgn()' (a Tensor")
    # in an argument, nested, or with a branch derivls does not type
    assert where("at::sum(dim ? grad : self.sgn().sum(), 0)", scope_of(MAX_DIM, "self"), headers) == []
    assert where("mul(grad, keepdim ? 2 : grad)", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-conditional-types", "?")
    ]
    nested = "keepdim ? grad : dim ? grad : 0"  # (the second conditional's branches: a Tensor and an int)
    assert [f.start for f in resolve(nested, scope_of(MAX_DIM, "self"), headers)] == [nested.rindex("?")]
    assert codes("keepdim ? Tensor() : 0", scope_of(MAX_DIM, "self"), headers) == []
