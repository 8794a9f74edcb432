"""Seeded mistakes in the real 2.13 files: torchgen raises, derivls points at the mutated entry and only there."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import Severity
from derivls.derivatives.loader import DocumentAnalyzer
from tests.parity.torchgen_reference import torchgen_load


@dataclass(frozen=True)
class Mistake:
    code: str  # the diagnostic code derivls must report
    entry: str  # the `- name:` line of the entry to mutate (exact)
    old: str  # text inside that entry to replace (first occurrence)
    new: str
    native_old: str | None = None  # optional mutation of native_functions.yaml
    native_new: str | None = None


ABS = "- name: abs(Tensor self) -> Tensor"
ACOS = "- name: acos(Tensor self) -> Tensor"
ACOSH_ = "- name: acosh_(Tensor(a!) self) -> Tensor(a!)"
ADD = "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor"
MAX_DIM = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
SUM = "- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor"
EIG = "- name: linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)"
T = "- name: t(Tensor(a) self) -> Tensor(a)"
SLOGDET = "- name: _linalg_slogdet(Tensor A) -> (Tensor sign, Tensor logabsdet, Tensor LU, Tensor pivots)"
ANY = "- name: any(Tensor self) -> Tensor"
CUDNN_RNN = "- name: _cudnn_rnn(Tensor input, Tensor[] weight, int weight_stride0, Tensor? weight_buf"
MUL_NATIVE = "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor"

MISTAKES = {
    "schema-renamed-arg": Mistake("schema-not-found", ABS, "abs(Tensor self)", "abs(Tensor input)"),
    "schema-typo-overload": Mistake("schema-not-found", ADD, "add.Tensor(", "add.Tensr("),
    "schema-unknown-function": Mistake("schema-not-found", ABS, "abs(Tensor self)", "abss(Tensor self)"),
    "schema-no-parens": Mistake("unsupported-schema", ABS, "abs(Tensor self) -> Tensor", "abs"),
    "missing-name": Mistake("missing-name", ABS, "- name: abs", "- nme: abs"),
    "invalid-dispatch-key": Mistake("invalid-dispatch-key", SUM, "    AutogradNestedTensor:", "    AutogradNested:"),
    "grads-mixed": Mistake("grads-mixed", EIG, "grads[0], grads[1]", "grads[0], grad"),
    "grads-solely-zero": Mistake("grads-solely-zero", EIG, "grads[0], grads[1]", "grads[0], grads[0]"),
    "grads-out-of-bounds": Mistake("grads-out-of-bounds", EIG, "grads[1]", "grads[2]"),
    "named-grads-mixed": Mistake("named-grads-mixed", SLOGDET, "grad_sign, grad_logabsdet", "grad, grad_logabsdet"),
    "overlap": Mistake("overlap", CUDNN_RNN, "  dropout_state: non_differentiable", "  dropout_state, input: non_differentiable"),
    "duplicate-key": Mistake("duplicate-key", ABS, "  self: grad * self.sgn()\n", "  self: grad * self.sgn()\n  self: grad\n"),
    "sizes": Mistake("sizes-not-supported", ABS, "self.sgn()", "self.sizes()"),
    "sizes-arrow": Mistake("sizes-not-supported", MUL, "grad, other, self.scalar_type()", "grad, other, other->sizes()"),
    "size-n": Mistake("size-not-supported", MAX_DIM, "self.sym_sizes()", "self.size(0)"),
    "strides": Mistake("strides-not-supported", MUL, "self.scalar_type()", "self.strides()"),
    "sym-strides-other-var": Mistake("strides-multi", MUL, "grad, self, other.scalar_type()", "grad, self.sym_strides(), other.scalar_type()"),
    "forward-base-name": Mistake("forward-uses-base-name", ABS, "self_p.sgn()", "self.sgn()"),
    "auto-element-wise-inplace": Mistake("auto-element-wise-inplace", ACOSH_, '"inplace version of acosh")\n', '"inplace version of acosh")\n  result: auto_element_wise\n'),
    "auto-element-wise-two-inputs": Mistake("auto-element-wise-misuse", MUL, "result: other_t * self_p + self_t * other_p", "result: auto_element_wise"),
    "auto-element-wise-no-input": Mistake("auto-element-wise-misuse", ACOS, "self: grad * -((-self * self + 1).rsqrt()).conj()", "self: non_differentiable"),
    "auto-linear-two-outputs": Mistake("auto-linear-misuse", EIG, "linalg_eig_jvp(self_t, eigenvalues, eigenvectors, /*is_hermitian=*/false)", "auto_linear"),
    "auto-linear-no-input": Mistake("auto-linear-misuse", T, "self: grad.t()", "self: non_differentiable"),
    "unknown-output": Mistake("unknown-name", ABS, "  result: handle_r_to_c", "  reslt: handle_r_to_c"),
    "result-multi-output": Mistake("result-multi-output", MAX_DIM, "  values: gather", "  result: gather"),
    "result-index": Mistake("result-index-out-of-bounds", MAX_DIM, "  values: gather", "  result5: gather"),
    "formula-not-string": Mistake("formula-not-string", ABS, "self: grad * self.sgn()", "self: 1"),
    "formula-list": Mistake("formula-not-string", ABS, "self: grad * self.sgn()", "self: [grad]"),
    "output-differentiability-two-conditions": Mistake("output-differentiability-conditions", ANY, "[False]", '["a", "b"]'),
    "output-differentiability-not-list": Mistake("output-differentiability-not-list", ANY, "[False]", "True"),
    "yaml-syntax": Mistake("yaml-syntax", ABS, "self: grad * self.sgn()", "self: [grad * self.sgn()"),
    "entry-not-mapping": Mistake("entry-not-mapping", ABS, "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())\n", "- abs\n"),
    "dispatch-not-mapping": Mistake("dispatch-not-mapping", SUM, "  dispatch:\n    Default:", "  dispatch: Default\n  other:\n    Default:"),
    "reserved-grad-input-mask": Mistake(
        "reserved-argument-grad-input-mask", MUL, "mul.Tensor(Tensor self, Tensor other)",
        "mul.Tensor(Tensor self, Tensor grad_input_mask)", MUL_NATIVE,
        "- func: mul.Tensor(Tensor self, Tensor grad_input_mask) -> Tensor",
    ),
    "reserved-result": Mistake(
        "reserved-argument-result", MUL, "mul.Tensor(Tensor self, Tensor other)",
        "mul.Tensor(Tensor self, Tensor result)", MUL_NATIVE, "- func: mul.Tensor(Tensor self, Tensor result) -> Tensor",
    ),
}  # fmt: skip


def _mutate(text: str, anchor: str, old: str, new: str) -> tuple[str, int, int]:
    """Apply the mistake inside the entry starting at `anchor`; return text and the entry's line range."""
    start = text.index("\n" + anchor) + 1
    end = text.find("\n- ", start)
    end = len(text) if end < 0 else end + 1
    entry = text[start:end]
    assert old in entry, f"{old!r} not in entry {anchor!r}"
    mutated = entry.replace(old, new, 1)
    first_line = text.count("\n", 0, start)
    return text[:start] + mutated + text[end:], first_line, first_line + mutated.count("\n")


@pytest.fixture(scope="module")
def real_index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


@pytest.mark.parametrize("case", sorted(MISTAKES))
def test_seeded_mistake(case: str, real_files, real_index, tmp_path: Path) -> None:
    mistake = MISTAKES[case]
    text, first, last = _mutate(real_files.derivatives.read_text(), mistake.entry, mistake.old, mistake.new)
    derivatives = tmp_path / "derivatives.yaml"
    derivatives.write_text(text)
    # torchgen caches the parsed native file by path: reuse the real one unless the mistake is in it.
    native, index = real_files.native, real_index
    if mistake.native_old is not None:
        native_text = real_files.native.read_text()
        assert mistake.native_old in native_text
        native_text = native_text.replace(mistake.native_old, mistake.native_new or "", 1)
        native = tmp_path / "native_functions.yaml"
        native.write_text(native_text)
        index = NativeIndex.from_text(native_text, real_files.tags.read_text(), str(native))

    with pytest.raises(Exception):  # noqa: B017 - torchgen raises many kinds; any is a rejection
        torchgen_load(derivatives, native, real_files.tags)

    analysis = DocumentAnalyzer(index, str(native)).analyse(text)
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    assert errors, "derivls found no error"
    assert mistake.code in {d.code for d in errors}, [(d.code, d.message) for d in errors]
    outside = [d for d in errors if not first <= d.span.line <= last]
    assert not outside, [(d.span.line + 1, d.code, d.message) for d in outside]
    located = [d for d in errors if d.code == mistake.code]
    assert all(first <= d.span.line <= last for d in located)


def test_at_least_thirty_mistakes() -> None:
    assert len(MISTAKES) >= 30


def test_unmutated_real_files_have_no_errors_or_warnings(real_files, real_index) -> None:
    analysis = DocumentAnalyzer(real_index, str(real_files.native)).analyse(real_files.derivatives.read_text())
    assert [(d.span.line + 1, d.code, d.message) for d in analysis.diagnostics] == []
