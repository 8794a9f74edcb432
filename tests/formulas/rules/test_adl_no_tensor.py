"""The rule in derivls/derivatives/formulas/rules/adl_no_tensor.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, MAX_DIM, codes


def test_an_unqualified_aten_call_needs_a_tensor_argument(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    assert codes("zeros_like(grad)", scope, headers) == []
    assert codes("where(dim > 0, grad, self)", scope, headers) == []
    assert codes("scalar_tensor(0., grad.options())", scope, headers) == [
        ("formula-adl-no-tensor", "scalar_tensor", ("at::scalar_tensor",))
    ]
    assert codes("zeros({dim, keepdim})", scope, headers)[0][:2] == ("formula-adl-no-tensor", "zeros")


def test_an_unqualified_aten_call_fails_for_certain_when_no_argument_type_leads_into_at(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    found = resolve("zeros_symint(self.sym_sizes(), grad.options())", scope, headers)
    assert [(f.code, f.severity) for f in found] == [("formula-adl-no-tensor", 1)]
    assert "c10::SymIntArrayRef, TensorOptions" in found[0].message
    assert ("formula-adl-no-tensor", 1) in [(f.code, f.severity) for f in resolve("scalar_tensor()", scope, headers)]
    # a braced list leads nowhere, nor does an operation on numbers; an argument that is not typed (a conditional
    # expression) is not judged: a warning
    assert [(f.code, f.severity) for f in resolve("zeros({dim, keepdim})", scope, headers)] == [
        ("formula-adl-no-tensor", 1)
    ]
    assert [(f.code, f.severity) for f in resolve("scalar_tensor(dim + 1)", scope, headers)] == [
        ("formula-adl-no-tensor", 1)
    ]
    assert [(f.code, f.severity) for f in resolve("scalar_tensor(dim ? 1 : 0)", scope, headers)] == [
        ("formula-adl-no-tensor", 2)
    ]


def test_an_aten_utility_is_found_by_argument_dependent_lookup_on_a_tensor(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("sum_to(grad, self.sym_sizes())", scope, headers) == []  # at::sum_to (ExpandUtils.h)
    assert codes("sum_to(self.sym_sizes(), self.sym_sizes())", scope, headers)[0][:2] == (
        "formula-adl-no-tensor", "sum_to",
    )  # fmt: skip
