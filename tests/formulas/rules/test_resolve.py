"""The driver (derivls/derivatives/formulas/resolve.py): what a formula resolves to across the rules."""

from __future__ import annotations

from dataclasses import replace

from tests.formulas.rules.common import ABS, MAX_DIM, codes


def test_a_known_formula_resolves_cleanly(scope_of, headers):
    assert codes("handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())", scope_of(ABS, "result"),
                 headers) == []  # fmt: skip


def test_an_unqualified_aten_call_in_a_forward_formula_needs_no_tensor(scope_of, headers):
    # VariableType.cpp, where forward formulas are compiled, has `using namespace at;`
    assert headers.forward_namespaces >= {"at"}
    assert codes("zeros_symint(self_p.sym_sizes(), self_t.options())", scope_of(ABS, "result"), headers) == []


def test_every_call_saved_py_replaces_by_an_argument_has_its_types_in_savedcalls():
    from derivls.derivatives.formulas.exprtypes import SAVED_CALLS_OF_ARGUMENTS
    from derivls.derivatives.formulas.savedcalls import CALLS

    assert set(CALLS) == set(SAVED_CALLS_OF_ARGUMENTS)


def test_cpp_alternative_tokens_are_keywords(scope_of, headers):
    # `not`, `and`, `or` are C++ (ISO 646): g++ reads them as `!`, `&&`, `||`
    assert codes("not keepdim and grad.defined() or keepdim ? grad : grad", scope_of(MAX_DIM, "self"), headers) == []


def test_unbalanced_brackets_and_unterminated_literals(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("grad * (self.sgn()", scope, headers) == [("formula-unbalanced", "(", ())]
    assert codes('not_implemented("x)', scope, headers)[0][:1] == ("formula-unterminated",)


def test_receivers_declared_in_the_formula_are_not_judged(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("[&]{ auto self = grad.sizes(); return self.vec(); }()", scope, headers) == []
    assert codes("[&]{ std::vector<at::Scalar> grads = {1}; return grads[0].toDouble(); }()", scope, headers) == []


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
