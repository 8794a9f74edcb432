"""One test per formula rule, on the scope of a real entry."""

from __future__ import annotations

from dataclasses import replace

import pytest

from derivls.derivatives.formulas.resolve import resolve
from derivls.derivatives.formulas.scope import build_scope

ABS = "abs(Tensor self) -> Tensor"
MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
DROPOUT = "_fused_dropout(Tensor self, float p, Generator? generator=None) -> (Tensor, Tensor)"
LAYER_NORM = (
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)"
)


@pytest.fixture
def scope_of(key_of):
    def make(schema: str, names: str):
        result, section, key = key_of(schema, names)
        return build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)

    return make


def codes(formula, scope, headers):
    return [(f.code, formula[f.start : f.end], f.suggestions[:1]) for f in resolve(formula, scope, headers)]


def where(formula, scope, headers):
    """(code, the text it points at) of each finding."""
    return [(code, text) for code, text, _ in codes(formula, scope, headers)]


def test_a_known_formula_resolves_cleanly(scope_of, headers):
    assert codes("handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())", scope_of(ABS, "result"),
                 headers) == []  # fmt: skip


def test_an_unknown_name_offers_the_closest_names(scope_of, headers):
    assert codes("grad * slef.sgn()", scope_of(ABS, "self"), headers) == [("formula-unknown-name", "slef", ("self",))]


def test_an_unknown_method_offers_the_closest_methods(scope_of, headers):
    assert codes("grad * self.sgnn()", scope_of(ABS, "self"), headers) == [("formula-unknown-method", "sgnn", ("sgn",))]


def test_qualified_names_are_checked_in_at_std_and_c10(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("at::zeroz_like(grad)", scope, headers) == [
        ("formula-unknown-qualified", "zeroz_like", ("zeros_like",))
    ]
    assert codes("std::tupel<Tensor>()", scope, headers)[0][:2] == ("formula-unknown-qualified", "tupel")
    assert codes("at::native::anything(grad) + at::_ops::x::call(grad)", scope, headers) == []


def test_grad_and_grads_are_not_in_a_forward_formula(scope_of, headers):
    scope = scope_of(ABS, "result")
    assert where("grad + grads[0]", scope, headers) == [
        ("formula-grad-in-forward", "grad"), ("formula-grad-in-forward", "grads"),
    ]  # fmt: skip


def test_tangents_and_primals_are_not_in_a_backward_formula(scope_of, headers):
    assert where("grad * self_t + self_p", scope_of(ABS, "self"), headers) == [
        ("formula-tangent-in-backward", "self_t"), ("formula-tangent-in-backward", "self_p"),
    ]  # fmt: skip


def test_result_is_not_an_output_where_outputs_are_named_or_several(scope_of, headers):
    assert codes("result", scope_of(MAX_DIM, "values"), headers) == [
        ("formula-result-not-output", "result", ("values",))
    ]
    assert codes("grad * result", scope_of(DROPOUT, "self"), headers)[0][:2] == ("formula-result-not-output", "result")


def test_grad_input_mask_is_not_in_a_single_input_formula(scope_of, headers):
    assert codes("grad * grad_input_mask[0]", scope_of(ABS, "self"), headers)[0][:2] == (
        "formula-grad-input-mask-single", "grad_input_mask",
    )  # fmt: skip


def test_a_product_in_parentheses_or_an_argument_declares_nothing(scope_of, headers):
    # `(a * b)` and `f(x, a * b)` read like the declaration `T* b`: they are products, and `b` a name to judge
    scope = scope_of(ABS, "self")
    assert where("-grad * (self * slef).conj()", scope, headers) == [("formula-unknown-name", "slef")]
    assert where("mul(grad, self * slef)", scope, headers) == [("formula-unknown-name", "slef")]
    assert where("fmap(grad, [](const Tensor& t){ Tensor& u = t; return u * (Tensor * w); })", scope, headers) == []


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


def test_an_unqualified_aten_call_in_a_forward_formula_needs_no_tensor(scope_of, headers):
    # VariableType.cpp, where forward formulas are compiled, has `using namespace at;`
    assert headers.forward_namespaces >= {"at"}
    assert codes("zeros_symint(self_p.sym_sizes(), self_t.options())", scope_of(ABS, "result"), headers) == []


def test_an_aten_utility_is_found_by_argument_dependent_lookup_on_a_tensor(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("sum_to(grad, self.sym_sizes())", scope, headers) == []  # at::sum_to (ExpandUtils.h)
    assert codes("sum_to(self.sym_sizes(), self.sym_sizes())", scope, headers)[0][:2] == (
        "formula-adl-no-tensor", "sum_to",
    )  # fmt: skip


CAT = "cat(Tensor[] tensors, int dim=0) -> Tensor"
AS_STRIDED = "as_strided(Tensor(a) self, SymInt[] size, SymInt[] stride, SymInt? storage_offset=None) -> Tensor(a)"


def test_every_call_saved_py_replaces_by_an_argument_has_its_types_in_savedcalls():
    from derivls.derivatives.formulas.exprtypes import SAVED_CALLS_OF_ARGUMENTS
    from derivls.derivatives.formulas.savedcalls import CALLS

    assert set(CALLS) == set(SAVED_CALLS_OF_ARGUMENTS)


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


def test_a_saved_call_the_substitution_leaves_in_the_formula_is_reported(scope_of, headers):
    backward = scope_of(CAT, "tensors")
    assert where("to_args_sizes()", backward, headers) == [("formula-argument-count", "to_args_sizes")]
    assert where("to_args_scalartypes(tensors, 1)", backward, headers) == [
        ("formula-argument-count", "to_args_scalartypes")
    ]
    # one argument that is no argument or output: Functions.cpp has no to_args_sizes
    assert where("to_args_sizes(grads)", backward, headers) == [("formula-unknown-name", "to_args_sizes")]
    # TensorGeometry is a type Functions.cpp has: its constructors take 0, 1 or 3 arguments
    geometry = scope_of(AS_STRIDED, "self")
    assert where("TensorGeometry(self, 1)", geometry, headers) == [("formula-argument-count", "TensorGeometry")]
    assert where("TensorGeometry(grad)", geometry, headers) == []
    assert where("at::TensorGeometry()", geometry, headers) == []


def test_a_call_of_a_local_is_reported_with_the_function_it_hides(scope_of, headers):
    backward = scope_of("complex(Tensor real, Tensor imag) -> Tensor", "real")
    assert codes("real(grad)", backward, headers) == [("formula-local-called", "real", ("at::real",))]
    assert codes("at::real(grad) + grad(0)", backward, headers)[0][:2] == ("formula-local-called", "grad")
    clamp = scope_of("clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor", "self")
    found = resolve("clamp_backward(grad, self, min, max(min, 1))", clamp, headers)
    assert [(f.code, f.suggestions) for f in found] == [("formula-local-called", ("at::max", "std::max"))]
    # a forward formula's differentiable input by its base name is load_derivatives' error (forward-uses-base-name)
    forward = scope_of("clamp_min.Tensor(Tensor self, Tensor min) -> Tensor", "result")
    assert codes("where(self_p >= min_p, self_t, min(min_t, self_t))", forward, headers) == []
    assert codes("where(self_p >= min_p, self_t, min_t)", forward, headers) == []


def test_an_aten_name_variable_type_finds_twice_is_ambiguous_in_a_forward_formula_only(scope_of, headers):
    complex_ = "complex(Tensor real, Tensor imag) -> Tensor"
    forward = scope_of(complex_, "result")
    assert codes("complex(real_t, imag_t)", forward, headers) == [
        ("formula-ambiguous-name", "complex", ("at::complex",))
    ]
    assert codes("at::complex(real_t, imag_t)", forward, headers) == []
    # Functions.cpp has no `using namespace at;`: argument-dependent lookup finds at::complex alone
    assert codes("at::imag(complex(grad, grad))", scope_of(complex_, "imag"), headers) == []


def test_fmap_without_template_arguments_takes_an_input_and_a_function(scope_of, headers):
    scope = scope_of(ABS, "self")
    negate = "[](c10::SymInt i){ return -i; }"
    assert where(f"grad.flip(fmap(self.sym_sizes(), {negate}))", scope, headers) == []
    assert where(f"grad.flip(fmap(self.sym_sizes(), {negate}, 1))", scope, headers) == [
        ("formula-argument-count", "fmap")
    ]
    assert where("grad.flip(fmap<int64_t>(self.sym_sizes()))", scope, headers) == []  # fmap<R>(inputs)


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


def test_a_backward_tensor_is_no_pointer_unless_the_substitution_takes_the_arrow(scope_of, headers):
    scope = scope_of(LAYER_NORM, "input, weight, bias")  # `Tensor? weight`: unpacked into a Tensor
    assert codes("weight->sym_sizes()", scope, headers) == []  # load_derivatives saves weight_sym_sizes_opt
    found = resolve("weight->sym_szes() + input->sym_sizes(0) + weight -> sym_sizes()", scope, headers)
    assert [(f.code, f.message.split(" (")[0]) for f in found] == [
        ("formula-unknown-method", "'weight' is not a pointer"),
        ("formula-unknown-method", "'input' is not a pointer"),
        ("formula-unknown-method", "'weight' is not a pointer"),
    ]


def test_a_scalar_or_a_number_is_not_indexed(scope_of, headers):
    pow_ = scope_of("_foreach_pow.ScalarAndTensor(Scalar self, Tensor[] exponent) -> Tensor[]", "exponent")
    assert codes("pow_backward_exponent(grads[i], self, exponent[i], result[i])", pow_, headers) == []
    found = resolve("pow_backward_exponent(grads[i], self, self[i], result[i])", pow_, headers)
    assert [(f.code, f.message) for f in found] == [
        ("formula-not-subscriptable", "'self' is a c10::Scalar here, which has no operator[]: only lists are indexed.")
    ]
    assert where("grad.select(0, dim[0])", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-not-subscriptable", "dim[0]")
    ]


def test_a_template_helper_s_other_parameters_are_typed(scope_of, headers):
    # template <typename T> div_tensor_self_backward(const Tensor& grad, T other, ScalarType self_st,
    #                                                const std::optional<std::string_view>& rounding_mode = nullopt)
    div = scope_of("div.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    assert codes("div_tensor_self_backward(grad, 2, self.scalar_type())", div, headers) == []  # T: anything
    assert where("div_tensor_self_backward(grad, other, self.scalar_type(), 1)", div, headers) == [
        ("formula-argument-type", "1")
    ]


def test_a_parenthesized_operation_on_a_tensor_is_a_tensor_receiver(scope_of, headers):
    fmin = scope_of("fmin(Tensor self, Tensor other) -> Tensor", "self")
    fine = "grad.masked_fill((self <= other).logical_or_(other.isnan()).logical_not_(), 0) + (-self).exp()"
    assert codes(fine, fmin, headers) == []
    assert where("(self <= other).logical_or_(other.isnan(), 1) + (self * 2).sum(0, 1, 2, 3, 4)", fmin, headers) == [
        ("formula-argument-count", "logical_or_"), ("formula-argument-count", "sum"),
    ]  # fmt: skip
    # a call, a cast, a lambda's parameters are no parenthesized operation
    assert codes("fmap(grads, [](const Tensor& t) { return t; })", fmin, headers) == []
    assert codes("static_cast<int64_t>(self * 2).sum(0, 1, 2, 3, 4)", fmin, headers) == []


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


def test_the_branches_of_a_conditional_need_a_common_type(scope_of, headers):
    scope = scope_of(ABS, "self")
    fine = "grad.defined() ? grad * self.sgn() : zeros_like(grad) + (self.dim() > 0 ? 1 : 0.5) * grad"
    assert codes(fine, scope, headers) == []
    found = resolve("grad.defined() ? grad * self.sgn() : 0", scope, headers)
    assert [(f.code, "grad.defined() ? grad * self.sgn() : 0"[f.start : f.end]) for f in found] == [
        ("formula-conditional-types", "?")
    ]
    assert found[0].message.startswith("The branches of '?:' have no common type: 'grad * self.sgn()' (a Tensor")
    # in an argument, nested, or with a branch derivls does not type
    assert where("at::sum(dim ? grad : self.sgn().sum(), 0)", scope_of(MAX_DIM, "self"), headers) == []
    assert where("mul(grad, keepdim ? 2 : grad)", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-conditional-types", "?")
    ]
    nested = "keepdim ? grad : dim ? grad : 0"  # (the second conditional's branches: a Tensor and an int)
    assert [f.start for f in resolve(nested, scope_of(MAX_DIM, "self"), headers)] == [nested.rindex("?")]
    assert codes("keepdim ? Tensor() : 0", scope_of(MAX_DIM, "self"), headers) == []


LERP = "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"
NAN_TO_NUM = "nan_to_num(Tensor self, float? nan=None, float? posinf=None, float? neginf=None) -> Tensor"


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


MATMUL = "matmul(Tensor self, Tensor other) -> Tensor"
EIGH = '_linalg_eigh(Tensor A, str UPLO="L", bool compute_v=True) -> (Tensor eigenvalues, Tensor eigenvectors)'


def test_a_backward_formula_is_a_tensor_for_one_input_and_a_tuple_for_several(scope_of, headers):
    one, two = scope_of(ABS, "self"), scope_of(MATMUL, "self, other")
    assert codes("matmul_backward(grad, self, other, grad_input_mask)", two, headers) == []
    assert codes("grad.matmul(self.mH())", one, headers) == []
    found = resolve("at::matmul(grad, other)", two, headers)
    assert [(f.code, "at::matmul(grad, other)"[f.start : f.end]) for f in found] == [("formula-result-type", "matmul")]
    assert found[0].message.startswith("The formula for 2 inputs (self, other) is 'at::Tensor' (a Tensor)")
    assert "std::get<0>…std::get<1>(grad_result)" in found[0].message
    assert where("polar_backward(grad, self)", one, headers) == [("formula-result-type", "polar_backward")]
    assert where("grad * other.sgn()", two, headers) == [("formula-result-type", "grad * other.sgn()")]
    assert where("M_PI", one, headers) == [("formula-result-type", "M_PI")]


def test_a_tuple_for_several_inputs_has_at_least_as_many_elements(scope_of, headers):
    three = scope_of(LAYER_NORM, "input, weight, bias")
    assert where("polar_backward(grad, input)", three, headers) == [("formula-result-type", "polar_backward")]
    assert "a std::tuple of 2" in resolve("polar_backward(grad, input)", three, headers)[0].message
    assert codes("polar_backward(grad, self)", scope_of(MATMUL, "self, other"), headers) == []  # 2 for 2


def test_a_forward_formula_is_a_tensor_for_one_output_and_a_tuple_of_as_many_for_several(scope_of, headers):
    one, two = scope_of(ABS, "result"), scope_of(EIGH, "eigenvalues, eigenvectors")
    assert codes("linalg_eig_jvp(A_t, eigenvalues, eigenvectors, /*is_hermitian=*/true)", two, headers) == []
    assert where("polar_backward(self_t, result)", one, headers) == [("formula-result-type", "polar_backward")]
    assert where("at::matmul(A_t, eigenvectors)", two, headers) == [("formula-result-type", "matmul")]
    # a conditional, a call derivls does not type, the literal 0: not judged
    assert where("self_t.defined() ? polar_backward(self_t, result) : self_t", one, headers) == []
    assert where("self_t.sym_size(0)", one, headers) == []
    assert where("0", scope_of(ABS, "self"), headers) == []


def test_cpp_alternative_tokens_are_keywords(scope_of, headers):
    # `not`, `and`, `or` are C++ (ISO 646): g++ reads them as `!`, `&&`, `||`
    assert codes("not keepdim and grad.defined() or keepdim ? grad : grad", scope_of(MAX_DIM, "self"), headers) == []


def rewrites(formula, scope, headers):
    return [(f.code, formula[f.start : f.end], [r.text for r in f.rewrites]) for f in resolve(formula, scope, headers)]


def test_python_power_floor_division_conditional_and_namespace_dot_are_reported_with_their_cpp_spelling(
    scope_of, headers
):
    scope = scope_of(MAX_DIM, "self")
    assert rewrites("grad ** 2", scope, headers) == [("formula-python-syntax", "**", ["grad.pow(2)"])]
    assert rewrites("2 ** 3 * grad", scope, headers) == [("formula-python-syntax", "**", ["std::pow(2, 3)"])]
    assert rewrites("grad * 2 // 3", scope, headers) == [("formula-python-syntax", "//", ["/"])]
    assert rewrites("grad if keepdim else grad.neg()", scope, headers) == [
        ("formula-python-syntax", "if", ["keepdim ? grad : grad.neg()"])
    ]
    assert rewrites("torch.zeros_like(grad) + at.ones_like(grad)", scope, headers) == [
        ("formula-python-syntax", "torch", ["at::"]),
        ("formula-python-syntax", "at", ["at::"]),
    ]
    assert rewrites("math.pi * grad + math.sqrt(2.) * grad", scope, headers) == [
        ("formula-python-syntax", "math", ["M_PI"]),
        ("formula-python-syntax", "math", ["std::"]),
    ]
    assert rewrites("grad.sum([0, 1]) + at::zeros([2], grad.options())", scope, headers) == [
        ("formula-python-syntax", "[", ["{0, 1}"]),
        ("formula-python-syntax", "[", ["{2}"]),
    ]
    # C++ that looks alike: a comment the formula's own line break ends, a block comment, `if` in a lambda's body,
    # a dereference of what derivls does not type, a local named like a namespace's member
    assert where("grad // a comment\n * 2", scope, headers) == []
    assert where("grad * /*keepdim=*/2", scope, headers) == []
    assert where("fmap(grad, [&](const Tensor& t) { if (keepdim) { return t; } return t * 2; })", scope, headers) == []
    assert where("grad ** x", scope, headers) == [("formula-unknown-name", "x")]
    assert where("grads[0] * fmap(grads, [](const Tensor& t) { return t; })[0]", scope, headers) == []
    assert where("grad.std.sum()", scope, headers) == [("formula-member-not-called", "std")]  # a member, not std::


def test_a_member_function_named_without_a_call(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    found = resolve("grad * self.numel", scope, headers)
    assert [(f.code, "grad * self.numel"[f.start : f.end]) for f in found] == [("formula-member-not-called", "numel")]
    assert found[0].message.startswith("'numel' is a member function of an at::Tensor ('self'): C++ has no properties")
    assert [r.text for r in found[0].rewrites] == ["numel()"]
    assert where("grad.to(self.dtype)", scope, headers) == [("formula-member-not-called", "dtype")]
    assert where("grad.to(self.dtype()) + grad.to<double>()", scope, headers) == []


def test_python_names_suggest_their_cpp_spelling(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    assert codes("grad.sum(dim, True)", scope, headers) == [("formula-unknown-name", "True", ("true",))]
    found = resolve("keepdim ? grad : None", scope, headers)
    assert [(f.code, f.suggestions) for f in found] == [("formula-unknown-name", ("Tensor()", "std::nullopt"))]


def test_python_tensor_attributes_suggest_their_cpp_spelling(scope_of, headers):
    assert codes("grad * self.shape[0]", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-unknown-method", "shape", ("sym_sizes()",))
    ]
    assert codes("grad / self.ndim", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-unknown-method", "ndim", ("dim()",))
    ]


def test_a_tensor_scalar_or_list_is_no_condition(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    found = resolve("grad ? grad * 2 : grad", scope, headers)
    assert [(f.code, "grad ? grad * 2 : grad"[f.start : f.end], [r.text for r in f.rewrites]) for f in found] == [
        ("formula-not-bool", "grad", ["grad.defined()"])
    ]
    assert where("!self.sym_sizes().empty() && (!grad || keepdim) ? grad : grad", scope, headers) == [
        ("formula-not-bool", "grad")
    ]
    assert where("grad.defined() && !keepdim ? grad : grad", scope, headers) == []
    assert where("keepdim || self.sizes() ? grad : grad", scope, headers) == [("formula-not-bool", "self.sizes()")]
    # an operation's result is not judged (`grad > 0` is a Tensor too, but not a name a Python habit writes)
    assert where("dim > 0 ? grad : grad", scope, headers) == []


def test_a_literal_index_past_grad_input_mask_or_grads_is_a_warning(scope_of, headers):
    scope = scope_of(LAYER_NORM, "input, weight, bias")
    formula = "f(grads[3], {grad_input_mask[0], grad_input_mask[2], grad_input_mask[3]})"
    found = [f for f in resolve(formula, scope, headers) if f.code == "formula-index-out-of-range"]
    assert [(f.severity, formula[f.start : f.end]) for f in found] == [(2, "3"), (2, "3")]
    assert found[0].message.startswith("'grads' has 3 element(s), one gradient per output (result0, result1, result2)")
    assert found[1].message.startswith("'grad_input_mask' has 3 element(s), one flag per input of this formula (input")
    assert [f.code for f in resolve("grads[2] * grad_input_mask[2]", scope, headers)] == []


def test_a_math_constant_is_a_double(scope_of, headers):
    assert where("at::sqrt(M_PI) * grad", scope_of(ABS, "self"), headers) == [("formula-argument-type", "M_PI")]
    assert codes("grad * std::sqrt(M_PI)", scope_of(ABS, "self"), headers) == []


def test_lambda_parameters_and_local_declarations_are_in_scope(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("fmap(grad, [](const Tensor& t){ auto u = t * 2; return u; })", scope, headers) == []
    assert codes("fmap(grad, [](const Tensor& t){ return v; })", scope, headers)[0][:2] == (
        "formula-unknown-name", "v",
    )  # fmt: skip


def test_unbalanced_brackets_and_unterminated_literals(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("grad * (self.sgn()", scope, headers) == [("formula-unbalanced", "(", ())]
    assert codes('not_implemented("x)', scope, headers)[0][:1] == ("formula-unterminated",)


def test_without_functions_manual_helper_names_are_not_judged(scope_of, headers):
    from dataclasses import replace

    missing = replace(headers, sources=replace(headers.sources, functions_manual=None), helpers={})
    assert codes("handle_r_to_cc(grad)", scope_of(ABS, "self"), missing) == []
    assert codes("grad * self_t", scope_of(ABS, "self"), missing)[0][0] == "formula-tangent-in-backward"


def test_against_a_native_functions_excerpt_aten_names_are_not_judged(scope_of, headers):
    from dataclasses import replace

    excerpt = replace(headers, native_complete=False)
    scope = scope_of(ABS, "self")
    assert codes("ones_lik(self) * at::zeroz(grad) * self.sgnn()", scope, excerpt) == []
    assert codes("grad * slef", scope, excerpt)[0][:2] == ("formula-unknown-name", "slef")


def test_a_tensor_receiver_has_only_tensor_methods(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert where("grad.value() * self.vec().size()", scope, headers) == [
        ("formula-unknown-method", "value"), ("formula-unknown-method", "vec"),
    ]  # fmt: skip
    assert codes("grad * self.sgn() + self.sym_sizes().vec().size()", scope, headers) == []  # only plain receivers


def test_in_a_forward_formula_an_optional_tensor_argument_is_a_std_optional(scope_of, headers):
    forward = scope_of(LAYER_NORM, "result0")
    [(code, name, _)] = codes("weight.sizes() + weight_p", forward, headers)
    assert (code, name) == ("formula-unknown-method", "sizes")
    assert codes("weight.has_value() ? weight->sizes() : weight.value().sizes()", forward, headers) == []


def test_in_a_backward_formula_an_optional_tensor_argument_is_unpacked_into_a_tensor(scope_of, headers):
    backward = scope_of(LAYER_NORM, "input, weight, bias")
    assert codes("weight.defined() ? weight.sizes() : grad.sizes()", backward, headers) == []
    assert where("weight.has_value()", backward, headers) == [("formula-unknown-method", "has_value")]


def test_receivers_declared_in_the_formula_are_not_judged(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("[&]{ auto self = grad.sizes(); return self.vec(); }()", scope, headers) == []
    assert codes("[&]{ std::vector<at::Scalar> grads = {1}; return grads[0].toDouble(); }()", scope, headers) == []


def test_an_element_of_a_list_is_judged_by_what_the_list_holds(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    assert codes("grads[0].sym_sizes() + grads[1].conj()", backward, headers) == []
    assert where("grads[0].toDouble() + grads[0]->sizes()", backward, headers) == [
        ("formula-unknown-method", "toDouble"), ("formula-unknown-method", "sizes"),  # (a Tensor is no pointer)
    ]  # fmt: skip
    [(code, text, _)] = codes("grads[indices.dim() - 1].has_value()", backward, headers)
    assert (code, text) == ("formula-unknown-method", "has_value")
    message = resolve("grads[0].toDouble()", backward, headers)[0].message
    assert message.startswith("'grads[0]' is a Tensor here")
    layer_norm = scope_of(LAYER_NORM, "input, weight, bias")  # a saved SymInt[]: its elements are not judged
    assert codes("normalized_shape[0].toDouble() + normalized_shape[1].expect_int()", layer_norm, headers) == []


def test_a_foreach_entry_s_formulas_are_judged_like_any_other(scope_of, headers):
    div = "_foreach_div.List(Tensor[] self, Tensor[] other) -> Tensor[]"
    backward = scope_of(div, "self")
    assert codes("self[i].sym_sizes() + grads[i].conj() + other.size() + grad.sizes()", backward, headers) == []
    assert where("self[i].toDouble() + other.sizes() + grad.vec()", backward, headers) == [
        ("formula-unknown-method", "toDouble"), ("formula-unknown-method", "sizes"), ("formula-unknown-method", "vec"),
    ]  # fmt: skip
    minimum = "_foreach_minimum.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]"
    assert where("scalars[i].sizes()", scope_of(minimum, "self"), headers) == [("formula-unknown-method", "sizes")]
    forward = scope_of(minimum, "result")  # the kernel's ArrayRef<Scalar>; the tangent of self[i]
    assert codes("scalars[i].toDouble() + self_t.conj() + result.options()", forward, headers) == []
    assert where("scalars[i].sizes() + self_t.toDouble()", forward, headers) == [
        ("formula-unknown-method", "sizes"), ("formula-unknown-method", "toDouble"),
    ]  # fmt: skip
    assert codes("self[i].toDouble()", forward, headers) == []  # a forward Tensor[]: maybe an ITensorListRef


def test_a_backward_formula_s_saved_lists_are_std_vectors_and_numbers_have_no_members(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    assert where("dim.size() + keepdim.value()", backward, headers) == [
        ("formula-unknown-method", "size"), ("formula-unknown-method", "value"),
    ]  # fmt: skip
    roll = "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"
    assert codes("dims.size() + shifts.back() + dims.empty()", scope_of(roll, "self"), headers) == []
    [(code, name, suggestions)] = codes("shifts.vec()", scope_of(roll, "self"), headers)
    assert (code, name) == ("formula-unknown-method", "vec")
    assert codes("shifts.vec()", scope_of(roll, "result"), headers) == []  # the forward formula's is an ArrayRef


def test_a_forward_formula_s_int_and_symint_lists_are_array_refs(scope_of, headers):
    roll = "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"
    forward = scope_of(roll, "result")
    assert forward.get("shifts").cpp_type == "c10::SymIntArrayRef" and forward.get("dims").cpp_type == "at::IntArrayRef"
    assert codes("shifts.vec() + dims.size() + dims.slice(1).front() + shifts.equals(shifts)", forward, headers) == []
    [finding] = resolve("dims.sizes()", forward, headers)  # a Tensor's method
    assert (finding.code, finding.suggestions[:1]) == ("formula-unknown-method", ("size",))
    assert finding.message == (
        "'dims' is a c10::ArrayRef in a forward formula (the kernel's at::IntArrayRef), which has no member 'sizes'."
    )
    assert where("shifts.push_back(0) + dims->size()", forward, headers) == [
        ("formula-unknown-method", "push_back"), ("formula-unknown-method", "size"),
    ]  # fmt: skip
    assert codes("dims.push_back(0)", scope_of(roll, "self"), headers) == []  # a backward formula's: a std::vector


def test_a_scalar_argument_is_a_c10_scalar_in_both_directions(scope_of, headers):
    lerp = "lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor"
    backward, forward = scope_of(lerp, "self"), scope_of(lerp, "result")
    for scope in (backward, forward):
        assert codes("weight.isComplex() ? weight.conj().toDouble() : weight.to<float>() + weight.toFloat8_e4m3fn()",
                     scope, headers) == []  # fmt: skip
    [finding] = resolve("weight.item<double>()", backward, headers)  # a Tensor's method
    assert (finding.code, finding.message) == (
        "formula-unknown-method", "'weight' is a c10::Scalar here, which has no member 'item'."
    )  # fmt: skip
    assert where("weight->toDouble()", forward, headers) == [("formula-unknown-method", "toDouble")]


def test_arrows_in_a_forward_formula_reach_an_optional_s_tensor_and_a_tensor_is_no_pointer(scope_of, headers):
    forward = scope_of(LAYER_NORM, "result0")
    assert codes("weight->sizes() + input_p * weight_p", forward, headers) == []
    assert where("weight->sizez() + input_p->sizes()", forward, headers) == [
        ("formula-unknown-method", "sizez"), ("formula-unknown-method", "sizes"),
    ]  # fmt: skip
    backward = scope_of(LAYER_NORM, "input, weight, bias")
    assert codes("weight->sym_sizes()", backward, headers) == []  # load_derivatives rewrites it


def test_a_helper_call_passes_a_number_of_arguments_one_of_its_overloads_takes(scope_of, headers):
    scope = scope_of("mul.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    assert codes("mul_tensor_backward(grad, other, self.scalar_type())", scope, headers) == []
    [(code, name, _)] = codes("mul_tensor_backward(grad, other)", scope, headers)
    assert (code, name) == ("formula-argument-count", "mul_tensor_backward")
    [finding] = resolve("mul_tensor_backward(grad)", scope, headers)
    assert finding.message == "'mul_tensor_backward' is called with 1 argument, but it takes 3 (FunctionsManual.h)."
    [(path, line, text)] = finding.related  # the declaration, to jump to
    assert path.endswith("FunctionsManual.h") and "at::Tensor mul_tensor_backward(" in text


def test_argument_counting_sees_brackets_braces_lambdas_and_template_arguments(scope_of, headers):
    scope = scope_of("mul.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    formula = (
        "mul_tensor_backward(std::get<0>(std::tuple<Tensor, Tensor>(grad, grad)), "
        "[&]{ return other; }(), c10::ScalarType{self.scalar_type()})"
    )
    assert codes(formula, scope, headers) == []
    assert codes("mul_tensor_backward(grad, other, self.dim() < 2 ? self.scalar_type() : self.scalar_type())",
                 scope, headers) == []  # fmt: skip


def test_a_helper_name_that_is_also_an_aten_function_or_a_local_is_not_counted(scope_of, headers):
    scope = scope_of("mul.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    assert headers.only_helper("mul_tensor_backward")
    shadowed = "[&](auto mul_tensor_backward){ return mul_tensor_backward(grad); }(grad)"
    assert [c[0] for c in codes(shadowed, scope, headers)] == []
    also_aten = replace(headers, helpers={**headers.helpers, "zeros_like": headers.helpers["mul_tensor_backward"]})
    assert also_aten.only_helper("zeros_like") == []  # overload resolution also sees at::zeros_like
    assert codes("zeros_like(grad)", scope, also_aten) == []


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


def test_an_aten_call_with_an_argument_count_no_cpp_overload_takes_is_an_error(scope_of, headers):
    backward = scope_of(ABS, "self")
    # the plain signatures (schema defaults), the faithful ones (TensorOptions scattered), the _symint forms
    fine = (
        "at::where(self > 0, grad, self) + grad.sum() + grad.sum(0) + grad.sum(0, true, at::kFloat) "
        "+ at::zeros({2}, grad.options()) + at::zeros({2}, at::kFloat, at::kStrided, at::kCPU, false) "
        "+ grad.expand_symint(self.sym_sizes(), true) + zeros_like(grad) + at::add_out(grad, self, grad, 2)"
    )
    assert codes(fine, backward, headers) == []
    found = resolve("at::mv(grad) + grad.sum(0, true, at::kFloat, 1) + dot(grad, self, self)", backward, headers)
    assert [(f.code, f.message.split(":")[0]) for f in found] == [
        ("formula-argument-count", "'mv' is called with 1 argument, but the ATen function's C++ overloads take 2"),
        ("formula-argument-count", "'sum' is called with 4 arguments, but the Tensor method's C++ overloads take "
                                   "0 to 1 or 1 to 3"),
        ("formula-argument-count", "'dot' is called with 3 arguments, but the ATen function's C++ overloads take 2"),
    ]  # fmt: skip
    assert "\n  at::Tensor mv(const at::Tensor & self, const at::Tensor & vec)" in found[0].message
    # a method on what is not known to be a Tensor is not counted
    assert codes("grad.sizes().slice(0, 1, 2) + self.options().dtype(1, 2)", backward, headers) == []


def test_members_tensorbody_and_tensorbase_write_by_hand_are_counted_and_typed(scope_of, headers):
    backward = scope_of(ABS, "self")
    fine = (
        "grad.size(0) + self.sym_size(-1) + grad.contiguous() + grad.contiguous(at::MemoryFormat::Contiguous)"
        " + grad.to(self.options()) + grad.dim() + grad.std(0) + grad.index({0})"
    )
    assert codes(fine, backward, headers) == []
    # TensorBase::sym_size(int64_t), brought into at::Tensor by `using TensorBase::sym_size;`
    assert where("self.sym_size() + grad.size(0, 1) + grad.dim(0)", backward, headers) == [
        ("formula-argument-count", "sym_size"),
        ("formula-argument-count", "size"),
        ("formula-argument-count", "dim"),
    ]
    assert where("grad.size(self)", backward, headers) == [("formula-argument-type", "self")]
    # templates are not judged (Tensor::item<T>())
    assert codes("grad.item(1, 2)", backward, headers) == []


def test_the_result_of_an_aten_call_that_returns_a_tensor_is_judged_as_a_tensor(scope_of, headers):
    backward = scope_of(ABS, "self")
    fine = "grad.sum(0).sizes() + at::mul(grad, self).sym_sizes() + mul(grad, 2).conj().neg() + grad.mul_(2).sum()"
    assert codes(fine, backward, headers) == []
    assert where("grad.sum(0).toDouble() + at::mul(grad, self).mul(1, 2) + grad.mul(2).neg().value()", backward,
                 headers) == [
        ("formula-unknown-method", "toDouble"), ("formula-unknown-method", "value"), ("formula-argument-count", "mul"),
    ]  # fmt: skip
    message = resolve("grad.sum(0).toDouble()", backward, headers)[0].message
    assert message.startswith("'sum(…)' is a Tensor here, and Tensor has no method 'toDouble'")
    # what is not every overload's one Tensor (max: Tensor or (values, indices)), or on an unknown receiver
    assert codes("at::max(grad).foo_bar_baz_quux_value() + self.sizes().vec().value()", backward, headers) == [
        ("formula-unknown-method", "foo_bar_baz_quux_value", ())
    ]


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


def test_an_optional_value_has_the_members_of_std_optional(scope_of, headers):
    scope = scope_of("_nested_tensor_from_tensor_list(Tensor[] list, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor", "list")  # fmt: skip
    assert codes("layout.has_value() ? grad : grad * dtype.value_or(at::kFloat)", scope, headers) == []
    found = resolve("grad.defined() ? at::unbind(grad) : std::vector<Tensor>(layout.size())", scope, headers)
    assert [(f.code, f.message) for f in found] == [
        ("formula-unknown-method", "'layout' is a std::optional<at::Layout> here, which has no member 'size'.")
    ]


def test_zeros_like_is_judged_as_the_aten_function_unless_the_codegen_saves_it(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    # `zeros_like(self)` of an argument becomes the saved `self_info.zeros()`; any other call is at::zeros_like's
    assert codes("zeros_like(self) + zeros_like(grad) + zeros_like(grad, at::kFloat)", backward, headers) == []
    assert ("formula-argument-count", "zeros_like") in where("zeros_like()", backward, headers)
    assert ("formula-argument-type", "dim") in where("zeros_like(dim)", backward, headers)


def test_a_cmath_function_with_an_argument_count_no_overload_takes_is_an_error(scope_of, headers):
    backward = scope_of(MAX_DIM, "self")
    fine = "sqrt(2.0) * exp(grad) * std::pow(2.0, 3) * pow(grad, 2) * std::hypot(1., 2., 3.) * lgamma(self)"
    assert codes(fine, backward, headers) == []
    assert where("sqrt() + std::sqrt(2.0, 1) + pow(2) + exp(grad, 1)", backward, headers) == [
        ("formula-argument-count", "sqrt"),
        ("formula-argument-count", "sqrt"),
        ("formula-argument-count", "pow"),
        ("formula-argument-count", "exp"),
    ]


def test_a_call_of_an_overload_set_returning_a_tensor_for_that_many_arguments_is_a_tensor(scope_of, headers):
    backward = scope_of(ABS, "self")
    # at::where(condition) returns a list of Tensors, at::where(condition, a, b) one Tensor
    assert where("at::where(self > 0, grad, self).masked_fill_(self > 0)", backward, headers) == [
        ("formula-argument-count", "masked_fill_")
    ]
    assert codes("at::where(self > 0, grad, self).masked_fill_(self > 0, 0)", backward, headers) == []


def test_a_call_the_codegen_saves_is_still_no_member_of_a_list(scope_of, headers):
    # `size.sym_sizes()` becomes a saved value, computed by the kernel on the SymIntArrayRef: no such member
    unsafe_view = scope_of("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", "self")
    assert where("grad.reshape_symint(size.sym_sizes())", unsafe_view, headers) == [
        ("formula-unknown-method", "sym_sizes")
    ]
    assert codes("grad.reshape_symint(self.sym_sizes())", unsafe_view, headers) == []
