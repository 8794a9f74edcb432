"""The rule in derivls/derivatives/formulas/rules/result_type.py, on the scope of real entries."""

from __future__ import annotations

from dataclasses import replace

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, EIGH, LAYER_NORM, MATMUL, codes, where


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
    assert where("self_t.item()", one, headers) == []
    # a member of no Tensor value (issue 49): `std::optional<at::Tensor> = c10::SymInt` does not compile
    assert where("self_t.sym_size(0)", one, headers) == [("formula-result-type", "sym_size")]
    assert where("0", scope_of(ABS, "self"), headers) == []


SPLIT = "split.Tensor(Tensor(a -> *) self, SymInt split_size, int dim=0) -> Tensor(a)[]"
FOREACH_DIV = "_foreach_div.List(Tensor[] self, Tensor[] other) -> Tensor[]"


def test_a_forward_formula_for_one_list_output_is_a_vector_of_tensors(scope_of, headers):
    # the VariableType kernel: `std::optional<std::vector<at::Tensor>> result_new_fw_grad_opt = …; = <formula>;`
    split = scope_of(SPLIT, "result")
    assert codes("at::split_symint(self_t, split_size, dim)", split, headers) == []
    assert where("self_t", split, headers) == [("formula-result-type", "self_t")]
    assert where("at::conj(self_t)", split, headers) == [("formula-result-type", "conj")]
    message = resolve("self_t", split, headers)[0].message
    assert "std::optional<std::vector<at::Tensor>> (result is a list of Tensors)" in message
    # a `_foreach_` function's formula is one element of the list: a Tensor
    assert codes("self_t / other_p", scope_of(FOREACH_DIV, "result"), headers) == []


def test_auto_element_wise_for_one_list_output_and_auto_linear_of_a_foreach_function_are_result_type_errors(scope_of):
    from derivls.derivatives.formulas.rules.result_type import auto_result_type

    split, abs_, foreach = scope_of(SPLIT, "result"), scope_of(ABS, "result"), scope_of(FOREACH_DIV, "result")
    found = auto_result_type("auto_element_wise", split)
    assert [(f.code, f.start, f.end) for f in found] == [("formula-result-type", 0, len("auto_element_wise"))]
    assert "(…).conj()" in found[0].message
    # auto_linear of a foreach function: at::_foreach_div(self_t, other_t), a vector, for one element
    found = auto_result_type("auto_linear", foreach)
    assert [(f.code, f.start, f.end) for f in found] == [("formula-result-type", 0, len("auto_linear"))]
    assert auto_result_type("auto_linear", split) == []  # at::split_symint(self_t, …): a vector, for a vector
    assert auto_result_type("auto_element_wise", abs_) == auto_result_type("auto_linear", abs_) == []
    assert auto_result_type("auto_element_wise", foreach) == []  # (one element's formula: a Tensor)
    assert auto_result_type("auto_element_wise", scope_of(ABS, "self")) == []  # a backward key


def test_a_backward_formula_for_one_tensor_input_is_a_tensor_for_any_grad_defined(scope_of, headers):
    """Issue 49: Functions.cpp writes it as `any_grad_defined ? (<formula>) : Tensor()`, and a list of
    Tensors (which copy_range would take), a number, a bool or a SymInt list has no common type with Tensor."""
    one = scope_of(ABS, "self")
    for formula, culprit in (
        ("grads", "grads"),
        ("grad.dim()", "dim"),
        ("grad.sym_sizes()", "sym_sizes"),
        ("self.is_complex()", "is_complex"),
        ("grad.sym_numel()", "sym_numel"),
    ):
        assert where(formula, one, headers) == [("formula-result-type", culprit)], formula
    assert "any_grad_defined ? (<formula>) : Tensor()" in resolve("grads", one, headers)[0].message
    assert codes("grad.dim() * grad", one, headers) == []
    assert codes('not_implemented("abs")', one, headers) == []
    # a `Tensor?` input too; a `Tensor[]` input is not wrapped: copy_range takes the list
    min_max = scope_of("clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor", "min, max")
    clamp_min = replace(min_max, targets=("min",), multi_input=False)  # (`min: …` alone)
    assert where("grad.dim()", clamp_min, headers) == [("formula-result-type", "dim")]
    assert codes("grads", scope_of("cat(Tensor[] tensors, int dim=0) -> Tensor", "tensors"), headers) == []


def test_a_forward_formula_of_a_foreach_function_that_is_a_number_is_a_result_type_error(scope_of, headers):
    """One element's formula: `result_new_fw_grad_opts[i] = <formula>`, a std::optional<at::Tensor>; a number
    never fits (the tests/formulas/mutations.py --result-types campaign found the two it missed)."""
    foreach = scope_of(FOREACH_DIV, "result")
    assert where("self_t.sym_size(0)", foreach, headers) == [("formula-result-type", "sym_size")]
    assert where("self_t.sym_sizes()", foreach, headers) == [("formula-result-type", "sym_sizes")]
    assert codes("self_t / other_p", foreach, headers) == []
