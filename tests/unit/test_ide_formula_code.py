"""Formulas as code (ide): hover on helpers / ATen calls / methods, signature help, semantic tokens,
on the real 2.13 derivatives.yaml with its FunctionsManual.h and native_functions.yaml."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from derivls.ide import hover, signature, tokens
from derivls.ide.formula_editor import KINDS
from derivls.ide.formulas import formula_at, headers_of, value_offset
from tests.unit.ide_support import analyse, at, real_analysis, real_files, real_text

ABS = "- name: abs(Tensor self) -> Tensor\n"


def functions_manual() -> Path:
    headers = headers_of(real_analysis())
    assert headers is not None and headers.sources.functions_manual is not None
    return headers.sources.functions_manual


def hover_text(needle: str, offset: int, occurrence: int = 0) -> str:
    info = hover.hover(real_analysis(), real_analysis().index, *at(real_text(), needle, offset, occurrence))
    assert info is not None
    return info.markdown


# -- hover ----------------------------------------------------------------------------------------


def test_the_real_headers_are_the_wheels_functions_manual():
    assert functions_manual().parts[-4:] == ("torch", "csrc", "autograd", "FunctionsManual.h")


def test_hover_on_a_helper_shows_its_functions_manual_declaration_as_cpp():
    text = hover_text("handle_r_to_c(result.scalar_type()", 3)
    assert "```cpp\nat::Tensor handle_r_to_c(ScalarType self_st, Tensor gradient_result);\n```" in text
    line = (
        functions_manual()
        .read_text()
        .splitlines()
        .index("at::Tensor handle_r_to_c(ScalarType self_st, Tensor gradient_result);")
    )
    assert f"FunctionsManual.h:{line + 1}]" in text and f"#L{line + 1})" in text


def test_hover_on_a_helper_lists_every_overload_in_header_order():
    text = hover_text("norm_backward(grad, self, p, result)", 0)
    body = text.split("```cpp\n")[1].split("\n```")[0].splitlines()
    assert len(body) == 2 and all(d.startswith("at::Tensor norm_backward(") for d in body)
    assert "2 overloads" in text
    declared = re.findall(r"(?m)^at::Tensor norm_backward\(", functions_manual().read_text())
    assert len(declared) == 2  # the header's own count (other helpers end in norm_backward too)


def test_hover_on_a_tensor_method_shows_its_native_functions_schema():
    text = hover_text("self_p.sgn()", len("self_p."))
    assert "**Tensor method** `sgn`" in text
    assert "```\nsgn(Tensor self) -> Tensor\n```" in text


def test_hover_on_an_at_function_shows_every_schema():
    text = hover_text("at::where(", len("at::w"))
    assert "**ATen function** `where`" in text
    assert "where.self(Tensor condition, Tensor self, Tensor other) -> Tensor" in text
    assert "where.ScalarSelf(Tensor condition, Scalar self, Tensor other) -> Tensor" in text


def test_hover_on_a_name_that_is_an_argument_is_still_about_the_argument():
    text = hover_text("  self: grad * self.sgn()", len("  self: grad * s"))
    assert text.startswith("`self`: `Tensor`")


def test_hover_on_a_method_named_like_an_argument_is_about_the_method():
    doc = "- name: clamp(Tensor self, Scalar? min=None, Scalar? max=None) -> Tensor\n"
    doc += "  self: grad * (self < grad.max())\n"
    analysis = analyse(doc)
    assert analysis.diagnostics == ()
    info = hover.hover(analysis, None, *at(doc, "max()", 1))
    assert info is not None and "**Tensor method** `max`" in info.markdown
    assert "max(Tensor self) -> Tensor" in info.markdown


# -- where a position is in a formula --------------------------------------------------------------


def test_a_position_in_a_quoted_formula_maps_onto_its_value():
    doc = ABS + '  self: "grad * self.sgn()"\n'
    found = formula_at(analyse(doc), *at(doc, "sgn", 1))
    assert found is not None and found.formula == "grad * self.sgn()"
    assert found.formula[found.offset :].startswith("gn()")


def test_a_position_in_a_folded_formula_maps_onto_its_value():
    doc = ABS + "  self: grad *\n    self.sgn()\n"
    found = formula_at(analyse(doc), *at(doc, "sgn"))
    assert found is not None and found.formula == "grad * self.sgn()"
    assert found.formula[found.offset :] == "sgn()"
    assert value_offset(found.scalar, 0) == 0


def test_no_formula_outside_formulas():
    assert formula_at(real_analysis(), *at(real_text(), "- name: abs(", 3)) is None


# -- signature help -------------------------------------------------------------------------------


def help_at(doc: str, needle: str, offset: int) -> signature.SignatureHelp | None:
    return signature.signature_help(analyse(doc), *at(doc, needle, offset))


def test_signature_help_in_a_helper_call_gives_the_active_parameter():
    found = signature.signature_help(real_analysis(), *at(real_text(), "norm_backward(grad, self, p, result)", 29))
    assert found is not None and (found.callee, found.kind) == ("norm_backward", "helper")
    assert found.active_parameter == 3  # after the third comma: `result`
    first = found.signatures[found.active_signature]
    assert [first.label[s:e].split()[-1] for s, e in first.parameters] == ["grad", "self", "p_", "norm"]
    assert len(found.signatures) == 2


def test_signature_help_counts_commas_at_the_call_level_only():
    doc = ABS + "  self: handle_r_to_c(self.scalar_type(), at::where(self > 0, grad, grad))\n"
    outer = help_at(doc, "handle_r_to_c(self.scalar_type(), ", len("handle_r_to_c(self.scalar_type(), "))
    assert outer is not None and (outer.callee, outer.active_parameter) == ("handle_r_to_c", 1)
    inner = help_at(doc, "grad, grad))", len("grad, g"))
    assert inner is not None and (inner.callee, inner.kind, inner.active_parameter) == ("where", "aten", 2)


def test_signature_help_in_a_method_call_leaves_self_out():
    doc = ABS + "  self: grad.sum_to_size(self.sym_sizes())\n"
    found = help_at(doc, "sum_to_size(", len("sum_to_size("))
    assert found is not None and (found.kind, found.active_parameter) == ("method", 0)
    (sig,) = found.signatures
    assert sig.label == "sum_to_size(Tensor self, SymInt[] size) -> Tensor"
    assert [sig.label[s:e] for s, e in sig.parameters] == ["SymInt[] size"]


def test_signature_help_while_the_call_is_being_typed():
    doc = ABS + "  self: handle_r_to_c(self.scalar_type(), \n"
    found = help_at(doc, "self.scalar_type(), ", len("self.scalar_type(), "))
    assert found is not None and (found.callee, found.active_parameter) == ("handle_r_to_c", 1)
    doc = ABS + "  self: grad * at::where(\n"
    found = help_at(doc, "at::where(", len("at::where("))
    assert found is not None and (found.callee, found.kind, found.active_parameter) == ("where", "aten", 0)


def test_no_signature_help_outside_a_known_call():
    doc = ABS + "  self: grad * (self + 1)\n"
    assert help_at(doc, "(self", 2) is None


# -- semantic tokens ------------------------------------------------------------------------------


def test_semantic_tokens_of_the_real_file_classify_known_positions():
    found = tokens.semantic_tokens(real_analysis())
    lines = real_text().splitlines()
    seen = {(lines[t.line][t.start : t.start + t.length], t.kind) for t in found}
    assert {
        ("handle_r_to_c", "helper"),
        ("self_t", "tangent"),
        ("self_p", "primal"),
        ("result", "output"),
        ("grad", "grad"),
        ("sgn", "method"),
        ("where", "aten"),
        ("at", "namespace"),
    } <= seen
    assert all(kind != "unknown" for _, kind in seen)  # the real file resolves
    assert found == sorted(found, key=lambda t: (t.line, t.start))
    assert {t.kind for t in found} <= set(KINDS)


def test_semantic_tokens_of_a_line_range_are_the_full_files_tokens_on_those_lines():
    analysis = real_analysis()
    line, _ = at(real_text(), "result: handle_r_to_c(result.scalar_type()")
    ranged = tokens.semantic_tokens(analysis, line, line)
    assert ranged == [t for t in tokens.semantic_tokens(analysis) if t.line == line]
    assert [t.kind for t in ranged] == [
        "helper", "output", "method", "tangent", "method", "primal", "method",
    ]  # fmt: skip


def test_semantic_tokens_after_an_edit_follow_the_text():
    doc = ABS + "  self: grad * self.sgn()\n"
    edited = ABS + "  self: grad * at::sgn(self)\n"
    before = [(t.start, t.kind) for t in tokens.semantic_tokens(analyse(doc))]
    after = [(t.start, t.kind) for t in tokens.semantic_tokens(analyse(edited))]
    assert before == [(8, "grad"), (15, "argument"), (20, "method")]
    assert after == [(8, "grad"), (15, "namespace"), (19, "aten"), (23, "argument")]


@pytest.mark.parametrize("kind", KINDS)
def test_every_formula_kind_has_a_standard_or_documented_token_type(kind):
    token_type, modifiers = tokens.LEGEND[kind]
    assert token_type in tokens.TOKEN_TYPES
    assert set(modifiers) <= set(tokens.TOKEN_MODIFIERS)
    assert f"    {kind} " in tokens.__doc__


def test_real_files_are_those_of_the_wheel():
    assert real_files().derivatives.name == "derivatives.yaml"
