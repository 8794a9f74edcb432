"""Seeded mathematical mistakes: formulas the build accepts and that are wrong.

Each is (entry: the start of its `name:` after `- name: `, the formula line as shipped in 2.13, the
mistaken line, what kind of mistake). At most one mistake per formula line, so each diagnostic names
one mistake; several formulas of one entry may be mistaken at once (each input is checked on its own).
"""

from __future__ import annotations

DROPPED_SIGN = "dropped sign"
MISSING_CONJ = "missing .conj() (complex)"
WRONG_REDUCTION = "wrong reduction"
SWAPPED_INPUTS = "swapped inputs"
FORWARD_INCONSISTENT = "forward formula inconsistent with the backward"

MISTAKES: tuple[tuple[str, str, str, str], ...] = (
    # dropped signs
    (
        "acos(",
        "self: grad * -((-self * self + 1).rsqrt()).conj()",
        "self: grad * ((-self * self + 1).rsqrt()).conj()",
        DROPPED_SIGN,
    ),
    ("cos(", "self: grad * -self.sin().conj()", "self: grad * self.sin().conj()", DROPPED_SIGN),
    ("reciprocal(", "self: -grad * (result * result).conj()", "self: grad * (result * result).conj()", DROPPED_SIGN),
    ("rsqrt(", "self: -0.5 * grad * result.pow(3).conj()", "self: 0.5 * grad * result.pow(3).conj()", DROPPED_SIGN),
    (
        "erf(",
        "self: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad",
        "self: 2.0 / sqrt(M_PI) * exp(self.pow(2)) * grad",
        DROPPED_SIGN,
    ),
    # missing .conj() on ops OpInfo checks in complex128
    ("sin(", "self: grad * self.cos().conj()", "self: grad * self.cos()", MISSING_CONJ),
    ("sinh(", "self: grad * self.cosh().conj()", "self: grad * self.cosh()", MISSING_CONJ),
    ("cosh(", "self: grad * self.sinh().conj()", "self: grad * self.sinh()", MISSING_CONJ),
    ("exp(", "self: grad * result.conj()", "self: grad * result", MISSING_CONJ),
    ("log(", "self: grad.div(self.conj())", "self: grad.div(self)", MISSING_CONJ),
    ("sqrt(", "self: grad / (2 * result.conj())", "self: grad / (2 * result)", MISSING_CONJ),
    ("atan(", "self: grad / (self * self + 1).conj()", "self: grad / (self * self + 1)", MISSING_CONJ),
    ("tan(", "self: grad * (1 + result.pow(2)).conj()", "self: grad * (1 + result.pow(2))", MISSING_CONJ),
    (
        "asin(",
        "self: grad * (-self * self + 1).rsqrt().conj()",
        "self: grad * (-self * self + 1).rsqrt()",
        MISSING_CONJ,
    ),
    ("expm1(", "self: grad * (result.conj() + 1)", "self: grad * (result + 1)", MISSING_CONJ),
    ("dot(", "self: grad * tensor.conj()", "self: grad * tensor", MISSING_CONJ),
    ("mv(", "self: grad.ger(vec.conj())", "self: grad.ger(vec)", MISSING_CONJ),
    # wrong reductions
    (
        "mean.dim(",
        "self: mean_backward(grad, self.sym_sizes(), dim, self.sym_numel(), keepdim)",
        "self: sum_backward(grad, self.sym_sizes(), dim, keepdim)",
        WRONG_REDUCTION,
    ),
    (
        "cumsum(",
        "self: cumsum_backward(grad.to(self.scalar_type()), dim)",
        "self: grad.to(self.scalar_type()).cumsum(dim)",
        WRONG_REDUCTION,
    ),
    (
        "sum(Tensor self, *, ScalarType? dtype=None)",
        "self: grad.expand_symint(self.sym_sizes())",
        "self: grad.expand_symint(self.sym_sizes()) / self.numel()",
        WRONG_REDUCTION,
    ),
    # swapped inputs of two-input ops
    ("hypot(", "self: grad * self / result", "self: grad * other / result", SWAPPED_INPUTS),
    (
        "atan2(",
        "self, other: atan2_backward(grad, self, other, grad_input_mask)",
        "self, other: atan2_backward(grad, other, self, grad_input_mask)",
        SWAPPED_INPUTS,
    ),
    ("dot(", "tensor: grad * self.conj()", "tensor: grad * tensor.conj()", SWAPPED_INPUTS),
    ("xlogy.Tensor(", "other: grad * self / other", "other: grad * other / self", SWAPPED_INPUTS),
    (
        "maximum(",
        "other: at::where(self == other, grad / 2, grad).masked_fill_(self > other, 0)",
        "other: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)",
        SWAPPED_INPUTS,
    ),
    (
        "addcmul(",
        "tensor1: handle_r_to_c(tensor1.scalar_type(), grad * (tensor2 * value).conj())",
        "tensor1: handle_r_to_c(tensor1.scalar_type(), grad * (tensor1 * value).conj())",
        SWAPPED_INPUTS,
    ),
    # forward formulas that disagree with their backward
    (
        "hypot(",
        "result: self_t * self_p / result + other_t * other_p / result",
        "result: self_t * self_p / result - other_t * other_p / result",
        FORWARD_INCONSISTENT,
    ),
    (
        "atan2(",
        "result: (-self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2))",
        "result: (self_p * other_t + other_p * self_t) / (self_p.pow(2) + other_p.pow(2))",
        FORWARD_INCONSISTENT,
    ),
    (
        "dot(",
        "result: at::dot(self_t, tensor_p) + at::dot(self_p, tensor_t)",
        "result: at::dot(self_t, tensor_p)",
        FORWARD_INCONSISTENT,
    ),
    (
        "mm(",
        "result: at::mm(self_t, mat2_p) + at::mm(self_p, mat2_t)",
        "result: at::mm(self_t, mat2_p) - at::mm(self_p, mat2_t)",
        FORWARD_INCONSISTENT,
    ),
    ("mv(", "result: mv(self_t, vec_p) + mv(self_p, vec_t)", "result: mv(self_t, vec_p)", FORWARD_INCONSISTENT),
    (
        "xlogy.Tensor(",
        "result: at::xlogy(self_t, other_p).masked_fill((self_p == 0.) & (other_p <= 0.), 0.) + other_t * self_p / other_p",
        "result: at::xlogy(self_t, other_p).masked_fill((self_p == 0.) & (other_p <= 0.), 0.) - other_t * self_p / other_p",
        FORWARD_INCONSISTENT,
    ),
    (
        "addcmul(",
        "result: self_t + maybe_multiply(tensor1_t * tensor2_p, value) + maybe_multiply(tensor2_t * tensor1_p, value)",
        "result: self_t + maybe_multiply(tensor1_t * tensor1_p, value) + maybe_multiply(tensor2_t * tensor1_p, value)",
        FORWARD_INCONSISTENT,
    ),
)

# the --op names of the entries above
OPS = tuple(dict.fromkeys(entry.split("(")[0] for entry, *_ in MISTAKES))
