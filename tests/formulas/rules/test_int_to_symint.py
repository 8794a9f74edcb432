"""The rule in derivls/derivatives/formulas/rules/int_to_symint.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import codes, where


def test_an_int_list_given_to_a_symint_name_where_every_fitting_overload_takes_symint_is_an_error(scope_of, headers):
    im2col = scope_of("im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor",
                      "self")  # fmt: skip
    shipped = "col2im_symint(grad, {self.sym_size(-2), self.sym_size(-1)}, kernel_size, dilation, padding, stride)"
    assert codes(shipped, im2col, headers) == []  # kernel_size &c. are int[] parameters of col2im_symint too
    mistaken = "col2im_symint(grad, kernel_size, kernel_size, dilation, padding, stride)"
    assert where(mistaken, im2col, headers) == [("formula-int-to-symint", "kernel_size")]
    message = resolve(mistaken, im2col, headers)[0].message
    assert message.startswith("'col2im_symint' takes a SymIntArrayRef here, and 'kernel_size' is a list of int64_t")
    assert codes("grad.expand(kernel_size) + grad.expand_symint(self.sym_sizes())", im2col, headers) == []
