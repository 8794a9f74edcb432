"""Inlay hints, code lenses and generated code, asked of derivls.ide directly."""

from __future__ import annotations

from derivls.ide import generated
from derivls.ide.inlay import MAX_SAVED_SHOWN, inlay_hints
from tests.unit.ide_support import analyse, at, real_analysis, real_text


def test_inlay_hints_name_the_node_after_name_and_what_each_backward_formula_saves():
    line, _ = at(real_text(), "- name: add.Tensor")
    hints = inlay_hints(real_analysis(), line, line + 3)
    name_line = real_text().split("\n")[line]
    assert (hints[0].line, hints[0].column, hints[0].label) == (line, len(name_line), "AddBackward0")
    saves = {h.line: h.label for h in hints[1:]}
    assert saves == {
        line + 1: "saves self_scalar_type: at::ScalarType",
        line + 2: "saves other_scalar_type: at::ScalarType, alpha: at::Scalar",
    }


def test_inlay_hints_stay_inside_the_requested_lines():
    line, _ = at(real_text(), "- name: add.Tensor")
    assert all(line + 1 <= h.line <= line + 1 for h in inlay_hints(real_analysis(), line + 1, line + 1))
    assert len(inlay_hints(real_analysis(), line + 1, line + 1)) == 1


def test_long_save_lists_are_cut_with_a_count():
    labels = [h.label for h in inlay_hints(real_analysis(), 0, 10_000) if h.label.startswith("saves ")]
    long = [label for label in labels if ", +" in label]
    assert long and all(label.count(", ") == MAX_SAVED_SHOWN for label in long)


def test_a_code_lens_on_each_entry_with_a_node():
    lenses = generated.code_lenses(real_analysis())
    line, _ = at(real_text(), "- name: add.Tensor")
    assert generated.CodeLens(line, "Show generated code (AddBackward0)") in lenses
    assert generated.code_lenses(analyse("- name: abs(Tensor self) -> Tensor\n  self: non_differentiable\n")) == []


def test_generated_code_is_the_struct_and_apply_of_the_node():
    line, _ = at(real_text(), "- name: add.Tensor")
    view = generated.view_at(real_analysis(), "file:///x/derivatives.yaml", line + 1)
    assert view is not None
    assert view.uri == "derivls-generated:/add.Tensor.cpp?source=file%3A%2F%2F%2Fx%2Fderivatives.yaml"
    assert "struct TORCH_API AddBackward0 : public TraceableFunction" in view.content
    assert "variable_list AddBackward0::apply(variable_list&& grads)" in view.content
    assert generated.parse_generated_uri(view.uri) == ("file:///x/derivatives.yaml", "add.Tensor")
    assert generated.content_for(real_analysis(), "add.Tensor") == view.content


def test_generated_code_of_an_entry_without_a_node_says_why():
    analysis = analyse("- name: nope(Tensor self) -> Tensor\n  self: grad\n")
    view = generated.view_at(analysis, "file:///x/derivatives.yaml", 0)
    assert view is not None and "// No autograd node is generated for this entry:" in view.content
