"""Formula diagnostics land on the exact token in the document: plain, multi-line, and quoted scalars."""

from __future__ import annotations

import pytest

from derivls.derivatives.loader import DocumentAnalyzer

DOC = """\
- name: abs(Tensor self) -> Tensor
  self: "not_implemented(\\"a \\\\\\" b\\") * grad * self.sgnn()"
  result: handle_r_to_c(result.scalar_type(),
    self_t.conj() * self_p.sgnx())

- name: acos(Tensor self) -> Tensor
  self: 'grad * -((-self * self + 1).rsqrt()).conj() * f(''x'') * slef'
  result: auto_element_wise
"""


@pytest.fixture(scope="module")
def found(native_index, real_files):
    analysis = DocumentAnalyzer(native_index, str(real_files.native)).analyse(DOC)
    lines = DOC.splitlines()
    return [(d.code, lines[d.span.line][d.span.column : d.span.end_column]) for d in analysis.diagnostics]


def test_a_double_quoted_formula_with_escapes(found):
    assert ("formula-unknown-method", "sgnn") in found


def test_a_multi_line_plain_formula(found):
    assert ("formula-unknown-method", "sgnx") in found


def test_a_single_quoted_formula_with_doubled_quotes(found):
    assert ("formula-unknown-name", "f") in found and ("formula-unknown-name", "slef") in found


def test_nothing_else_is_reported(found):
    assert len(found) == 4, found
