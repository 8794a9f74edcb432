"""The rule in derivls/derivatives/formulas/rules/operand_type.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import LERP, NAN_TO_NUM, codes, where


def test_a_scalar_takes_an_operator_only_beside_a_tensor(scope_of, headers):
    scope = scope_of(LERP, "self")
    # c10::Scalar has no operators of its own: at::Tensor's take one, beside a Tensor (either side)
    assert codes("grad * weight + weight * grad - grad / -weight", scope, headers) == []
    assert codes("grad * (1 - weight.toDouble()) + (weight.toDouble() > 0. ? grad : grad)", scope, headers) == []
    found = resolve("grad * (1 - weight)", scope, headers)
    assert [(f.code, "grad * (1 - weight)"[f.start : f.end]) for f in found] == [("formula-operand-type", "-")]
    assert found[0].message.startswith("No operator '-' takes '1' (a number) and 'weight' (const at::Scalar &)")
    assert [(r.title, r.text) for r in found[0].rewrites] == [("Use 'weight.toDouble()'", "weight.toDouble()")]
    assert where("weight > 0. ? grad : grad", scope, headers) == [("formula-operand-type", ">")]
    assert where("grad * weight * 2 + weight * 2 * grad", scope, headers) == [("formula-operand-type", "*")]
    assert where("grad * (-weight + self.sgn().sum().item<double>())", scope, headers) == []  # untyped: not judged
    assert where("weight == 0 ? grad : grad", scope, headers) == []  # the literal 0 (a null pointer) is not judged


def test_an_optional_or_a_list_takes_no_arithmetic_operator(scope_of, headers):
    scope = scope_of(NAN_TO_NUM, "self")
    assert where("nan * grad", scope, headers) == [("formula-operand-type", "*")]
    assert where("grad * nan.value() + (posinf > 0 ? grad : grad)", scope, headers) == []  # std::optional compares
    found = resolve("grad - nan", scope, headers)
    assert "std::optional" in found[0].message
    assert [r.text for r in found[0].rewrites] == ["nan.value()"]
    assert where("grad * self.sizes()", scope, headers) == [("formula-operand-type", "*")]
    assert where("self.sizes() == grad.sizes() ? grad : grad", scope, headers) == []


def test_operands_are_judged_only_where_precedence_makes_them_certain(scope_of, headers):
    scope = scope_of(LERP, "self")
    # `a * b` in `x * a * b` has the left operand `x * a`, a Tensor here; a cast's operand is not certain
    assert where("grad * weight * weight", scope, headers) == []
    assert where("(double)weight * 2 * grad", scope, headers) == []
    assert where("grad + weight * 2", scope, headers) == [("formula-operand-type", "*")]
    assert where("weight * 2 < 3 ? grad : grad", scope, headers) == [("formula-operand-type", "*")]
