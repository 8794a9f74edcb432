"""Seeded C++ mistakes in formulas of the real 2.13 derivatives.yaml (shared by the derivls test and the g++ test).

Each mutation replaces `old` by `new` inside the entry whose `- name:` line is `entry`; `ident` is the
token derivls must point at (its first occurrence in `new`), `code` the diagnostic it must report.
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Seeded:
    code: str
    entry: str
    old: str
    new: str
    ident: str


ABS = "- name: abs(Tensor self) -> Tensor"
ADDBMM = "- name: addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
PUT = "- name: put(Tensor self, Tensor index, Tensor source, bool accumulate=False) -> Tensor"
MATMUL = "- name: matmul(Tensor self, Tensor other) -> Tensor"
LINALG_EIGH = (
    '- name: _linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)'
)
BATCH_NORM_BACKWARD = (
    "- name: native_batch_norm_backward(Tensor grad_out, Tensor input, Tensor? weight, Tensor? running_mean, "
    "Tensor? running_var, Tensor? save_mean, Tensor? save_invstd, bool train, float eps, bool[3] output_mask) "
    "-> (Tensor, Tensor, Tensor)"
)
LERP_SCALAR = "- name: lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"
XLOGY_SCALAR_OTHER = "- name: xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor"
ZETA_SELF_SCALAR = "- name: special_zeta.self_scalar(Scalar self, Tensor other) -> Tensor"
NAN_TO_NUM = "- name: nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"
MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor"
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
EIG = "- name: linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)"
CLAMP_MIN = "- name: clamp_min(Tensor self, Scalar min) -> Tensor"
CONV_TBC = "- name: conv_tbc(Tensor self, Tensor weight, Tensor bias, int pad=0) -> Tensor"
DROPOUT = "- name: _fused_dropout(Tensor self, float p, Generator? generator=None) -> (Tensor, Tensor)"
ACOSH_ = "- name: acosh_(Tensor(a!) self) -> Tensor(a!)"
ADD = "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
LAYER_NORM = (
    "- name: native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)"
)
BATCH_NORM = (
    "- name: native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, "
    "bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)"
)
MPS_CONV_BACKWARD = (
    "- name: mps_convolution_backward(Tensor self, Tensor grad_output, Tensor weight, SymInt[] padding, "
    "SymInt[] stride, SymInt[] dilation, SymInt groups, bool[3] output_mask) -> (Tensor, Tensor, Tensor)"
)
CONSTANT_PAD = "- name: constant_pad_nd(Tensor self, SymInt[] pad, Scalar value=0) -> Tensor"
XLOGY_SCALAR = "- name: xlogy.Scalar_Other(Tensor self, Scalar other) -> Tensor"
PRELU_BACKWARD = "- name: _prelu_kernel_backward(Tensor grad_output, Tensor self, Tensor weight) -> (Tensor, Tensor)"
COMPLEX = "- name: complex(Tensor real, Tensor imag) -> Tensor"
CLAMP = "- name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor"
FOREACH_MINIMUM = "- name: _foreach_minimum.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]"
SUM = "- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"
IM2COL = "- name: im2col(Tensor self, int[2] kernel_size, int[2] dilation, int[2] padding, int[2] stride) -> Tensor"
HARDSWISH_BACKWARD = "- name: hardswish_backward(Tensor grad_output, Tensor self) -> Tensor"
ADDBMM = "- name: addbmm(Tensor self, Tensor batch1, Tensor batch2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
NORMAL_TENSOR_FLOAT = "- name: normal.Tensor_float(Tensor mean, float std=1, *, Generator? generator=None) -> Tensor"
TRANSPOSE = "- name: transpose.int(Tensor(a) self, int dim0, int dim1) -> Tensor(a)"
ERFC = "- name: erfc(Tensor self) -> Tensor"
NORMAL_FLOAT_TENSOR = "- name: normal.float_Tensor(float mean, Tensor std, *, Generator? generator=None) -> Tensor"
GRID = (
    "- name: grid_sampler_2d(Tensor input, Tensor grid, int interpolation_mode, int padding_mode, "
    "bool align_corners) -> Tensor"
)

SEEDED = {
    "helper-typo-forward": Seeded("formula-unknown-name", ABS, "handle_r_to_c(", "handle_r_to_cc(", "handle_r_to_cc"),
    "helper-typo-backward": Seeded(
        "formula-unknown-name",
        MUL,
        "mul_tensor_backward(grad, other",
        "mul_tensor_backwrd(grad, other",
        "mul_tensor_backwrd",
    ),
    "helper-typo-case": Seeded(
        "formula-unknown-name",
        MAX_DIM,
        "value_selecting_reduction_backward_symint",
        "Value_selecting_reduction_backward_symint",
        "Value_selecting_reduction_backward_symint",
    ),
    "method-typo": Seeded("formula-unknown-method", ABS, "grad * self.sgn()", "grad * self.sgnn()", "sgnn"),
    "method-typo-forward": Seeded("formula-unknown-method", ABS, "self_p.sgn()", "self_p.sng()", "sng"),
    "method-typo-on-grad": Seeded("formula-unknown-method", CLAMP_MIN, "grad.options()", "grad.optionz()", "optionz"),
    "optional-method-on-tensor": Seeded(
        "formula-unknown-method", ABS, "grad * self.sgn()", "grad.value() * self.sgn()", "value"
    ),
    "arrayref-method-on-tensor": Seeded("formula-unknown-method", ABS, "grad * self.sgn()", "grad * self.vec()", "vec"),
    "optional-method-on-unpacked-saved-tensor": Seeded(
        "formula-unknown-method",
        LAYER_NORM,
        "weight, bias, grad_input_mask",
        "weight.value(), bias, grad_input_mask",
        "value",
    ),
    "tensor-method-on-optional-forward": Seeded(  # a Tensor? argument the forward formula reads as it is
        "formula-unknown-method",
        BATCH_NORM,
        "bias_t, running_mean,",
        "bias_t, running_mean.contiguous(),",
        "contiguous",
    ),
    "arrayref-method-on-saved-vector": Seeded(  # the node saves a SymInt[] as a std::vector<c10::SymInt>
        "formula-unknown-method",
        MPS_CONV_BACKWARD,
        "std::vector<c10::SymInt>(padding.size(), 0)",
        "std::vector<c10::SymInt>(padding.vec().size(), 0)",
        "vec",
    ),
    "tensor-method-on-forward-arrayref": Seeded(  # the kernel's SymInt[] is a c10::SymIntArrayRef
        "formula-unknown-method",
        CONSTANT_PAD,
        "constant_pad_nd_symint(self_t, pad, 0)",
        "constant_pad_nd_symint(self_t, pad.sizes(), 0)",
        "sizes",
    ),
    "tensor-method-on-scalar": Seeded(  # a Scalar argument is a c10::Scalar, not a Tensor
        "formula-unknown-method", XLOGY_SCALAR, "other.toDouble() > 0.", "other.item<double>() > 0.", "item"
    ),
    "symint-sizes-to-an-int-method": Seeded(  # Tensor::expand takes IntArrayRef; expand_symint SymIntArrayRef
        "formula-symint-to-int", SUM, "grad.expand_symint(self.sym_sizes())", "grad.expand(self.sym_sizes())", "expand"
    ),
    "int-list-to-a-symint-function": Seeded(  # col2im_symint's output_size is a SymIntArrayRef
        "formula-int-to-symint",
        IM2COL,
        "col2im_symint(grad, {self.sym_size(-2), self.sym_size(-1)}, kernel_size,",
        "col2im_symint(grad, kernel_size, kernel_size,",
        "kernel_size",
    ),
    "symint-sizes-to-an-int-function": Seeded(
        "formula-symint-to-int",
        NORMAL_TENSOR_FLOAT,
        "at::zeros_symint(mean.sym_sizes(), grad.options())",
        "at::zeros(mean.sym_sizes(), grad.options())",
        "zeros",
    ),
    "symint-list-argument-to-an-int-function-forward": Seeded(  # a forward SymInt[]: a c10::SymIntArrayRef
        "formula-symint-to-int",
        CONSTANT_PAD,
        "constant_pad_nd_symint(self_t, pad, 0)",
        "constant_pad_nd(self_t, pad, 0)",
        "constant_pad_nd",
    ),
    "aten-function-too-few-arguments": Seeded(  # at::logical_and(const Tensor & self, const Tensor & other)
        "formula-argument-count",
        HARDSWISH_BACKWARD,
        "at::where(at::logical_and(-3.0 < self, self < 3.0), grad * grad_output",
        "at::where(at::logical_and(-3.0 < self), grad * grad_output",
        "logical_and",
    ),
    "tensor-method-too-many-arguments-forward": Seeded(  # Tensor::bmm(const Tensor & mat2)
        "formula-argument-count", ADDBMM, "batch1_t.bmm(batch2_p).sum(0)", "batch1_t.bmm(batch2_p, alpha).sum(0)", "bmm"
    ),
    "optional-method-on-a-call-result": Seeded(  # Tensor::unsqueeze returns a Tensor, not an optional
        "formula-unknown-method",
        ADDBMM,
        "maybe_multiply(grad.unsqueeze(0).expand_symint(",
        "maybe_multiply(grad.unsqueeze(0).value().expand_symint(",
        "value",
    ),
    "optional-method-on-grads-element": Seeded(  # grads[k] is a Tensor (maybe undefined), not an optional
        "formula-unknown-method",
        PRELU_BACKWARD,
        "grads[1].defined() ? at::where(self >= 0, at::zeros({}, self.options())",
        "grads[1].has_value() ? at::where(self >= 0, at::zeros({}, self.options())",
        "has_value",
    ),
    "tensor-method-on-foreach-scalar-element": Seeded(  # a foreach entry's Scalar[] holds c10::Scalars
        "formula-unknown-method",
        FOREACH_MINIMUM,
        ".masked_fill_(self[i] > scalars[i], 0)",
        ".masked_fill_(self[i] > scalars[i].item(), 0)",
        "item",
    ),
    "arrow-typo-on-optional-forward": Seeded(
        "formula-unknown-method", BATCH_NORM, "bias_t, running_mean,", "bias_t, running_mean->sizez(),", "sizez"
    ),
    "arrow-on-tensor-forward": Seeded("formula-unknown-method", ABS, "self_p.sgn()", "self_p->sgn()", "sgn"),
    "helper-too-many-arguments": Seeded(
        "formula-argument-count",
        MUL,
        "mul_tensor_backward(grad, other, self.scalar_type())",
        "mul_tensor_backward(grad, other, self.scalar_type(), grad)",
        "mul_tensor_backward",
    ),
    "helper-too-few-arguments-forward": Seeded(
        "formula-argument-count",
        ABS,
        "handle_r_to_c(result.scalar_type(), self_t",
        "handle_r_to_c(self_t",
        "handle_r_to_c",
    ),
    "method-on-int": Seeded(
        "formula-unknown-method", MAX_DIM, "(grad, dim, indices", "(grad, dim.size(), indices", "size"
    ),
    "method-typo-scalar-type": Seeded(
        "formula-unknown-method", MUL, "self.scalar_type()", "self.scalartype()", "scalartype"
    ),
    "undefined-variable": Seeded(
        "formula-unknown-name", MUL, "grad, other, self.scalar_type()", "grad, othr, self.scalar_type()", "othr"
    ),
    "undefined-variable-forward": Seeded(
        "formula-unknown-name", MUL, "other_t * self_p", "other_tt * self_p", "other_tt"
    ),
    "undefined-variable-alpha": Seeded(
        "formula-unknown-name", ADD, "maybe_multiply(grad, alpha.conj())", "maybe_multiply(grad, alfa.conj())", "alfa"
    ),
    "grad-in-forward": Seeded(
        "formula-grad-in-forward", ABS, "self_t.conj() * self_p.sgn()", "self_t.conj() * grad.sgn()", "grad"
    ),
    "grads-in-forward": Seeded(
        "formula-grad-in-forward", EIG, "linalg_eig_jvp(self_t,", "linalg_eig_jvp(self_t + grads[0],", "grads"
    ),
    "tangent-in-backward": Seeded(
        "formula-tangent-in-backward", ABS, "grad * self.sgn()", "grad * self_t.sgn()", "self_t"
    ),
    "primal-in-backward": Seeded(
        "formula-tangent-in-backward",
        MUL,
        "grad, other, self.scalar_type()",
        "grad, other_p, self.scalar_type()",
        "other_p",
    ),
    "result-where-named-forward": Seeded(
        "formula-result-not-output",
        MAX_DIM,
        "gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "gather_with_keepdimed_indices(self_t, dim, result, keepdim)",
        "result",
    ),
    "result-where-named-backward": Seeded(
        "formula-result-not-output",
        EIG,
        "eigenvalues, eigenvectors, /*is_hermitian=*/false))",
        "result, eigenvectors, /*is_hermitian=*/false))",
        "result",
    ),
    "result-where-several": Seeded(
        "formula-result-not-output",
        DROPOUT,
        "_fused_dropout_backward(grad, result1, p)",
        "_fused_dropout_backward(grad, result, p)",
        "result",
    ),
    "at-typo": Seeded(
        "formula-unknown-qualified", CLAMP_MIN, "at::scalar_tensor(", "at::scalar_tensr(", "scalar_tensr"
    ),
    "at-typo-forward": Seeded(
        "formula-unknown-qualified", EIG, "linalg_eig_jvp(self_t", "at::linalg_eig_jvpp(self_t", "linalg_eig_jvpp"
    ),
    "std-typo": Seeded(
        "formula-unknown-qualified",
        CONV_TBC,
        "std::tuple<Tensor, Tensor, Tensor>()",
        "std::tupel<Tensor, Tensor, Tensor>()",
        "tupel",
    ),
    "grad-input-mask-single": Seeded(
        "formula-grad-input-mask-single",
        ABS,
        "grad * self.sgn()",
        "grad * self.sgn() * grad_input_mask[0]",
        "grad_input_mask",
    ),
    "unbalanced-paren": Seeded("formula-unbalanced", ABS, "grad * self.sgn()", "grad * (self.sgn()", "("),
    "unbalanced-close": Seeded(
        "formula-unbalanced", MUL, "other_t * self_p + self_t * other_p", "other_t * self_p) + self_t * other_p", ")"
    ),
    "unterminated-string": Seeded(
        "formula-unterminated",
        ACOSH_,
        'not_implemented("inplace version of acosh")',
        'not_implemented("inplace version of acosh)',
        '"inplace version of acosh)',
    ),
    "adl-no-tensor": Seeded(
        "formula-adl-no-tensor", CLAMP_MIN, "at::scalar_tensor(", "scalar_tensor(", "scalar_tensor"
    ),
    "unknown-in-lambda": Seeded(
        "formula-unknown-name",
        "- name: roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor",
        "[](c10::SymInt i){return -i;}",
        "[](c10::SymInt i){return -j;}",
        "j",
    ),
    "helper-in-forward-typo": Seeded(
        "formula-unknown-name", EIG, "linalg_eig_jvp(self_t", "linalg_eig_jpv(self_t", "linalg_eig_jpv"
    ),
    "undefined-output": Seeded(
        "formula-unknown-name",
        MAX_DIM,
        "gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "gather_with_keepdimed_indices(self_t, dim, indice, keepdim)",
        "indice",
    ),
    "c10-typo": Seeded(
        "formula-unknown-qualified", EIG, "linalg_eig_jvp(self_t", "linalg_eig_jvp((c10::irangee(1), self_t)", "irangee"
    ),
    "tangent-of-nondifferentiable": Seeded(
        "formula-unknown-name",
        MAX_DIM,
        "gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "gather_with_keepdimed_indices(self_t, dim_t, indices, keepdim)",
        "dim_t",
    ),
    "helper-tensor-for-a-number": Seeded(  # _fused_dropout_backward(const Tensor&, const Tensor&, double p)
        "formula-argument-type",
        DROPOUT,
        "_fused_dropout_backward(grad, result1, p)",
        "_fused_dropout_backward(grad, result1, self)",
        "self",
    ),
    "aten-function-bool-for-a-tensor": Seeded(  # …(const at::Tensor & grad, int64_t dim, const at::Tensor & indices…
        "formula-argument-type",
        MAX_DIM,
        "value_selecting_reduction_backward_symint(grad, dim, indices",
        "value_selecting_reduction_backward_symint(grad, dim, keepdim",
        "keepdim",
    ),
    "tensor-method-tensor-for-an-int": Seeded(  # Tensor::transpose(int64_t dim0, int64_t dim1)
        "formula-argument-type", TRANSPOSE, "grad.transpose(dim0, dim1)", "grad.transpose(self, dim1)", "self"
    ),
    "helper-bool-for-a-tensor-forward": Seeded(  # gather_with_keepdimed_indices(…, const Tensor& indices, bool)
        "formula-argument-type",
        MAX_DIM,
        "gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "gather_with_keepdimed_indices(self_t, dim, keepdim, keepdim)",
        "keepdim",
    ),
    "adl-no-at-argument": Seeded(  # (c10::SymIntArrayRef, c10::TensorOptions): nothing leads into at::
        "formula-adl-no-tensor", NORMAL_FLOAT_TENSOR, "at::zeros_symint(", "zeros_symint(", "zeros_symint"
    ),
    "math-macro-for-a-tensor": Seeded(  # at::sqrt(const at::Tensor &) of the double M_PI
        "formula-argument-type", ERFC, "sqrt(M_PI)", "at::sqrt(M_PI)", "M_PI"
    ),
    "conditional-tensor-or-number": Seeded(  # operands to ?: have different types int and at::Tensor
        "formula-conditional-types",
        "- name: div.Scalar_mode(Tensor self, Scalar other, *, str? rounding_mode) -> Tensor",
        "? result.new_zeros_symint(result.sym_sizes()) :",
        "? 0 :",
        "?",
    ),
    "scalar-minus-number": Seeded(  # no match for 'operator-' (operand types are 'int' and 'const c10::Scalar')
        "formula-operand-type", LERP_SCALAR, "grad * (1 - weight.toDouble())", "grad * (1 - weight)", "-"
    ),
    "scalar-compared-to-number": Seeded(  # no match for 'operator>' (operand types are 'const c10::Scalar' and 'double')
        "formula-operand-type", XLOGY_SCALAR_OTHER, "other.toDouble() > 0.", "other > 0.", ">"
    ),
    "scalar-plus-number": Seeded(
        "formula-operand-type", ZETA_SELF_SCALAR, "special_zeta(self.toDouble() + 1.", "special_zeta(self + 1.", "+"
    ),
    "optional-times-tensor": Seeded(  # no match for 'operator*' (std::optional<double> and at::Tensor)
        "formula-operand-type", NAN_TO_NUM, "grad * at::isfinite(self)", "nan * grad * at::isfinite(self)", "*"
    ),
    "tensor-for-two-inputs": Seeded(  # no matching function for call to 'get<0>(at::Tensor&)'
        "formula-result-type",
        MATMUL,
        "matmul_backward(grad, self, other, grad_input_mask)",
        "at::matmul(grad, other)",
        "matmul",
    ),
    "tuple-for-one-output": Seeded(  # no match for 'operator=' (std::optional<at::Tensor> and std::tuple<…>)
        "formula-result-type",
        ABS,
        "handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())",
        "polar_backward(self_t, result)",
        "polar_backward",
    ),
    "number-for-one-input": Seeded(  # no matching function for call to 'copy_range(…, double&)'
        "formula-result-type", ABS, "grad * self.sgn()", "M_PI", "M_PI"
    ),
    # Issue 49: for one Tensor input Functions.cpp writes `any_grad_defined ? (<formula>) : Tensor()`:
    # operands to ?: have different types 'const variable_list' / 'int64_t' / … and 'at::Tensor'
    "tensor-list-for-one-tensor-input": Seeded("formula-result-type", ABS, "grad * self.sgn()", "grads", "grads"),
    "int-for-one-tensor-input": Seeded("formula-result-type", ABS, "grad * self.sgn()", "grad.dim()", "dim"),
    "symint-list-for-one-tensor-input": Seeded(
        "formula-result-type", ABS, "grad * self.sgn()", "grad.sym_sizes()", "sym_sizes"
    ),
    "bool-for-one-tensor-input": Seeded(
        "formula-result-type", ABS, "grad * self.sgn()", "self.is_complex()", "is_complex"
    ),
    "int-for-one-tensor-output": Seeded(  # no match for 'operator=' (std::optional<at::Tensor> and int64_t)
        "formula-result-type",
        ABS,
        "handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())",
        "self_t.dim()",
        "dim",
    ),
    "tensor-for-two-outputs": Seeded(
        "formula-result-type",
        LINALG_EIGH,
        "linalg_eig_jvp(A_t, eigenvalues, eigenvectors, /*is_hermitian=*/true)",
        "at::matmul(A_t, eigenvectors)",
        "matmul",
    ),
    "two-tuple-for-three-inputs": Seeded(  # static assertion failed: tuple index must be in range
        "formula-result-type",
        BATCH_NORM_BACKWARD,
        "batchnorm_double_backward(input, weight, grads[0], grads[1], "
        "grads[2], grad_out, running_mean, running_var, train, eps, save_mean, save_invstd, grad_input_mask)",
        "_euclidean_dist_backward(grads[1], input, weight, grad_out)",
        "_euclidean_dist_backward",
    ),
    "python-power": Seeded(  # invalid type argument of unary '*' (have 'int')
        "formula-python-syntax", ABS, "grad * self.sgn()", "grad * self.sgn() ** 2", "**"
    ),
    "python-floor-division": Seeded(  # the comment takes the ';': expected ';' before 'copy_range'
        "formula-python-syntax",
        PUT,
        "grad.take(index).reshape_as(source)",
        "grad.take(index).reshape_as(source) // 2",
        "//",
    ),
    "python-conditional": Seeded(  # expected ';' before 'if'
        "formula-python-syntax",
        PUT,
        "accumulate ? grad : grad.put(index, zeros_like(source), false)",
        "grad if accumulate else grad.put(index, zeros_like(source), false)",
        "if",
    ),
    "python-namespace-dot": Seeded(  # expected primary-expression before '.' token
        "formula-python-syntax",
        PUT,
        "self_t.put(index, source_t, accumulate)",
        "torch.put(self_t, index, source_t, accumulate)",
        "torch",
    ),
    "member-not-called": Seeded(  # invalid use of non-static member function 'at::Tensor at::Tensor::sgn() const'
        "formula-member-not-called", ABS, "grad * self.sgn()", "grad * self.sgn", "sgn"
    ),
    "python-list": Seeded(  # expected '{' before ')' token (a lambda's introducer)
        "formula-python-syntax",
        ADDBMM,
        "expand_symint({ batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2) })",
        "expand_symint([batch1.sym_size(0), batch1.sym_size(1), batch2.sym_size(2)])",
        "[",
    ),
    "local-called": Seeded(  # no match for call to '(const at::Tensor) (const at::Tensor&)'
        "formula-local-called", COMPLEX, "at::real(grad)", "real(grad)", "real"
    ),
    "local-called-for-std-max": Seeded(  # no match for call to '(const std::optional<c10::Scalar>) (…)'
        "formula-local-called",
        CLAMP,
        "clamp_backward(grad, self, min, max)",
        "clamp_backward(grad, self, min, max(min, 1))",
        "max",
    ),
    "local-called-in-forward": Seeded(  # an output is a local of the VariableType kernel too
        "formula-local-called",
        MAX_DIM,
        "gather_with_keepdimed_indices(self_t, dim, indices, keepdim)",
        "gather_with_keepdimed_indices(self_t, dim, indices(dim), keepdim)",
        "indices",
    ),
    "python-truthiness": Seeded(  # could not convert 'grad' from 'const at::Tensor' to 'bool'
        "formula-not-bool",
        BATCH_NORM,
        "grad.defined() ? native_batch_norm_backward(",
        "grad ? native_batch_norm_backward(",
        "grad",
    ),
}
