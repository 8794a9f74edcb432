"""The rule in derivls/derivatives/formulas/rules/saved_call_qualified.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, codes


def test_a_qualified_call_the_saved_variable_substitution_rewrites_is_reported(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("at::zeros_like(self)", scope, headers) == [
        ("formula-saved-call-qualified", "at::zeros_like", ("zeros_like",))
    ]
    found = resolve("grad + at::TensorGeometry(self).numel()", scope, headers)
    assert [f.code for f in found] == ["formula-saved-call-qualified"]
    assert "'at::self_geometry' does not compile" in found[0].message
    # not the substitution's exact text, not an argument, or a forward formula: the ATen function
    assert codes("at::zeros_like( self )", scope, headers) == []
    assert codes("at::zeros_like(grad)", scope, headers) == []
    assert codes("at::zeros_like(self_t)", scope_of(ABS, "result"), headers) == []
