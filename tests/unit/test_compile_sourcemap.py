"""The source map from generated C++ back to formula text (no compiler needed)."""

from __future__ import annotations

from derivls.base.diagnostics import Span
from derivls.compile import messages
from derivls.compile.backward import formula_offsets
from derivls.compile.sourcemap import FormulaAlignment, FormulaOrigin, SourceMap, fold_offsets, token_at


def test_fold_offsets_map_a_folded_plain_scalar_back_to_its_lines():
    source = "mul_tensor_backward(grad,\n    other, self)"
    value = "mul_tensor_backward(grad, other, self)"
    offsets = fold_offsets(value, source)
    assert source[offsets[value.index("other")]] == "o"
    assert offsets[value.index("other")] == source.index("other")


def test_fold_offsets_skip_quotes_and_escapes():
    source = '"a \\"b\\""'
    value = 'a "b"'
    offsets = fold_offsets(value, source)
    assert source[offsets[value.index("b")]] == "b"


def test_alignment_maps_a_substituted_name_to_the_call_it_replaced():
    original = "grad.expand_symint(self.sym_sizes())"
    rewritten = "grad.expand_symint(self_sym_sizes)"
    alignment = FormulaAlignment(rewritten, original)
    lo, hi = alignment.range(rewritten.index("self_sym_sizes"), len(rewritten) - 1)
    assert original[lo:hi].startswith("self.sym_sizes")


def test_alignment_keeps_unchanged_text_exact():
    original = "a + foo(b, c) - self.sym_size(-1)"
    rewritten = "a + foo(b, c) - self_sym_argsize_minus_1"
    alignment = FormulaAlignment(rewritten, original)
    k = rewritten.index("foo")
    assert alignment.range(k, k + 3) == (original.index("foo"), original.index("foo") + 3)


def test_token_at_a_call_paren_is_the_callee():
    text = "x = mul_tensor_backward(grad, other);"
    assert text[slice(*token_at(text, text.index("(")))] == "mul_tensor_backward"
    assert text[slice(*token_at(text, text.index("grad")))] == "grad"


def test_source_map_locates_a_generated_column_on_the_yaml_line_and_column():
    # the formula stands at line 7, column 8 of the YAML (0-based)
    origin = FormulaOrigin(
        rewritten="mul_tensor_backward(grad, other, self_scalar_type)",
        original="mul_tensor_backward(grad, other, self.scalar_type())",
        source="mul_tensor_backward(grad, other, self.scalar_type())",
        span=Span(7, 8, 7, 60),
    )
    source = SourceMap()
    source.append("// head\n")
    start = source.append("  auto grad_result = any_grad_defined ? (")
    source.add_formula(start + len("  auto grad_result = any_grad_defined ? ("), origin)
    source.append(origin.rewritten + ") : Tensor();\n")
    source.add_unit(start, start + 200, "MulBackward0", Span(5, 8, 5, 40), 5)
    column = len("  auto grad_result = any_grad_defined ? (") + origin.rewritten.index("other") + 1
    where = source.locate(2, column)
    assert where is not None and where.in_formula
    assert where.span == Span(7, 8 + origin.original.index("other"), 7, 8 + origin.original.index("other") + 5)
    assert where.unit == "MulBackward0"
    outside = source.locate(2, 3)
    assert outside is not None and not outside.in_formula and outside.span == Span(5, 8, 5, 40)
    assert source.locate(1, 1) is None


def test_source_map_follows_a_formula_folded_over_two_lines():
    origin = FormulaOrigin(
        rewritten="foo(grad, bar)",
        original="foo(grad, bar)",
        source="foo(grad,\n      bar)",
        span=Span(10, 9, 11, 10),
    )
    assert origin.to_span(10, 13) == Span(11, 6, 11, 9)


def test_formula_offsets_find_each_derivative_after_its_grad_result():
    class D:
        def __init__(self, formula: str) -> None:
            self.formula = formula

    definition = (
        "static variable_list X_apply_functional(\n  const auto& grad = grads[0];\n"
        "  auto grad_result = any_grad_defined ? (grad) : Tensor();\n"
        "  auto grad_result = any_grad_defined ? (grad) : Tensor();\n"
    )
    first, second = formula_offsets(definition, [D("grad"), D("grad")])
    assert definition[first - 1] == "(" and second > first
    assert definition.count("\n", 0, first) == 2 and definition.count("\n", 0, second) == 3


def test_compiler_output_groups_notes_and_instantiation_context_with_their_error():
    output = "\n".join(
        [
            "b.cpp: In function 'variable_list f()':",
            "b.cpp:10:5: error: no matching function for call to 'g(int)'",
            "/x/include/h.h:3:1: note: candidate: 'void g()'",
            "/x/include/h.h:3:1: note:   candidate expects 0 arguments, 1 provided",
            "/x/include/t.h: In instantiation of 'void h(T)':",
            "b.cpp:20:7:   required from here",
            "/x/include/t.h:4:2: error: 'T' has no member 'y'",
        ]
    )
    first, second = messages.parse(output)
    assert first.message.startswith("no matching function") and len(first.notes) == 2
    assert second.places()[1].path == "b.cpp" and second.places()[1].line == 20


def test_every_formula_of_the_real_file_is_placed_in_the_generated_code(real_files):
    from derivls.compile.backward import backward_source
    from derivls.compile.file_templates import Templates
    from derivls.compile.forward import forward_source
    from derivls.compile.units import collect_units
    from derivls.project.analyse import analyse_path

    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags, "torchgen")
    units = collect_units(analysis)
    backward = backward_source(units, Templates(real_files.derivatives))
    forward = forward_source(units)
    text = backward.render()
    placed = backward.formulas
    assert len(placed) == sum(len(u.info.derivatives) for u in units if u.has_backward)
    assert all(text[start:end] == origin.rewritten for start, end, origin in placed)
    fw_text = forward.render()
    foreach = [u for u in units if u.info.name.startswith("_foreach") and u.info.forward_derivatives]
    assert len(foreach) == 8  # their forward formulas are compiled too, inside the loop over the lists
    assert len(forward.formulas) == sum(len(u.info.forward_derivatives) for u in units)
    assert all(fw_text[start:end] == origin.rewritten for start, end, origin in forward.formulas)


def test_forward_formulas_of_a_manual_kernel_are_not_compiled(real_files):
    """gen_variable_type writes no VariableType kernel for a MANUAL_AUTOGRAD function (VariableTypeManual.cpp):
    `check --compile` compiles its node, not its forward formulas (an argument-kind seed's `_fw_primal` with
    `result: auto_linear`); its `_copy` variant's kernel is generated, and compiled."""
    from derivls.aten.native import NativeIndex
    from derivls.compile.engine import make_batches
    from derivls.compile.file_templates import Templates
    from derivls.compile.units import collect_units
    from derivls.derivatives.loader import DocumentAnalyzer

    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    text = "- name: _fw_primal(Tensor(a) self, int level) -> Tensor(a)\n  self: grad\n  result: auto_linear\n"
    units = collect_units(DocumentAnalyzer(index, str(real_files.native)).analyse(text))
    assert {u.name: (u.has_forward, u.in_generated_kernel) for u in units} == {
        "FwPrimalBackward0": (True, False),
        "FwPrimalBackward0_copy": (True, True),
    }
    batches = make_batches(units, Templates(real_files.derivatives))
    assert [[u.name for u in b.units] for b in batches if b.kind == "forward"] == [["FwPrimalBackward0_copy"]]
