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


FIXABLE = """\
- name: native_batch_norm(Tensor input, Tensor? weight, Tensor? bias, Tensor? running_mean, Tensor? running_var, bool training, float momentum, float eps) -> (Tensor, Tensor, Tensor)
  input, weight, bias: "grad.defined() ? native_batch_norm_backward(grad, input, weight.value(), running_mean, running_var, result1, result2, training, eps, grad_input_mask) : std::tuple<Tensor, Tensor, Tensor>()"
  result0: batch_norm_jvp(input_p, input_t, weight_p, weight_t, bias_p, bias_t, running_mean, running_var, result1, result2, training, eps) * running_mean.numel()
"""


def apply(text: str, edit) -> str:
    lines = text.split("\n")
    span = edit.span
    assert span.line == span.end_line
    line = lines[span.line]
    lines[span.line] = line[: span.column] + edit.new_text + line[span.end_column :]
    return "\n".join(lines)


def test_the_fixes_of_a_method_on_the_wrong_receiver_make_the_formula_compile(native_index, real_files):
    analyzer = DocumentAnalyzer(native_index, str(real_files.native))
    diagnostics = analyzer.analyse(FIXABLE).diagnostics
    assert [d.code for d in diagnostics] == ["formula-unknown-method", "formula-unknown-method"]
    titles = [d.fixes[0].title for d in diagnostics]
    assert titles == ["Remove '.value()' ('weight' is a Tensor here)", "Use 'running_mean->numel'"]
    text = FIXABLE
    for d in reversed(diagnostics):  # later lines first: earlier spans stay valid
        [edit] = d.fixes[0].edits
        text = apply(text, edit)
    assert "(grad, input, weight, running_mean" in text and "* running_mean->numel()" in text
    assert analyzer.analyse(text).diagnostics == ()
