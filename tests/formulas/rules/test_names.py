"""The rule in derivls/derivatives/formulas/rules/names.py, on the scope of real entries."""

from __future__ import annotations

from dataclasses import replace

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, DROPOUT, MAX_DIM, codes, where


def test_an_unknown_name_offers_the_closest_names(scope_of, headers):
    assert codes("grad * slef.sgn()", scope_of(ABS, "self"), headers) == [("formula-unknown-name", "slef", ("self",))]


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


def test_python_names_suggest_their_cpp_spelling(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    assert codes("grad.sum(dim, True)", scope, headers) == [("formula-unknown-name", "True", ("true",))]
    found = resolve("keepdim ? grad : None", scope, headers)
    assert [(f.code, f.suggestions) for f in found] == [("formula-unknown-name", ("Tensor()", "std::nullopt"))]


def test_lambda_parameters_and_local_declarations_are_in_scope(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("fmap(grad, [](const Tensor& t){ auto u = t * 2; return u; })", scope, headers) == []
    assert codes("fmap(grad, [](const Tensor& t){ return v; })", scope, headers)[0][:2] == (
        "formula-unknown-name", "v",
    )  # fmt: skip


def test_without_functions_manual_helper_names_are_not_judged(scope_of, headers):

    missing = replace(headers, sources=replace(headers.sources, functions_manual=None), helpers={})
    assert codes("handle_r_to_cc(grad)", scope_of(ABS, "self"), missing) == []
    assert codes("grad * self_t", scope_of(ABS, "self"), missing)[0][0] == "formula-tangent-in-backward"


def test_against_a_native_functions_excerpt_aten_names_are_not_judged(scope_of, headers):

    excerpt = replace(headers, native_complete=False)
    scope = scope_of(ABS, "self")
    assert codes("ones_lik(self) * at::zeroz(grad) * self.sgnn()", scope, excerpt) == []
    assert codes("grad * slef", scope, excerpt)[0][:2] == ("formula-unknown-name", "slef")
