"""The rule in derivls/derivatives/formulas/rules/members.py, on the scope of real entries."""

from __future__ import annotations

from derivls.derivatives.formulas.resolve import resolve
from tests.formulas.rules.common import ABS, LAYER_NORM, MAX_DIM, codes, where


def test_an_unknown_method_offers_the_closest_methods(scope_of, headers):
    assert codes("grad * self.sgnn()", scope_of(ABS, "self"), headers) == [("formula-unknown-method", "sgnn", ("sgn",))]


def test_a_backward_tensor_is_no_pointer_unless_the_substitution_takes_the_arrow(scope_of, headers):
    scope = scope_of(LAYER_NORM, "input, weight, bias")  # `Tensor? weight`: unpacked into a Tensor
    assert codes("weight->sym_sizes()", scope, headers) == []  # load_derivatives saves weight_sym_sizes_opt
    found = resolve("weight->sym_szes() + input->sym_sizes(0) + weight -> sym_sizes()", scope, headers)
    assert [(f.code, f.message.split(" (")[0]) for f in found] == [
        ("formula-unknown-method", "'weight' is not a pointer"),
        ("formula-unknown-method", "'input' is not a pointer"),
        ("formula-unknown-method", "'weight' is not a pointer"),
    ]


def test_a_member_function_named_without_a_call(scope_of, headers):
    scope = scope_of(MAX_DIM, "self")
    found = resolve("grad * self.numel", scope, headers)
    assert [(f.code, "grad * self.numel"[f.start : f.end]) for f in found] == [("formula-member-not-called", "numel")]
    assert found[0].message.startswith("'numel' is a member function of an at::Tensor ('self'): C++ has no properties")
    assert [r.text for r in found[0].rewrites] == ["numel()"]
    assert where("grad.to(self.dtype)", scope, headers) == [("formula-member-not-called", "dtype")]
    assert where("grad.to(self.dtype()) + grad.to<double>()", scope, headers) == []


def test_python_tensor_attributes_suggest_their_cpp_spelling(scope_of, headers):
    assert codes("grad * self.shape[0]", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-unknown-method", "shape", ("sym_sizes()",))
    ]
    assert codes("grad / self.ndim", scope_of(MAX_DIM, "self"), headers) == [
        ("formula-unknown-method", "ndim", ("dim()",))
    ]


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


def test_an_optional_value_has_the_members_of_std_optional(scope_of, headers):
    scope = scope_of("_nested_tensor_from_tensor_list(Tensor[] list, ScalarType? dtype=None, Layout? layout=None, "
                     "Device? device=None, bool? pin_memory=None) -> Tensor", "list")  # fmt: skip
    assert codes("layout.has_value() ? grad : grad * dtype.value_or(at::kFloat)", scope, headers) == []
    found = resolve("grad.defined() ? at::unbind(grad) : std::vector<Tensor>(layout.size())", scope, headers)
    assert [(f.code, f.message) for f in found] == [
        ("formula-unknown-method", "'layout' is a std::optional<at::Layout> here, which has no member 'size'.")
    ]


def test_a_call_the_codegen_saves_is_still_no_member_of_a_list(scope_of, headers):
    # `size.sym_sizes()` becomes a saved value, computed by the kernel on the SymIntArrayRef: no such member
    unsafe_view = scope_of("_unsafe_view(Tensor self, SymInt[] size) -> Tensor", "self")
    assert where("grad.reshape_symint(size.sym_sizes())", unsafe_view, headers) == [
        ("formula-unknown-method", "sym_sizes")
    ]
    assert codes("grad.reshape_symint(self.sym_sizes())", unsafe_view, headers) == []
