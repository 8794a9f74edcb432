"""Hover content, asked of derivls.ide directly on the real 2.13 files and on small documents."""

from __future__ import annotations

from derivls.ide.hover import hover, plain
from derivls.ide.targets import target_at
from tests.unit.ide_support import analyse, at, real_analysis, real_index, real_text


def hover_at(needle: str, offset: int = 0, occurrence: int = 0) -> str:
    line, column = at(real_text(), needle, offset, occurrence)
    info = hover(real_analysis(), real_index(), line, column)
    assert info is not None, f"no hover at {needle!r}+{offset}"
    return info.markdown


def test_hover_on_name_shows_schema_cpp_signature_node_saves_and_a_link_to_the_func_line():
    text = hover_at("- name: add.Tensor", offset=10)
    assert "```\nadd.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n```" in text
    assert "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha=1)" in text
    assert "**Variants:** function, method" in text
    assert "**Autograd node:** `AddBackward0`" in text
    assert (
        "**Saves:** `other_scalar_type: at::ScalarType`, `alpha: at::Scalar`, `self_scalar_type: at::ScalarType`"
        in text
    )
    assert "**Differentiable:** `self`, `other`" in text
    assert "- inplace: `add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)`" in text
    assert "[native_functions.yaml:536](file://" in text and text.endswith("#L536)")


def test_hover_on_name_of_an_entry_with_dispatch_sections_names_a_node_per_key():
    text = hover_at("- name: sum(Tensor self, *, ScalarType? dtype=None)", offset=9)
    assert "`SumBackward0` (Default), `SumBackwardAutogradNestedTensor0` (AutogradNestedTensor)" in text


def test_hover_span_is_the_name_value():
    line, column = at(real_text(), "- name: add.Tensor", offset=10)
    info = hover(real_analysis(), real_index(), line, column)
    assert info is not None and info.span is not None
    assert (info.span.line, info.span.column) == (line, len("- name: "))


def test_hover_on_a_key_gives_its_schema_and_cpp_types_and_what_the_formula_saves():
    text = hover_at("  other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))", offset=3)
    assert text.startswith("`other`: `Tensor` — C++ `const at::Tensor &`")
    assert "differentiable (has a backward formula)" in text
    assert "This formula computes the gradient of `other`." in text
    assert "`other_scalar_type: at::ScalarType`" in text and "`alpha: at::Scalar`" in text


def test_hover_on_a_forward_key_names_the_output():
    text = hover_at("  result: self_t + maybe_multiply(other_t, alpha)", offset=3)
    assert text.startswith("output `result`: `Tensor` — C++ `at::Tensor`")
    assert "forward-mode formula" in text


def test_hover_on_grad_names_the_output_it_flows_into():
    text = hover_at(
        "  self: handle_r_to_c(self.scalar_type(), grad)", offset=len("  self: handle_r_to_c(self.scalar_type(), ")
    )
    assert text == (
        "`grad`: the gradient flowing back into the output `result`: `Tensor` (C++ `at::Tensor`); "
        "the same as `grads[0]`."
    )


def test_hover_on_grads_i_names_output_i():
    line = "  self, b: linalg_lstsq_backward(grads[0], grads[1], self, b, solution, grad_input_mask)"
    text = hover_at(line, offset=line.index("grads[1]") + 2)
    assert text == "`grads[1]`: the gradient of output 1 `residuals`: `Tensor` (C++ `at::Tensor`)"


def test_hover_on_result_in_a_backward_formula_says_the_node_saves_it():
    text = hover_at("  self: grad * result.conj()", offset=len("  self: grad * re"))
    assert text.startswith("output 0 `result`: `Tensor` — C++ `at::Tensor`")
    assert "Saved by the node" in text


def test_hover_on_tangent_and_primal():
    line = "  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())"
    assert hover_at(line, offset=line.index("self_t") + 2).startswith("`self_t`: the tangent of the input `self`")
    assert hover_at(line, offset=line.index("self_p") + 2).startswith("`self_p`: the primal (value) of the input")


def test_hover_on_an_argument_in_a_backward_formula_gives_the_type_the_node_unpacks_it_as():
    line = (
        '  input, weight, bias: "grad.defined() ? native_layer_norm_backward_symint(grad, input, normalized_shape, '
        "result1, result2, weight, bias, grad_input_mask)"
    )
    weight = hover_at(line, offset=line.index("result2, weight") + len("result2, we"))
    assert "C++ `const ::std::optional<at::Tensor> &`" in weight
    assert "In this backward formula its C++ type is `at::Tensor` (as the node saves it)." in weight
    shape = hover_at(line, offset=line.index("normalized_shape") + 3)
    assert "In this backward formula its C++ type is `std::vector<c10::SymInt>`" in shape
    grad = hover_at(line, offset=line.index("grad, input") + 1)
    assert "In this backward formula" not in grad  # a Tensor either way


def test_hover_on_a_substituted_pattern_says_what_is_saved_instead():
    text = hover_at(
        "      self: grad.expand_symint(self.sym_sizes())", offset=len("      self: grad.expand_symint(self.sy")
    )
    assert text.startswith("`self.sym_sizes()` is computed at forward time and saved as `self_sym_sizes: ")


def test_hover_on_auto_element_wise_shows_the_forward_formula_it_expands_to():
    text = hover_at("  result: auto_element_wise", offset=len("  result: auto_"))
    assert text.startswith("**auto_element_wise** expands to the forward formula:")
    assert "```cpp\n" in text


def test_hover_on_a_dispatch_key_names_its_node():
    sum_entry = real_text().index("- name: sum(Tensor self, *, ScalarType? dtype=None)")
    text = hover_at(
        "    AutogradNestedTensor:", offset=6, occurrence=real_text()[:sum_entry].count("    AutogradNestedTensor:")
    )
    assert "`AutogradNestedTensor`" in text and "Autograd node: `SumBackwardAutogradNestedTensor0`" in text


def test_no_hover_on_comments_and_blank_lines():
    assert hover(real_analysis(), real_index(), 0, 0) is None
    line, _ = at(real_text(), "- name: add.Tensor")
    assert hover(real_analysis(), real_index(), line - 1, 0) is None


def test_hover_on_an_unknown_schema_points_at_the_diagnostic():
    analysis = analyse("- name: not_a_function(Tensor self) -> Tensor\n  self: grad\n")
    info = hover(analysis, real_index(), 0, 10)
    assert info is not None
    assert "No function in native_functions.yaml has this schema" in info.markdown


def test_plain_text_drops_markdown_but_keeps_the_words():
    text = hover_at("- name: add.Tensor", offset=10)
    flat = plain(text)
    assert "```" not in flat and "**" not in flat and "`" not in flat
    assert "Autograd node: AddBackward0" in flat
    assert "native_functions.yaml:536" in flat and "file://" not in flat


def test_targets_tell_name_key_formula_and_dispatch_apart():
    text = (
        "- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor\n  dispatch:\n    Default:\n      self: grad\n"
    )
    analysis = analyse(text)
    assert target_at(analysis, 0, 10).kind == "name"
    assert target_at(analysis, 2, 5).kind == "dispatch"
    key = target_at(analysis, 3, 7)
    assert key.kind == "key" and key.word == "self"
    formula = target_at(analysis, 3, 13)
    assert formula.kind == "formula" and formula.word == "grad"
    assert target_at(analysis, 5, 0) is None
