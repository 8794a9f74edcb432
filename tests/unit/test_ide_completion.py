"""Completion, asked of derivls.ide directly: in `name:`, at keys, under `dispatch:`, in formulas."""

from __future__ import annotations

from derivls.derivatives.profiles import TORCHGEN
from derivls.ide.completion import FUNCTION, KEYWORD, MAX_SCHEMAS, completions
from derivls.ide.context import text_context
from tests.unit.ide_support import analyse, real_analysis, real_index

ADD = "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"


def complete(text: str, line: int, column: int, **kwargs):
    lines = text.split("\n")
    return completions(lines, line, column, real_index(), TORCHGEN, **kwargs)


def labels(found) -> list[str]:
    assert found is not None
    return [item.label for item in found.items]


def test_name_completion_offers_schemas_starting_with_what_was_typed_without_an_entry_first():
    found = complete("- name: mul.Te\n", 0, 14, analysis=real_analysis())
    names = labels(found)
    assert "mul.Tensor(Tensor self, Tensor other) -> Tensor" in names
    assert found.items[names.index("mul.Tensor(Tensor self, Tensor other) -> Tensor")].detail.startswith(
        "has an entry · "
    )
    covered = [i.detail.startswith("has an entry") for i in found.items]
    assert covered == sorted(covered)  # entries still to write come first
    assert all(item.kind == FUNCTION for item in found.items)


def test_name_completion_replaces_the_whole_value():
    text = "- name: mul.Te  # a comment\n"
    found = complete(text, 0, 12)
    item = found.items[0]
    assert (item.line, item.start, item.end) == (0, len("- name: "), len("- name: mul.Te"))
    assert item.new_text == item.label


def test_name_completion_is_capped_and_says_so():
    found = complete("- name: \n", 0, 8)
    assert len(found.items) == MAX_SCHEMAS and found.incomplete


def test_key_completion_offers_unused_arguments_outputs_and_entry_keys_with_a_colon():
    text = f"{ADD}\n  self: grad\n  \n"
    found = complete(text, 2, 2)
    assert labels(found) == ["other", "alpha", "result", "output_differentiability", "dispatch"]
    other = found.items[0]
    assert other.new_text == "other: " and other.detail == "Tensor (const at::Tensor &)"
    assert found.items[-1].kind == KEYWORD


def test_key_completion_under_dispatch_offers_the_autograd_keys_not_used_yet():
    text = "- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor\n  dispatch:\n    Default:\n      self: grad\n    \n"
    names = labels(complete(text, 4, 4))
    assert "Default" not in names and names[0] == "AutogradNestedTensor"
    assert complete(text, 4, 4).items[0].new_text == "AutogradNestedTensor:"


def test_backward_formula_completion_offers_grad_and_words_matching_the_prefix_and_replaces_the_prefix():
    text = f"{ADD}\n  self: gr\n"
    found = complete(text, 1, 10, manual_functions=lambda: ["grad_helper", "gradient_thing", "unrelated"])
    assert labels(found) == ["grad", "grad_input_mask", "grad_helper", "gradient_thing"]
    assert all((item.start, item.end) == (8, 10) for item in found.items)


def test_forward_formula_completion_offers_primals_and_tangents():
    text = f"{ADD}\n  result: self_\n"
    assert labels(complete(text, 1, 15)) == ["self_p", "self_t"]
    everything = labels(complete(f"{ADD}\n  result: \n", 1, 10))
    assert {"other_t", "auto_element_wise", "auto_linear"} <= set(everything)
    assert "grad" not in everything


def test_multi_output_backward_formula_completion_offers_each_grads_i():
    text = (
        "- name: linalg_lstsq(Tensor self, Tensor b, float? rcond=None, *, str? driver=None)"
        " -> (Tensor solution, Tensor residuals, Tensor rank, Tensor singular_values)\n  self: \n"
    )
    names = labels(complete(text, 1, 8))
    assert ["grads[0]", "grads[1]", "grads[2]", "grads[3]"] == [n for n in names if n.startswith("grads[")]
    assert "grad_solution" in names


def test_functions_manual_is_only_asked_once_two_characters_are_typed():
    asked = []

    def manual():
        asked.append(True)
        return ["grad_helper"]

    complete(f"{ADD}\n  self: g\n", 1, 9, manual_functions=manual)
    assert asked == []


def test_no_completion_outside_an_entry_or_in_a_name_value_key():
    assert complete("# a comment\n", 0, 5) is None
    assert complete(f"{ADD}\n  output_differentiability: \n", 1, 28) is None


def test_completion_works_while_the_entry_does_not_parse():
    text = f"{ADD}\n  self: [grad\n  \n"
    assert analyse(text).diagnostics  # broken
    assert "other" in labels(complete(text, 2, 2))


def test_text_context_reads_the_schema_and_the_formula_key():
    ctx = text_context([ADD, "  self: grad * ot"], 1, 17)
    assert ctx.kind == "formula" and ctx.prefix == "ot" and ctx.formula_key == "self"
    assert ctx.schema == ADD[len("- name: ") :]


def test_name_completion_finds_what_a_scan_of_every_schema_finds_in_the_same_order():
    index, analysis = real_index(), real_analysis()
    covered = {p.result.schema_string for p in analysis.entries}
    for typed in ("a", "add", "add.", "mul.Te", "_foreach_", "zz_none", "convolution_backward("):
        found = complete(f"- name: {typed}\n", 0, len("- name: ") + len(typed), analysis=analysis)
        # what each request computed before, by scanning every schema of the index
        matches = [s for s in index.by_schema if s.startswith(typed)]
        if len(matches) < MAX_SCHEMAS:
            name = typed.split("(")[0]
            extra = [s for s in index.by_schema if name in s.split("(")[0] and not s.startswith(typed)]
            matches.extend(sorted(extra, key=len))
        matches.sort(key=lambda s: (s in covered, not s.startswith(typed), s.split("(")[0], len(s)))
        assert labels(found) == matches[:MAX_SCHEMAS], typed


LAYER_NORM = (
    "- name: native_layer_norm(Tensor input, SymInt[] normalized_shape, Tensor? weight, Tensor? bias, float eps)"
    " -> (Tensor, Tensor, Tensor)"
)


def members(entry: str, formula_line: str) -> list[str]:
    """Completion labels at the end of `formula_line`, typed under `entry` (an analysed document)."""
    text = f"{entry}\n{formula_line}\n"
    found = completions(text.split("\n"), 1, len(formula_line), real_index(), TORCHGEN, analyse(text))
    return labels(found)


def test_after_a_tensor_and_a_dot_completion_offers_tensor_methods_starting_with_what_was_typed():
    found = members(ADD, "  self: grad.si")
    assert {"sizes", "size", "sin", "sinh", "sign"} <= set(found)
    assert all(name.startswith("si") for name in found)
    assert "grad" not in members(ADD, "  self: grad.")  # members only, no locals


def test_after_a_forward_formula_s_optional_tensor_a_dot_offers_std_optional_and_an_arrow_tensor_methods():
    assert members(LAYER_NORM, "  result0: weight.") == ["emplace", "has_value", "reset", "swap", "value", "value_or"]
    assert "sizes" in members(LAYER_NORM, "  result0: weight->si")
    assert "sizes" in members(LAYER_NORM, "  input, weight, bias: weight.si")  # backward: unpacked, a Tensor


def test_after_a_saved_vector_completion_offers_std_vector_s_members_and_after_a_number_none():
    roll = "- name: roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"
    found = members(roll, "  self: shifts.")
    assert {"size", "empty", "back", "push_back"} <= set(found) and "vec" not in found
    max_dim = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
    assert members(max_dim, "  self: dim.") == []


def test_after_a_forward_formula_s_int_list_completion_offers_array_ref_s_members():
    roll = "- name: roll(Tensor self, SymInt[1] shifts, int[1] dims=[]) -> Tensor"
    found = members(roll, "  result: dims.")
    assert {"size", "vec", "slice", "equals"} <= set(found) and "push_back" not in found and "sizes" not in found


def test_after_a_scalar_completion_offers_c10_scalar_s_members():
    found = members("- name: lerp.Scalar(Tensor self, Tensor end, Scalar weight) -> Tensor", "  self: weight.to")
    assert {"toDouble", "toFloat", "toLong", "toSymInt", "to"} <= set(found) and "to_dense" not in found


def test_after_a_call_s_result_completion_offers_tensor_methods():
    assert "sizes" in members(ADD, "  self: grad.sum().si")


def test_after_a_list_element_completion_offers_the_members_of_what_the_list_holds():
    max_dim = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
    assert {"sizes", "sym_sizes"} <= set(members(max_dim, "  self: grads[0].s"))
    minimum = "- name: _foreach_minimum.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]"
    found = members(minimum, "  self: scalars[i].to")
    assert {"toDouble", "toLong"} <= set(found) and "to_dense" not in found
    assert {"size", "push_back"} <= set(members(minimum, "  self: self.")) and "sizes" not in members(
        minimum, "  self: self."
    )
    assert "sizes" in members(minimum, "  self: self[i].si")
