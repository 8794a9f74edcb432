"""The rule in derivls/derivatives/formulas/rules/symint_to_int.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, codes, where


def test_a_symint_list_given_to_an_aten_name_without_symint_is_an_error_with_the_symint_name_as_fix(scope_of, headers):
    backward = scope_of(ABS, "self")
    assert codes("grad.expand_symint(self.sym_sizes()) + at::zeros_symint(self.sym_sizes(), grad.options())",
                 backward, headers) == []  # fmt: skip
    found = resolve("grad.expand(self.sym_sizes()) + at::zeros(self.sym_strides(), grad.options())", backward, headers)
    assert [(f.code, f.rewrites[0].text) for f in found] == [
        ("formula-symint-to-int", "expand_symint"), ("formula-symint-to-int", "zeros_symint"),
    ]  # fmt: skip
    assert found[0].message.startswith(
        "'expand' takes IntArrayRef (its C++ name without '_symint'), and 'self.sym_sizes()'"
    )
    # sizes() is an IntArrayRef; helpers and hand-written ATen functions (at::sum_to) take either
    assert codes("grad.expand(self.sizes()) + at::sum_to(grad, self.sym_sizes())", backward, headers) == []
    pad = scope_of("constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor", "result")
    assert where("constant_pad_nd(self_t, pad, 0)", pad, headers) == [("formula-symint-to-int", "constant_pad_nd")]
    assert codes("constant_pad_nd_symint(self_t, pad, 0)", pad, headers) == []
