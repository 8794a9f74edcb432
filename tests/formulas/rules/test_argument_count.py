"""The rule in derivls/derivatives/formulas/rules/argument_count.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, AS_STRIDED, CAT, MAX_DIM, codes, where


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


def test_fmap_without_template_arguments_takes_an_input_and_a_function(scope_of, headers):
    scope = scope_of(ABS, "self")
    negate = "[](c10::SymInt i){ return -i; }"
    assert where(f"grad.flip(fmap(self.sym_sizes(), {negate}))", scope, headers) == []
    assert where(f"grad.flip(fmap(self.sym_sizes(), {negate}, 1))", scope, headers) == [
        ("formula-argument-count", "fmap")
    ]
    assert where("grad.flip(fmap<int64_t>(self.sym_sizes()))", scope, headers) == []  # fmap<R>(inputs)


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


def test_a_helper_call_passes_a_number_of_arguments_one_of_its_overloads_takes(scope_of, headers):
    scope = scope_of("mul.Tensor(Tensor self, Tensor other) -> Tensor", "self")
    assert codes("mul_tensor_backward(grad, other, self.scalar_type())", scope, headers) == []
    [(code, name, _)] = codes("mul_tensor_backward(grad, other)", scope, headers)
    assert (code, name) == ("formula-argument-count", "mul_tensor_backward")
    [finding] = resolve("mul_tensor_backward(grad)", scope, headers)
    assert finding.message == "'mul_tensor_backward' is called with 1 argument, but it takes 3 (FunctionsManual.h)."
    [(path, line, text)] = finding.related  # the declaration, to jump to
    assert path.endswith("FunctionsManual.h") and "at::Tensor mul_tensor_backward(" in text


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
    assert where("grad * grad.size(self)", backward, headers) == [("formula-argument-type", "self")]
    # templates are not judged (Tensor::item<T>())
    assert codes("grad.item(1, 2)", backward, headers) == []


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
