"""The rule in derivls/derivatives/formulas/rules/index_out_of_range.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import LAYER_NORM


def test_a_literal_index_past_grad_input_mask_or_grads_is_a_warning(scope_of, headers):
    scope = scope_of(LAYER_NORM, "input, weight, bias")
    formula = "f(grads[3], {grad_input_mask[0], grad_input_mask[2], grad_input_mask[3]})"
    found = [f for f in resolve(formula, scope, headers) if f.code == "formula-index-out-of-range"]
    assert [(f.severity, formula[f.start : f.end]) for f in found] == [(2, "3"), (2, "3")]
    assert found[0].message.startswith("'grads' has 3 element(s), one gradient per output (result0, result1, result2)")
    assert found[1].message.startswith("'grad_input_mask' has 3 element(s), one flag per input of this formula (input")
    assert [f.code for f in resolve("grads[2] * grad_input_mask[2]", scope, headers)] == []
