"""Seeded mathematical mistakes: formulas the build accepts and that are wrong.

The last four kinds (WHERE_SAMPLES_MISS) are wrong only where OpInfo's own samples do not go: at a special
value (0, where a shipped helper handles a removable singularity), for negative real parts of complex inputs,
for complex tangents, for a Scalar argument away from its default; gradcheck reaches them with the samples it
makes from OpInfo's (the child's variants). Three more (WHERE_STRUCTURE_HIDES) are wrong only for a call's structure
OpInfo's samples of the entry do not have: a negative dim, keepdim=True, an int / optional argument away from its
default (the child's structure_variants, and OpInfo's reference_inputs).

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
# the kinds OpInfo's own samples miss: wrong only where the samples do not go
SPECIAL_VALUE = "wrong only at a special value (0, a removable singularity)"
OFF_POSITIVE_AXIS = "complex: wrong only off the positive real axis (negative real parts)"
COMPLEX_TANGENT = "forward formula wrong only for complex tangents"
DEFAULT_SCALAR = "a Scalar argument forgotten (right only at its default, alpha = 1)"
WHERE_SAMPLES_MISS = (SPECIAL_VALUE, OFF_POSITIVE_AXIS, COMPLEX_TANGENT, DEFAULT_SCALAR)
# the kinds the call's structure hides: OpInfo's samples leave a dim non-negative, keepdim False, an int / optional
# argument at its default (the child's structure_variants and OpInfo's reference_inputs reach them)
NEGATIVE_DIM = "a negative dim wrapped against the reduced output's rank (right for dims >= 0)"
KEEPDIM = "keepdim ignored (right only for keepdim=False)"
DEFAULT_ARGUMENT = "an int / optional argument forgotten (right only at its default: reduction, correction, dims)"
WHERE_STRUCTURE_HIDES = (NEGATIVE_DIM, KEEPDIM, DEFAULT_ARGUMENT)
# the kinds at the edges of an op's domain (issue 52): wrong only at inputs the child's edge samples make
# (derivls/gradcheck/child/edges.py), each kept where torch's own gradient agrees with finite differences
TIE = "wrong only at exact ties (the gradient shared among equal values)"
ZERO_SPREAD = "wrong only at a zero spread (a constant input)"
ZERO_SCALAR = "wrong only for a Scalar argument at 0"
EMPTY_DIMS = "wrong only for an empty dim list (every dim)"
EDGE_PARAMETER = "wrong only for a Scalar argument negative or past its usual range"
MIXED_DTYPES = "wrong only with one operand complex and the other real"
SPECIAL_INDEX = "wrong only at special indices (repeated, equal to padding_idx / ignore_index)"
AT_THE_EDGES = (TIE, ZERO_SPREAD, ZERO_SCALAR, EMPTY_DIMS, EDGE_PARAMETER, MIXED_DTYPES, SPECIAL_INDEX)

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
    # wrong only at a special value: a removable singularity at 0 the shipped helper handles
    (
        "sinc(",
        "self: sinc_backward(grad, self)",
        "self: grad * ((M_PI * self * (M_PI * self).cos() - (M_PI * self).sin()) / (M_PI * self * self)).conj()",
        SPECIAL_VALUE,
    ),
    (
        "special_i1(",
        "self: i1_backward(grad, self, result)",
        "self: grad * (at::special_i0(self) - result / self)",
        SPECIAL_VALUE,
    ),
    (
        "special_i1e(",
        "self: i1e_backward(grad, self, result)",
        "self: grad * (at::special_i0e(self) - result * (self.sgn() + self.reciprocal()))",
        SPECIAL_VALUE,
    ),
    ("i0(", "self: grad * at::special_i1(self)", "self: grad * self * (at::special_i1(self) / self)", SPECIAL_VALUE),
    (
        "pow.Tensor_Scalar(",
        "self: pow_backward(grad, self, exponent)",
        "self: grad * (exponent * result / self).conj()",
        SPECIAL_VALUE,
    ),
    # (the naive products' backward, wrong where an element is 0)
    (
        "prod(Tensor self, *, ScalarType? dtype=None)",
        "self: prod_backward(grad, self.to(grad.scalar_type()), result)",
        "self: grad * (result / self).conj()",
        SPECIAL_VALUE,
    ),
    (
        "cumprod(",
        "self: cumprod_backward(grad.to(self.scalar_type()), self, dim, result)",
        "self: (grad.to(self.scalar_type()) * result.conj()).flip(dim).cumsum(dim).flip(dim) / self.conj()",
        SPECIAL_VALUE,
    ),
    # complex: right on the positive real axis, wrong for negative real parts (sqrt(z * z) == z only there)
    (
        "acosh(",
        'self: "self.is_complex() ? grad * ((self + 1).rsqrt() * (self - 1).rsqrt()).conj() : grad * (self * self - 1).rsqrt()"',
        "self: grad * (self * self - 1).rsqrt().conj()",
        OFF_POSITIVE_AXIS,
    ),
    (
        "log2(",
        "self: grad / (self.conj() * 0.6931471805599453)",
        "self: grad / ((self * self).sqrt().conj() * 0.6931471805599453)",
        OFF_POSITIVE_AXIS,
    ),
    (
        "log10(",
        "self: grad / (self.conj() * 2.3025850929940456)",
        "self: grad / ((self * self).sqrt().conj() * 2.3025850929940456)",
        OFF_POSITIVE_AXIS,
    ),
    (
        "asinh(",
        "self: grad * (self.pow(2) + 1).rsqrt().conj()",
        "self: grad * ((self.pow(2) + 1) * (self.pow(2) + 1)).pow(-0.25).conj()",
        OFF_POSITIVE_AXIS,
    ),
    # forward formulas wrong only for complex tangents (a real tangent is its own conjugate)
    (
        "abs(",
        "result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())",
        "result: handle_r_to_c(result.scalar_type(), self_t * self_p.sgn())",
        COMPLEX_TANGENT,
    ),
    (
        "angle(",
        "result: handle_r_to_c(result.scalar_type(), angle_backward(self_t.conj(), self_p).conj())",
        "result: handle_r_to_c(result.scalar_type(), angle_backward(self_t, self_p).conj())",
        COMPLEX_TANGENT,
    ),
    (
        "sgn(",
        "result: sgn_backward(self_p, self_t, result)",
        "result: sgn_backward(self_p, self_t.conj(), result)",
        COMPLEX_TANGENT,
    ),
    (
        "vdot(",
        "result: at::vdot(self_t, other_p) + at::vdot(self_p, other_t)",
        "result: at::dot(self_t, other_p) + at::vdot(self_p, other_t)",
        COMPLEX_TANGENT,
    ),
    (
        "prod(Tensor self, *, ScalarType? dtype=None)",
        "result: (prod_backward(at::ones({}, result.options()).expand_as(result), self_p.to(result.scalar_type()), result) * self_t.conj()).sum().conj()",
        "result: (prod_backward(at::ones({}, result.options()).expand_as(result), self_p.to(result.scalar_type()), result) * self_t).sum().conj()",
        COMPLEX_TANGENT,
    ),
    (
        "bmm(",
        "result: self_t.bmm(mat2_p) + self_p.bmm(mat2_t)",
        "result: self_t.conj().bmm(mat2_p) + self_p.bmm(mat2_t)",
        COMPLEX_TANGENT,
    ),
    (
        "linalg_cross(",
        'result: "at::linalg_cross(self_t, other_p, dim) + at::linalg_cross(self_p, other_t, dim)"',
        'result: "at::linalg_cross(self_t.conj(), other_p, dim) + at::linalg_cross(self_p, other_t, dim)"',
        COMPLEX_TANGENT,
    ),
    # a Scalar argument forgotten: right only at its default, which OpInfo's samples mostly leave it at
    (
        "add.Tensor(",
        "other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))",
        "other: handle_r_to_c(other.scalar_type(), grad)",
        DEFAULT_SCALAR,
    ),
    ("sub.Tensor(", "result: self_t - maybe_multiply(other_t, alpha)", "result: self_t - other_t", DEFAULT_SCALAR),
    (
        "rsub.Tensor(",
        "self: handle_r_to_c(self.scalar_type(), maybe_multiply(-grad, alpha.conj()))",
        "self: handle_r_to_c(self.scalar_type(), -grad)",
        DEFAULT_SCALAR,
    ),
    (
        "addcdiv(",
        "tensor1: handle_r_to_c(tensor1.scalar_type(), grad * (value / tensor2).conj())",
        "tensor1: handle_r_to_c(tensor1.scalar_type(), grad * (1 / tensor2).conj())",
        DEFAULT_SCALAR,
    ),
    (
        "addcmul(",
        "tensor2: handle_r_to_c(tensor2.scalar_type(), grad * (tensor1 * value).conj())",
        "tensor2: handle_r_to_c(tensor2.scalar_type(), grad * tensor1.conj())",
        DEFAULT_SCALAR,
    ),
    ("addmm(", "self: maybe_multiply(grad, beta.conj())", "self: grad", DEFAULT_SCALAR),
    ("addmv(", "mat: maybe_multiply(grad.ger(vec.conj()), alpha.conj())", "mat: grad.ger(vec.conj())", DEFAULT_SCALAR),
    (
        "addr(",
        "vec1: maybe_multiply(grad.mv(vec2.conj()), alpha.conj())",
        "vec1: maybe_multiply(grad.mv(vec2.conj()), alpha)",
        DEFAULT_SCALAR,
    ),
    (
        "baddbmm(",
        "batch2: maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad), alpha.conj())",
        "batch2: maybe_multiply(batch1.transpose(1, 2).conj().bmm(grad), alpha)",
        DEFAULT_SCALAR,
    ),
    (
        "elu(",
        "self: elu_backward(grad, alpha, scale, input_scale, /* is_result */ false, self)",
        "self: elu_backward(grad, alpha, scale, 1, /* is_result */ false, self)",
        DEFAULT_SCALAR,
    ),
    (
        "celu(",
        "self: elu_backward(grad, alpha, 1, 1.0/alpha.toFloat(), /* is_result */ false, self)",
        "self: elu_backward(grad, alpha, 1, 1.0, /* is_result */ false, self)",
        DEFAULT_SCALAR,
    ),
    (
        "softplus(",
        "self: softplus_backward(grad, self, beta, threshold)",
        "self: softplus_backward(grad, self, 1, threshold)",
        DEFAULT_SCALAR,
    ),
    (
        "leaky_relu(",
        "self: leaky_relu_backward(grad, self, negative_slope, false)",
        "self: leaky_relu_backward(grad, self, 0.01, false)",
        DEFAULT_SCALAR,
    ),
    (
        "hardtanh(",
        "self: hardtanh_backward(grad, self, min_val, max_val)",
        "self: hardtanh_backward(grad, self, -1, 1)",
        DEFAULT_SCALAR,
    ),
    (
        "huber_loss(",
        "self: huber_loss_backward(grad, self, target, reduction, delta)",
        "self: huber_loss_backward(grad, self, target, reduction, 1.0)",
        DEFAULT_SCALAR,
    ),
    (
        "softshrink(",
        "self: softshrink_backward(grad, self, lambd)",
        "self: softshrink_backward(grad, self, 0.5)",
        DEFAULT_SCALAR,
    ),
    # a negative dim wrapped against the output's rank: after a keepdim=False reduction the output has one dimension
    # fewer, so -1 there is not -1 of the input (the fixes wrap against the input's rank, as restore_reduced_dims
    # and unsqueeze_multiple do); OpInfo's samples of these overloads pass dims >= 0 only
    (
        "max.dim(",
        "self: value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)",
        "self: value_selecting_reduction_backward_symint(grad, at::maybe_wrap_dim(dim, grad.dim()), indices, self.sym_sizes(), keepdim)",
        NEGATIVE_DIM,
    ),
    (
        "min.dim(",
        "values: gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "values: gather_with_keepdimed_indices(self_t, at::maybe_wrap_dim(dim, indices.dim()), indices, keepdim)",
        NEGATIVE_DIM,
    ),
    (
        "prod.dim_int(",
        "self: prod_backward(grad, self.to(grad.scalar_type()), result, dim, keepdim)",
        'self: "prod_backward(grad, self.to(grad.scalar_type()), result, dim < 0 ? dim + result.dim() : dim, keepdim)"',
        NEGATIVE_DIM,
    ),
    # keepdim ignored by a forward formula (its tangent has the keepdim=False shape); prod's samples never keep dims
    (
        "prod.dim_int(",
        "result: (prod_backward(at::ones({}, result.options()).expand_as(result), self_p.to(result.scalar_type()), result, dim, keepdim) * self_t.conj()).sum(dim, keepdim).conj()",
        "result: (prod_backward(at::ones({}, result.options()).expand_as(result), self_p.to(result.scalar_type()), result, dim, keepdim) * self_t.conj()).sum(dim).conj()",
        KEEPDIM,
    ),
    # an int argument taken at its default: a loss's reduction as Mean (OpInfo's multi-element samples of
    # binary_cross_entropy leave it at Mean), diag_embed's dims as -2, -1 (only its reference_inputs move them)
    (
        "binary_cross_entropy(",
        "self: binary_cross_entropy_backward(grad, self, target, weight, reduction)",
        "self: binary_cross_entropy_backward(grad, self, target, weight, at::Reduction::Mean)",
        DEFAULT_ARGUMENT,
    ),
    (
        "binary_cross_entropy(",
        "target: binary_cross_entropy_target_backward(grad, self, target, weight, reduction)",
        "target: binary_cross_entropy_target_backward(grad, self, target, weight, at::Reduction::Mean)",
        DEFAULT_ARGUMENT,
    ),
    ("diag_embed(", "self: grad.diagonal(offset, dim1, dim2)", "self: grad.diagonal(offset, -2, -1)", DEFAULT_ARGUMENT),
    # an optional Scalar taken at its default: Bessel's correction hard-coded (the formulas of unbiased=True, from
    # before `correction` was an argument); the samples pass correction=1 or None, which is 1
    (
        "var.correction(",
        "self: var_backward(grad, self, dim, correction, keepdim)",
        "self: var_backward(grad, self, dim, c10::Scalar(1), keepdim)",
        DEFAULT_ARGUMENT,
    ),
    (
        "std.correction(",
        "result: (at::real(var_backward(self_t.conj(), self_p, dim, correction, true).sum(dim.value_or(IntArrayRef({})), keepdim)) / (2. * result)).masked_fill_(result == 0, 0)",
        "result: (at::real(var_backward(self_t.conj(), self_p, dim, c10::Scalar(1), true).sum(dim.value_or(IntArrayRef({})), keepdim)) / (2. * result)).masked_fill_(result == 0, 0)",
        DEFAULT_ARGUMENT,
    ),
    (
        "var_mean.correction(",
        "result0: at::real(var_backward(self_t.conj(), self_p, dim, correction, true).sum(dim.value_or(IntArrayRef({})), keepdim))",
        "result0: at::real(var_backward(self_t.conj(), self_p, dim, c10::Scalar(1), true).sum(dim.value_or(IntArrayRef({})), keepdim))",
        DEFAULT_ARGUMENT,
    ),
    (
        "std_mean.correction(",
        "self: std_mean_backward(grads[0], grads[1], self, result0, dim, correction, keepdim)",
        "self: std_mean_backward(grads[0], grads[1], self, result0, dim, c10::Scalar(1), keepdim)",
        DEFAULT_ARGUMENT,
    ),
    # in-place functions' own formulas, checked through the in-place op on a clone (self: before the write)
    (
        "elu_(",
        "self: elu_backward(grad, alpha, scale, input_scale, /* is_result */ true, result)",
        "self: elu_backward(grad, alpha, 1, input_scale, /* is_result */ true, result)",
        DEFAULT_SCALAR,
    ),
    (
        "elu_(",
        "result: self_t.copy_(elu_backward(original_self_t, alpha, scale, input_scale, /* is_result */ true, result))",
        "result: self_t.copy_(elu_backward(original_self_t, alpha, scale, input_scale, /* is_result */ false, result))",
        FORWARD_INCONSISTENT,
    ),
    (
        "celu_(",
        "self: elu_backward(grad, alpha, 1, 1.0/alpha.toFloat(), /* is_result */ true, result)",
        "self: elu_backward(grad, alpha, 1, 1.0/alpha.toFloat(), /* is_result */ true, self)",
        SWAPPED_INPUTS,
    ),
    (
        "celu_(",
        "result: self_t.copy_(elu_backward(original_self_t, alpha, 1, 1.0/alpha.toFloat(), /* is_result */ true, result))",
        "result: self_t.copy_(-elu_backward(original_self_t, alpha, 1, 1.0/alpha.toFloat(), /* is_result */ true, result))",
        DROPPED_SIGN,
    ),
    # at the edges of an op's domain (issue 52): ties, zero spreads, a zero Scalar, an empty dim list, Scalar
    # arguments past their range, one operand complex and the other real, special indices
    (
        "max(",
        "self: evenly_distribute_backward(grad, self, result)",
        "self: (self == result) * grad",
        TIE,
    ),
    (
        "min(",
        "self: evenly_distribute_backward(grad, self, result)",
        "self: (self == result) * grad",
        TIE,
    ),
    (
        "median(",
        "self: evenly_distribute_backward(grad, self, result)",
        "self: (self == result) * grad",
        TIE,
    ),
    (
        "nanmedian(",
        "self: evenly_distribute_backward(grad, self, result)",
        "self: (self == result) * grad",
        TIE,
    ),
    (
        "max(",
        "result: evenly_read_jvp(self_t, self_p, result)",
        "result: (self_t * (self_p == result)).sum()",
        TIE,
    ),
    (
        "median(",
        "result: evenly_read_jvp(self_t, self_p, result)",
        "result: (self_t * (self_p == result)).sum()",
        TIE,
    ),
    (
        "amax(",
        "self: scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), restore_reduced_dims(result, dim, keepdim) == self, dim)",
        "self: restore_reduced_dims(grad, dim, keepdim) * (restore_reduced_dims(result, dim, keepdim) == self)",
        TIE,
    ),
    (
        "amin(",
        "self: scale_grad_by_count(restore_reduced_dims(grad, dim, keepdim), restore_reduced_dims(result, dim, keepdim) == self, dim)",
        "self: restore_reduced_dims(grad, dim, keepdim) * (restore_reduced_dims(result, dim, keepdim) == self)",
        TIE,
    ),
    (
        "amax(",
        "result: amaxamin_jvp(self_p, self_t, result, dim, keepdim)",
        "result: (self_t * (restore_reduced_dims(result, dim, keepdim) == self_p)).sum(dim, keepdim)",
        TIE,
    ),
    (
        "maximum(",
        "self: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)",
        "self: grad.masked_fill(self < other, 0)",
        TIE,
    ),
    (
        "minimum(",
        "other: at::where(self == other, grad / 2, grad).masked_fill_(self < other, 0)",
        "other: grad.masked_fill(self < other, 0)",
        TIE,
    ),
    (
        "maximum(",
        "result: other_t + at::where(self_p == other_p, at::scalar_tensor(0.5, result.options()), (self_p > other_p).to(result.scalar_type())) * (self_t - other_t)",
        "result: other_t + (self_p > other_p).to(result.scalar_type()) * (self_t - other_t)",
        TIE,
    ),
    (
        "minimum(",
        "result: other_t + at::where(self_p == other_p, at::scalar_tensor(0.5, result.options()), (self_p < other_p).to(result.scalar_type())) * (self_t - other_t)",
        "result: other_t + (self_p < other_p).to(result.scalar_type()) * (self_t - other_t)",
        TIE,
    ),
    (
        "std.correction(",
        "self: std_backward(result, grad, self, dim, correction, keepdim)",
        "self: var_backward(grad / (result * 2), self, dim, correction, keepdim)",
        ZERO_SPREAD,
    ),
    (
        "std_mean.correction(",
        "result0: (at::real(var_backward(self_t.conj(), self_p, dim, correction, true).sum(dim.value_or(IntArrayRef({})), keepdim)) / (2. * result0)).masked_fill_(result0 == 0, 0)",
        "result0: at::real(var_backward(self_t.conj(), self_p, dim, correction, true).sum(dim.value_or(IntArrayRef({})), keepdim)) / (2. * result0)",
        ZERO_SPREAD,
    ),
    (
        "pow.Scalar(",
        "exponent: pow_backward_exponent(grad, self, exponent, result)",
        "exponent: handle_r_to_c(exponent.scalar_type(), grad * (result * at::log(at::scalar_tensor(self, result.options()))).conj())",
        ZERO_SCALAR,
    ),
    (
        "amin(",
        "result: amaxamin_jvp(self_p, self_t, result, dim, keepdim)",
        'result: "dim.empty() ? self_t : amaxamin_jvp(self_p, self_t, result, dim, keepdim)"',
        EMPTY_DIMS,
    ),
    (
        "nansum(",
        "result: at::where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)",
        'result: "dim.has_value() && dim.value().empty() ? at::where(self_p.isnan(), 0, self_t) : at::where(self_p.isnan(), 0, self_t).sum(dim, keepdim, dtype)"',
        EMPTY_DIMS,
    ),
    (
        "dist(",
        "self: norm_backward(grad, self - other, p, result)",
        "self: norm_backward(grad, self - other, std::abs(p.toDouble()), result)",
        EDGE_PARAMETER,
    ),
    (
        "lerp.Scalar(",
        'self: "weight.isComplex() ? grad * (1 - weight.conj().toComplexDouble()) : grad * (1 - weight.toDouble())"',
        'self: "weight.isComplex() ? grad * (1 - weight.conj().toComplexDouble()) : grad * std::max(1 - weight.toDouble(), 0.)"',
        EDGE_PARAMETER,
    ),
    (
        "leaky_relu_backward(",
        "grad_output: leaky_relu_backward(grad, self, negative_slope, false)",
        "grad_output: leaky_relu_backward(grad, self, std::abs(negative_slope.toDouble()), false)",
        EDGE_PARAMETER,
    ),
    (
        "add.Tensor(",
        "self: handle_r_to_c(self.scalar_type(), grad)",
        "self: handle_r_to_c(other.scalar_type(), grad)",
        MIXED_DTYPES,
    ),
    (
        "sub.Tensor(",
        "self: handle_r_to_c(self.scalar_type(), grad)",
        "self: handle_r_to_c(other.scalar_type(), grad)",
        MIXED_DTYPES,
    ),
    (
        "sub.Tensor(",
        "other: handle_r_to_c(other.scalar_type(), maybe_multiply(-grad, alpha.conj()))",
        "other: handle_r_to_c(self.scalar_type(), maybe_multiply(-grad, alpha.conj()))",
        MIXED_DTYPES,
    ),
    (
        "mul.Tensor(",
        "self: mul_tensor_backward(grad, other, self.scalar_type())",
        "self: mul_tensor_backward(grad, other, other.scalar_type())",
        MIXED_DTYPES,
    ),
    (
        "mul.Tensor(",
        "other: mul_tensor_backward(grad, self, other.scalar_type())",
        "other: mul_tensor_backward(grad, self, self.scalar_type())",
        MIXED_DTYPES,
    ),
    (
        "div.Tensor(",
        "self: div_tensor_self_backward(grad, other, self.scalar_type())",
        "self: div_tensor_self_backward(grad, other, other.scalar_type())",
        MIXED_DTYPES,
    ),
    (
        "addcmul(",
        "self: handle_r_to_c(self.scalar_type(), grad)",
        "self: handle_r_to_c(tensor1.scalar_type(), grad)",
        MIXED_DTYPES,
    ),
    # (OpInfo's own samples of gather, take and index_select already repeat indices: these three are caught without
    # the edge samples too; the other 30 mistakes at the edges are not, measured with the child before edges.py)
    (
        "gather(",
        "self: gather_backward(grad, self, dim, index, sparse_grad)",
        "self: zeros_like(self).scatter(dim, index, grad)",
        SPECIAL_INDEX,
    ),
    (
        "take(",
        "self: take_backward(grad, self, index)",
        "self: zeros_like(self).put_(index, grad, false)",
        SPECIAL_INDEX,
    ),
    (
        "index_select(",
        "self: index_select_backward_symint(grad, self.sym_sizes(), dim, index)",
        "self: zeros_like(self).index_copy(dim, index, grad)",
        SPECIAL_INDEX,
    ),
    (
        "embedding_dense_backward(",
        "grad_output: embedding_dense_double_backward_symint(grad, indices, padding_idx)",
        "grad_output: embedding_dense_double_backward_symint(grad, indices, -1)",
        SPECIAL_INDEX,
    ),
    (
        "nll_loss_forward(",
        "self: nll_loss_backward_symint(grad, self, target, weight, reduction, ignore_index, total_weight)",
        "self: nll_loss_backward_symint(grad, self, target, weight, reduction, -100, total_weight)",
        SPECIAL_INDEX,
    ),
    # a formula for AutogradNestedTensor, checked on nested tensors made from the Default formula's samples
    (
        "sum.dim_IntList(",
        "self: _nested_sum_backward(grad, self, dim, keepdim)",
        "self: -_nested_sum_backward(grad, self, dim, keepdim)",
        DROPPED_SIGN,
    ),
)

# the --op names of the entries above
OPS = tuple(dict.fromkeys(entry.split("(")[0] for entry, *_ in MISTAKES))
