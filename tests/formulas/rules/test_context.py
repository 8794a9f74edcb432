"""formula-context: a formula is one expression, in exactly the place the generated C++ puts it
(derivatives/formulas/rules/context.py). The compiler's verdicts on these shapes over the real file are the `--context`
campaign's (tests/compile/test_context_mutations.py); these pin each rule on a real entry."""

from __future__ import annotations

import pytest

from derivls.derivatives.formulas.rules import context
from derivls.derivatives.formulas.rules.context import in_context
from derivls.derivatives.formulas.scope import build_scope

ABS = "abs(Tensor self) -> Tensor"
MUL = "mul.Tensor(Tensor self, Tensor other) -> Tensor"
MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
CAT = "cat(Tensor[] tensors, int dim=0) -> Tensor"
LAYER_NORM = (
    "native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps) "
    "-> (Tensor, Tensor, Tensor)"
)
FOREACH_MINIMUM = "_foreach_minimum.Scalar(Tensor[] self, Scalar scalar) -> Tensor[]"
SIN = "sin(Tensor self) -> Tensor"
ROLL = "roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"


@pytest.fixture
def found(key_of):
    """found(schema, names, formula) -> [(severity, text pointed at)] of formula-context findings."""

    def judge(schema: str, names: str, formula: str):
        result, section, key = key_of(schema, names)
        scope = build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)
        return [(f.severity, formula[f.start : f.end]) for f in in_context(formula, scope, section)]

    return judge


def test_a_backward_formula_for_one_tensor_is_inside_a_conditional_so_a_trailing_semicolon_is_an_error(found):
    assert found(ABS, "self", "grad * self.sgn();") == [(1, ";")]


def test_a_forward_formula_ends_a_statement_so_a_trailing_semicolon_is_only_a_warning(found):
    assert found(ABS, "result", "handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn());") == [(2, ";")]


def test_a_formula_for_several_inputs_is_declared_so_a_trailing_semicolon_is_only_a_warning(found):
    assert found(MUL, "self", "mul_tensor_backward(grad, other, self.scalar_type());") == [(1, ";")]
    assert found(LAYER_NORM, "input, weight, bias", "f(grad, input);") == [(2, ";")]


def test_a_semicolon_between_a_calls_arguments_is_an_error_everywhere(found):
    assert found(ABS, "result", "handle_r_to_c(result.scalar_type(); self_t)") == [(1, ";")]
    assert found(LAYER_NORM, "input, weight, bias", "f(grad; input)") == [(1, ";")]


def test_a_statement_keyword_outside_a_lambda_is_an_error(found):
    assert found(ABS, "self", "return grad * self.sgn()") == [(1, "return")]
    assert found(ABS, "result", "auto t = self_t") == [(1, "auto")]
    assert (1, "return") in found(LAYER_NORM, "input, weight, bias", "return f(grad);")


def test_statements_in_a_lambdas_body_and_its_parameters_are_at_home(found):
    formula = "grad.roll_symint(fmap(reverse_list_symint(shifts), [](c10::SymInt i){return -i;}), reverse_list(dims))"
    assert found(ROLL, "self", formula) == []
    assert found(ABS, "self", "[&]() { auto g = grad; for (int k = 0; k < 2; ++k) {} return g; }()") == []


def test_a_top_level_comma_in_a_declaration_declares_another_name(found):
    assert found(LAYER_NORM, "input, weight, bias", "grad, input") == [(1, ",")]
    # `auto grad_result = a, b(x);` declares b: the build may accept it
    assert found(LAYER_NORM, "input, weight, bias", "grad, b(input)") == [(2, ",")]


def test_a_top_level_comma_in_a_conditional_is_the_comma_operator_an_error_where_the_value_is_no_tensor(found):
    assert found(ABS, "self", "grad * self.sgn(), self") == [(2, ",")]
    assert found(MAX_DIM, "self", "grad, dim") == [(1, ",")]
    assert found(ABS, "self", "grad, 1") == [(1, ",")]


def test_a_top_level_comma_in_a_foreach_element_makes_two_constructor_arguments(found):
    assert found(FOREACH_MINIMUM, "self", "grads[i], grads[i]") == [(1, ",")]


def test_commas_of_template_arguments_are_not_top_level(found):
    assert found(LAYER_NORM, "input, weight, bias", "std::tuple<Tensor, Tensor, Tensor>()") == []


def test_python_comments_and_line_continuations_are_no_cpp_tokens(found):
    assert found(ABS, "self", "grad * self.sgn()  # sign") == [(1, "#")]
    assert found(ABS, "result", "self_t \\") == [(1, "\\")]


def test_a_formula_that_ends_with_a_comma_or_an_operator_is_an_error(found):
    assert found(ABS, "self", "grad * self.sgn(),") == [(1, ",")]
    assert found(ABS, "result", "self_t *") == [(1, "*")]


def test_an_auto_element_wise_entry_puts_its_backward_formula_in_the_forward_kernel_too(key_of):
    result, section, key = key_of(SIN, "self")
    scope = build_scope(result.canonical, section.info, True, key.var_names)
    assert context.places(scope, "grad * self.cos().conj()", element_wise=True) == (
        context.CONDITIONAL,
        context.ELEMENT_WISE,
    )


def test_a_formula_with_not_implemented_or_for_a_list_is_declared_not_conditional(key_of):
    result, section, key = key_of(CAT, "tensors")
    scope = build_scope(result.canonical, section.info, True, key.var_names)
    assert context.places(scope, "cat_tensors_backward(grad, to_args_sizes_symint(tensors), dim)") == (
        context.DECLARATION,
    )
    result, section, key = key_of(ABS, "self")
    scope = build_scope(result.canonical, section.info, True, key.var_names)
    assert context.places(scope, 'not_implemented("abs")') == (context.DECLARATION,)


def test_no_formula_of_the_real_file_has_a_context_finding(real_analysis):
    formulas = 0
    for p in real_analysis.entries:
        result = p.result
        if result.canonical is None:
            continue
        for section in result.sections:
            for key in section.keys:
                value = key.item.value.value
                if key.kind not in ("backward", "forward") or not isinstance(value, str):
                    continue
                scope = build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)
                assert in_context(value, scope, section) == [], (result.schema_string, value)
                formulas += 1
    assert formulas > 1200  # (1,244 in 2.13)
