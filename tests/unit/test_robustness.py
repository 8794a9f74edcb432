"""Bad input gives diagnostics, never an exception: hand-picked oddities and hypothesis-generated text."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer

NATIVE = """- func: abs(Tensor self) -> Tensor
  variants: function, method
- func: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  variants: function, method
"""
ABS = "- name: abs(Tensor self) -> Tensor\n"


@pytest.fixture(scope="module")
def analyzer() -> DocumentAnalyzer:
    return DocumentAnalyzer(NativeIndex.from_text(NATIVE, None, "native_functions.yaml"))


ODDITIES = {
    "empty value": (ABS + "  self:\n", "formula-not-string"),
    "alias": ("- &a name: abs(Tensor self) -> Tensor\n  self: *a\n", None),
    "python tag": (ABS + "  self: !!python/object:os.system ls\n", "yaml-value"),
    "name list": ("- name: [abs]\n  self: grad\n", "name-not-string"),
    "flow mapping": ("- {name: 'abs(Tensor self) -> Tensor', self: grad}\n", None),
    "int key": (ABS + "  1: grad\n", "key-not-string"),
    "bool key": (ABS + "  true: grad\n", "key-not-string"),
    "int output_differentiability": (
        ABS + "  output_differentiability: [1]\n  self: grad\n",
        "output-differentiability-item",
    ),
    "empty output_differentiability": (ABS + "  output_differentiability: []\n  self: grad\n", None),
    "dispatch list": (ABS + "  dispatch: [Default]\n", "dispatch-not-mapping"),
    "section scalar": (ABS + "  dispatch:\n    Default: grad\n", "section-not-mapping"),
    "ignored key": (ABS + "  self: grad\n  dispatch:\n    Default:\n      self: grad\n", "ignored-key"),
    "int dispatch key": (ABS + "  dispatch:\n    1:\n      self: grad\n", "invalid-dispatch-key"),
    "empty names": (ABS + "  ',': grad\n", "unknown-name"),
    "trailing comma": (ABS + "  'self,': grad\n", "unknown-name"),
    "tab indentation": (ABS + "\tself: grad\n", "yaml-syntax"),
    "document marker": ("---\n" + ABS + "  self: grad\n", None),
    "two documents": (ABS + "  self: grad\n---\n- name: x\n", "yaml-syntax"),
    "bare dash": ("-\n", "entry-not-mapping"),
    "huge grads index": (
        "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n  self: grads[99999999999999999999]\n",
        "grads-out-of-bounds",
    ),
    "unicode": (ABS + "  self: grad * é.sgn()  # ünïcödé\n", None),
    "result of nothing": (
        "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n  result: x\n",
        "result-multi-output",
    ),
}


@pytest.mark.parametrize("case", sorted(ODDITIES))
def test_oddities_are_diagnosed(analyzer, case):
    text, code = ODDITIES[case]
    analysis = analyzer.analyse(text)
    codes = [d.code for d in analysis.diagnostics]
    if code is not None:
        assert code in codes
    for d in analysis.diagnostics:
        assert d.span.line >= 0 and d.span.column >= 0 and d.message


pieces = st.sampled_from(
    ["- ", "name: ", "abs(Tensor self) -> Tensor", "  ", "self", "result", ": ", "grad", "grads[1]", "\n",
     "dispatch:", "Default:", "output_differentiability: [True]", "'", '"', "[", "{", "&a ", "*a", "#", ",", "\t",
     "non_differentiable", "auto_linear", "auto_element_wise", ".sizes()", "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"]
)  # fmt: skip


@settings(max_examples=300, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.lists(pieces, max_size=40).map("".join))
def test_any_text_is_analysed_without_exceptions(analyzer, text):
    analyzer.analyse(text)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(st.text(max_size=200))
def test_random_unicode_is_analysed_without_exceptions(analyzer, text):
    analyzer.analyse(text)
