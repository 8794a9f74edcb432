"""Per-entry analysis on a small hand-written native_functions.yaml: results, positions, quick fixes."""

from __future__ import annotations

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer

NATIVE = """
- func: abs(Tensor self) -> Tensor
  variants: function, method

- func: abs_(Tensor(a!) self) -> Tensor(a!)
  variants: function, method

- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)

- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method

- func: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor
  variants: function, method

- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  variants: function, method

- func: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)
  variants: method
"""


@pytest.fixture(scope="module")
def analyzer() -> DocumentAnalyzer:
    return DocumentAnalyzer(NativeIndex.from_text(NATIVE, None, "native_functions.yaml"), "native_functions.yaml")


def diagnostics(analyzer, text):
    return [(d.code, d.span.line, d.span.column, d.span.end_column) for d in analyzer.analyse(text).diagnostics]


def test_op_names_count_per_prefix_across_the_file(analyzer):
    text = (
        "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
        "  self: grad\n"
        "- name: abs(Tensor self) -> Tensor\n"
        "  self: grad * self.sgn()\n"
        "- name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
        "  self: grad\n"
    )
    analysis = analyzer.analyse(text)
    assert [e.ops for e in analysis.entries] == [
        (("Default", "AddBackward0"),),
        (("Default", "AbsBackward0"),),
        (("Default", "AddBackward1"),),
    ]
    assert analysis.diagnostics == ()


def test_a_broken_schema_keeps_the_numbering_of_later_entries(analyzer):
    text = (
        "- name: add.Tensor(Tensor self, Tensor typo, *, Scalar alpha=1) -> Tensor\n"
        "  self: grad\n"
        "- name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
        "  self: grad\n"
    )
    analysis = analyzer.analyse(text)
    assert analysis.entries[1].ops == (("Default", "AddBackward1"),)
    (diagnostic,) = analysis.diagnostics
    assert diagnostic.code == "schema-not-found"
    assert diagnostic.fixes[0].edits[0].new_text == "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    assert diagnostic.related and diagnostic.related[0].line == NATIVE.splitlines().index(
        "- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    )


def test_sizes_points_at_the_call_and_offers_sym_sizes(analyzer):
    text = "- name: abs(Tensor self) -> Tensor\n  self: grad.expand(self.sizes())\n"
    (d,) = analyzer.analyse(text).diagnostics
    assert (d.code, d.span.line, d.span.column, d.span.end_column) == ("sizes-not-supported", 1, 24, 32)
    assert d.fixes[0].edits[0].new_text == ".sym_sizes()"


def test_unknown_key_names_the_arguments_and_suggests_the_closest(analyzer):
    text = "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  othr: grad\n"
    (d,) = analyzer.analyse(text).diagnostics
    assert d.code == "unknown-name" and (d.span.line, d.span.column, d.span.end_column) == (1, 2, 6)
    assert "self, other, alpha" in d.message
    assert d.fixes[0].edits[0].new_text == "other"


def test_grads_mixed_fix_rewrites_every_grad(analyzer):
    text = (
        "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
        "  self: f(grad, grads[1], grad)\n"
    )
    (d,) = analyzer.analyse(text).diagnostics
    assert d.code == "grads-mixed"
    assert [(e.span.column, e.new_text) for e in d.fixes[0].edits] == [(10, "grads[0]"), (26, "grads[0]")]


def test_inplace_only_entry_uses_the_inplace_function(analyzer):
    analysis = analyzer.analyse("- name: abs_(Tensor(a!) self) -> Tensor(a!)\n  self: grad\n")
    (entry,) = analysis.entries
    assert str(entry.result.canonical.func) == "abs_(Tensor(a!) self) -> Tensor(a!)"
    assert entry.ops == (("Default", "AbsBackward0"),)


def test_duplicate_entries_warn_on_the_one_torchgen_keeps(analyzer):
    text = "- name: abs(Tensor self) -> Tensor\n  self: grad\n- name: abs(Tensor self) -> Tensor\n  self: grad * 2\n"
    analysis = analyzer.analyse(text)
    (d,) = analysis.diagnostics
    assert (d.code, d.severity.label, d.span.line) == ("duplicate-entry", "warning", 2)
    (per_key,) = analysis.infos.values()
    assert per_key["Default"].derivatives[0].formula == "grad * 2"


def test_auto_linear_expands_to_the_method_call_with_symint(analyzer):
    text = (
        "- name: expand(Tensor(a) self, SymInt[] size, *, bool implicit=False) -> Tensor(a)\n"
        "  self: at::sum_to(grad, self.sym_sizes())\n"
        "  result: auto_linear\n"
    )
    analysis = analyzer.analyse(text)
    assert analysis.diagnostics == ()
    (info,) = next(iter(analysis.infos.values())).values()
    assert info.forward_derivatives[0].formula == "self_t.expand_symint(size, implicit)"


def test_no_native_index_still_reports_yaml_problems():
    analysis = DocumentAnalyzer(None).analyse("- name: abs(Tensor self) -> Tensor\n  self: [grad\n")
    assert [d.code for d in analysis.diagnostics] == ["yaml-syntax"]


def test_a_formula_with_an_error_keeps_its_node_and_the_numbering_after_it(analyzer):
    text = (
        "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
        "  self: grad.expand(self.sizes())\n"
        "- name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n"
        "  self: grad\n"
    )
    analysis = analyzer.analyse(text)
    assert [e.ops for e in analysis.entries] == [(("Default", "AddBackward0"),), (("Default", "AddBackward1"),)]
    assert [d.code for d in analysis.diagnostics] == ["sizes-not-supported"]


ADD_WITH_ALPHA = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: handle_r_to_c(self.scalar_type(), grad)
  other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))
  alpha: grad.sum()
  result: self_t + maybe_multiply(other_t, alpha)
"""


def test_a_mistake_found_by_two_checks_is_reported_once(analyzer) -> None:
    # `alpha` gets a backward formula, so the forward formula's bare `alpha` is ambiguous; both the
    # tangent and the primal pass of torchgen's check find it at the same place (issue 14)
    found = diagnostics(analyzer, ADD_WITH_ALPHA)
    assert found == [("forward-uses-base-name", 4, 43, 48)]
