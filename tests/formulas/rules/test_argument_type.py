"""The rule in derivls/derivatives/formulas/rules/argument_type.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, AS_STRIDED, CAT, DROPOUT, LAYER_NORM, MAX_DIM, codes, where


def test_a_saved_call_of_an_argument_is_judged_on_the_kernels_type_of_it(scope_of, headers):
    # load_derivatives saves `to_args_scalartypes(tensors)`: VariableType.cpp computes it from its own `tensors`
    backward = scope_of(CAT, "tensors")
    assert codes("cat_tensors_backward(grad, to_args_sizes_symint(tensors), to_args_scalartypes(tensors), dim)",
                 backward, headers) == []  # fmt: skip
    assert where("to_args_scalartypes(dim)", backward, headers) == [("formula-argument-type", "dim")]
    geometry = scope_of(AS_STRIDED, "self")
    assert where("TensorGeometry(size)", geometry, headers) == []  # explicit TensorGeometry(c10::SymIntArrayRef)
    found = resolve("TensorGeometry(storage_offset)", geometry, headers)
    assert [f.code for f in found] == ["formula-argument-type"]
    assert found[0].message.startswith(
        "load_derivatives saves 'TensorGeometry(storage_offset)' for the backward pass, computed in VariableType.cpp "
        "on the kernel's 'storage_offset' (::std::optional<c10::SymInt>): TensorGeometry takes a Tensor, a SymInt[] "
        "or a SymInt"
    )
    # a `Tensor?` is a Tensor in the node, a std::optional in the kernel
    assert where("TensorGeometry(weight)", scope_of(LAYER_NORM, "input, weight, bias"), headers) == [
        ("formula-argument-type", "weight")
    ]
    # a forward formula calls it in VariableType.cpp itself
    assert where("to_args_sizes(dim)", scope_of(CAT, "result"), headers) == [("formula-argument-type", "dim")]
    # zeros_like(x) is saved as a TypeAndSize of the kernel's x (and is no ATen call, so no ADL warning)
    layer_norm = scope_of(LAYER_NORM, "input, weight, bias")
    assert where("zeros_like(weight)", layer_norm, headers) == [("formula-argument-type", "weight")]
    assert where("zeros_like(eps)", layer_norm, headers) == [("formula-argument-type", "eps")]
    assert where("zeros_like(input)", layer_norm, headers) == []


def test_a_template_helper_s_other_parameters_are_typed(scope_of, headers):
    # template <typename T> div_tensor_self_backward(const Tensor& grad, T other, ScalarType self_st,
    #                                                const std::optional<std::string_view>& rounding_mode = nullopt)
    div = scope_of("div.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    assert codes("div_tensor_self_backward(grad, 2, self.scalar_type())", div, headers) == []  # T: anything
    assert where("div_tensor_self_backward(grad, other, self.scalar_type(), 1)", div, headers) == [
        ("formula-argument-type", "1")
    ]


def test_an_arithmetic_operation_is_typed_by_its_operands(scope_of, headers):
    shuffle = scope_of("channel_shuffle(Tensor self, SymInt groups) -> Tensor", "self")
    assert codes("channel_shuffle_symint(grad, grad.sym_size(1) / groups)", shuffle, headers) == []
    # SymInt / SymInt: a SymInt, which no int64_t is made of; SymInt / Tensor: a Tensor
    assert where("channel_shuffle(grad, grad.sym_size(1) / groups)", shuffle, headers) == [
        ("formula-argument-type", "grad.sym_size(1) / groups")
    ]
    assert where("channel_shuffle_symint(grad, grad.sym_size(1) / self)", shuffle, headers) == [
        ("formula-argument-type", "grad.sym_size(1) / self")
    ]
    # a SymInt and a double make a SymFloat, a Scalar and a number no operation at all: not typed
    assert (
        codes("channel_shuffle(grad, grad.sym_size(1) * 0.5) + channel_shuffle(grad, -groups)", shuffle, headers) == []
    )


def test_a_math_constant_is_a_double(scope_of, headers):
    assert where("at::sqrt(M_PI) * grad", scope_of(ABS, "self"), headers) == [("formula-argument-type", "M_PI")]
    assert codes("grad * std::sqrt(M_PI)", scope_of(ABS, "self"), headers) == []


def test_an_argument_that_never_converts_to_its_parameter_is_an_error(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")  # grad, self, indices: at::Tensor; dim: int64_t; keepdim: bool
    real = "value_selecting_reduction_backward_symint(grad, dim, indices, self.sym_sizes(), keepdim)"
    assert codes(real, backward, headers) == []
    # a number where a Tensor is wanted (one overload of that arity: the argument is pointed at)
    found = resolve(real.replace("dim, indices", "dim, dim"), backward, headers)
    assert [(f.code, real.replace("dim, indices", "dim, dim")[f.start : f.end]) for f in found] == [
        ("formula-argument-type", "dim")
    ]
    assert found[0].message.startswith(
        "'dim' (int64_t) does not convert to const at::Tensor &, argument 3 of 'value_selecting_reduction_backward_symint'"
    )
    assert found[0].start == real.index("indices")
    # a Tensor where a number is wanted (an ATen method)
    assert where("grad.transpose(self, dim)", backward, headers) == [("formula-argument-type", "self")]
    # a number where every overload wants a Tensor (at::where has four of 3 arguments: the name is pointed at)
    found = resolve("at::where(dim, grad, self)", backward, headers)
    assert [(f.code, "at::where(dim, grad, self)"[f.start : f.end]) for f in found] == [
        ("formula-argument-type", "where")
    ]
    assert found[0].message.count("argument 1 'dim' cannot be const at::Tensor &") == 4
    # a number where a SymIntArrayRef is wanted (two user-defined conversions), not where an IntArrayRef is
    assert where("grad.expand_symint(dim) + grad.expand(dim)", backward, headers) == [("formula-argument-type", "dim")]
    dropout = scope_of(DROPOUT, "self")  # _fused_dropout_backward(const Tensor& grad, const Tensor& mask, double)
    assert where("_fused_dropout_backward(grad, result1, self)", dropout, headers) == [
        ("formula-argument-type", "self")
    ]


def test_conversions_that_exist_are_not_argument_type_errors(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    fine = (
        "value_selecting_reduction_backward_symint(grad, keepdim, indices, self.sym_sizes(), dim)"  # numbers
        " + at::where(self > 0, grad, 0) + mul(grad, 2) + at::cat(grad) + grad.sum(dim, keepdim)"  # Scalar, TensorList
        ' + not_implemented("x", 0) + grad.expand_symint(self.sym_sizes()) + grad.sum(dim, true, c10::nullopt)'
    )
    assert codes(fine, backward, headers) == []
    assert where('not_implemented("x", 1)', backward, headers) == [("formula-argument-type", "1")]


def test_more_arguments_derivls_types_and_parameters_nothing_converts_them_to(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    # an element of grads, the call of an ATen operator returning a Tensor: Tensors
    assert sorted(where("maybe_multiply(grad, grads[0]) + grad.transpose(at::sum(grad), dim)", backward, headers)) == [
        ("formula-argument-type", "at::sum(grad)"),
        ("formula-argument-type", "grads[0]"),
    ]
    # a c10::SymInt for an int64_t (guard_int / expect_int make one of it)
    select = scope_of("select.int(Tensor(a) self, int dim, SymInt index) -> Tensor(a)", "self")
    assert where("grad.select(dim, index) + grad.select_symint(dim, index)", select, headers) == [
        ("formula-argument-type", "index")
    ]
    # a number for a TensorOptions (made from a ScalarType, a Layout, a Device, a MemoryFormat)
    assert where("zeros_like(grad, 1) + zeros_like(grad, at::kFloat)", backward, headers) == [
        ("formula-argument-type", "1")
    ]


def test_a_scalar_and_the_optional_of_a_value_convert_to_no_number_and_no_int_list(scope_of, headers):
    # c10::Scalar has no conversion operator; std::optional<X> converts to nothing but std::optional<Y>
    norm = scope_of("norm.Scalar(Tensor self, Scalar p=2) -> Tensor", "self")
    assert where("renorm_backward(grad, self, p, 1, p) + renorm_backward(grad, self, p, p, p)", norm, headers) == [
        ("formula-argument-type", "p")
    ]
    norm_dim = scope_of(
        "norm.ScalarOpt_dim(Tensor self, Scalar? p, int[1] dim, bool keepdim=False) -> Tensor", "self"
    )  # norm_backward(Tensor, const Tensor&, const std::optional<Scalar>&, Tensor, IntArrayRef, bool)
    assert codes("norm_backward(grad, self, p, result, dim, keepdim)", norm_dim, headers) == []
    assert where("norm_backward(grad, self, p, result, p, keepdim)", norm_dim, headers) == [
        ("formula-argument-type", "p")
    ]


def test_an_optional_number_or_string_is_neither_a_list_nor_a_number(scope_of, headers):
    upsample = scope_of(
        "upsample_linear1d(Tensor self, SymInt[1] output_size, bool align_corners, float? scales=None) -> Tensor",
        "self",
    )
    fine = "upsample_linear1d_backward_symint(grad, output_size, self.sym_sizes(), align_corners, scales)"
    assert codes(fine, upsample, headers) == []
    assert where(fine.replace("output_size,", "scales,"), upsample, headers) == [("formula-argument-type", "scales")]
    # neither overload of 4 arguments takes it: (…, SymIntArrayRef, bool, optional<double>) and the `.vec` one,
    # (…, OptionalSymIntArrayRef, bool, OptionalArrayRef<double>), whose optional list it does not become either
    assert where("upsample_linear1d_symint(grad, scales, align_corners, scales)", upsample, headers) == [
        ("formula-argument-type", "upsample_linear1d_symint")
    ]
    # (…, const std::optional<std::string_view>& rounding_mode): a string literal, not a number
    assert where('div_tensor_other_backward(grad, self, grad, "floor")', upsample, headers) == []
    assert where("div_tensor_other_backward(grad, self, grad, 1)", upsample, headers) == [
        ("formula-argument-type", "1")
    ]
