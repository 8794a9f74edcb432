"""The legacy profile's checks: one seeded mistake of each 2021 error kind, located in its entry.

Each case takes the real 2021 derivatives.yaml, changes one entry (or appends one), analyses
the whole file by the 2021 rules and asserts that the expected diagnostic is there, on the
expected text, and that every error of the file lies inside the changed entry.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import Diagnostic, Severity
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer

# 2021-style functions the real file lacks, for the checks that need them.
EXTRA_NATIVE = """
- func: legacy_mask_op(Tensor self, bool[3] grad_input_mask) -> Tensor
  use_c10_dispatcher: full

- func: legacy_out_only.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  use_c10_dispatcher: full
"""


@pytest.fixture(scope="module")
def analyzer(legacy_dir: Path) -> DocumentAnalyzer:
    native = (legacy_dir / "native_functions.yaml").read_text(encoding="utf-8") + EXTRA_NATIVE
    index = NativeIndex.from_text(native, None, str(legacy_dir / "native_functions.yaml"), legacy=True)
    return DocumentAnalyzer(index, index.path, "legacy")


@pytest.fixture(scope="module")
def original(legacy_dir: Path) -> str:
    return (legacy_dir / "derivatives.yaml").read_text(encoding="utf-8")


@dataclass
class Seeded:
    text: str
    analysis: DocumentAnalysis
    first_line: int  # 0-based lines of the changed entry
    last_line: int

    def span_text(self, d: Diagnostic) -> str:
        lines = self.text.split("\n")
        if d.span.line == d.span.end_line:
            return lines[d.span.line][d.span.column : d.span.end_column]
        parts = [lines[d.span.line][d.span.column :]]
        parts += lines[d.span.line + 1 : d.span.end_line]
        parts.append(lines[d.span.end_line][: d.span.end_column])
        return "\n".join(parts)

    def with_code(self, code: str) -> list[Diagnostic]:
        return [d for d in self.analysis.diagnostics if d.code == code]

    def errors(self) -> list[Diagnostic]:
        return [d for d in self.analysis.diagnostics if d.severity == Severity.ERROR]


def seed(analyzer: DocumentAnalyzer, original: str, old: str | None, new: str) -> Seeded:
    """Replace the entry text `old` by `new` (or append `new` when `old` is None)."""
    if old is None:
        text = original.rstrip("\n") + "\n\n" + new
        start = text.index(new)
    else:
        assert original.count(old) == 1, old
        start = original.index(old)
        text = original.replace(old, new)
    first = text.count("\n", 0, start)
    last = first + new.rstrip("\n").count("\n")
    return Seeded(text, analyzer.analyse(text), first, last)


def assert_located(s: Seeded, code: str, token: str, severity: Severity = Severity.ERROR) -> Diagnostic:
    found = s.with_code(code)
    assert found, f"no {code} diagnostic; got {[(d.code, d.message) for d in s.analysis.diagnostics]}"
    d = found[0]
    assert d.severity == severity
    assert s.first_line <= d.span.line <= d.span.end_line <= s.last_line, (d, s.first_line, s.last_line)
    assert s.span_text(d) == token
    outside = [e for e in s.errors() if not s.first_line <= e.span.line <= s.last_line]
    assert outside == [], outside
    return d


ABS = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
ADD = (
    "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
    "  self: handle_r_to_c(self.scalar_type(), grad)\n"
    "  other: handle_r_to_c(other.scalar_type(), maybe_multiply(grad, alpha.conj()))\n"
)
KTHVALUE = (
    "- name: kthvalue(Tensor self, int k, int dim=-1, bool keepdim=False) -> (Tensor values, Tensor indices)\n"
    "  self: value_selecting_reduction_backward(grad, dim, indices, self.sizes(), keepdim)\n"
)
ATAN2 = "- name: atan2(Tensor self, Tensor other) -> Tensor\n  self, other: atan2_backward(grad, self, other, grad_input_mask)\n"


def test_the_file_itself_is_clean(analyzer: DocumentAnalyzer, original: str) -> None:
    assert [d for d in analyzer.analyse(original).diagnostics if d.severity == Severity.ERROR] == []


def test_schema_not_found(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, ABS.replace("Tensor self)", "Tensor input)"))
    d = assert_located(s, "schema-not-found", "abs(Tensor input) -> Tensor")
    assert "abs(Tensor self) -> Tensor" in d.message  # the available signatures
    assert d.fixes and d.fixes[0].edits[0].new_text == "abs(Tensor self) -> Tensor"


def test_argument_named_grad_input_mask(analyzer, original) -> None:
    s = seed(
        analyzer,
        original,
        None,
        "- name: legacy_mask_op(Tensor self, bool[3] grad_input_mask) -> Tensor\n  self: grad\n",
    )
    assert_located(s, "reserved-argument-grad-input-mask", "grad_input_mask")


def test_no_canonical_function(analyzer, original) -> None:
    s = seed(
        analyzer,
        original,
        None,
        "- name: legacy_out_only.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  self: grad\n",
    )
    assert_located(s, "no-canonical-function", "legacy_out_only.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)")


def test_grads_mixed(analyzer, original) -> None:
    s = seed(analyzer, original, KTHVALUE, KTHVALUE.replace("(grad, dim", "(grad + grads[1], dim"))
    d = assert_located(s, "grads-mixed", "grads")
    assert d.fixes and d.fixes[0].edits[0].new_text == "grads[0]"


def test_solely_grads_zero(analyzer, original) -> None:
    s = seed(analyzer, original, KTHVALUE, KTHVALUE.replace("(grad, dim", "(grads[0], dim"))
    d = assert_located(s, "grads-solely-zero", "grads[0]")
    assert d.fixes and d.fixes[0].edits[0].new_text == "grad"


def test_grads_out_of_bounds(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, ABS.replace("grad * self", "grads[1] * self"))
    d = assert_located(s, "grads-out-of-bounds", "grads[1]")
    assert "abs only returns 1 output" in d.message


def test_overlap(analyzer, original) -> None:
    s = seed(analyzer, original, ATAN2, ATAN2 + "  other: non_differentiable\n")
    assert_located(s, "overlap", "other")


def test_strides_of_another_variable(analyzer, original) -> None:
    mutated = ADD.replace("handle_r_to_c(self.scalar_type(), grad)", "grad.as_strided(other.sizes(), other.strides())")
    s = seed(analyzer, original, ADD, mutated)
    assert_located(s, "strides-multi", "other.strides()")


def test_strides_of_its_own_variable_is_fine(analyzer, original) -> None:
    mutated = ABS.replace("grad * self.sgn()", "grad.as_strided(self.sizes(), self.strides())")
    s = seed(analyzer, original, ABS, mutated)
    assert s.errors() == []
    (entry,) = [e for e in s.analysis.entries if e.line == s.first_line]
    (derivative,) = entry.result.sections[0].info.derivatives
    assert derivative.formula == "grad.as_strided(self_sizes, self_strides)"
    saved = {(a.nctype.name, a.nctype.cpp_type(), a.expr) for a in derivative.saved_inputs}
    assert saved == {
        ("self_sizes", "IntArrayRef", "self.sizes()"),
        ("self_strides", "IntArrayRef", 'strides_or_error(self, "self")'),
    }


def test_dispatch_sections_do_not_exist(analyzer, original) -> None:
    mutated = "- name: abs(Tensor self) -> Tensor\n  dispatch:\n    Default:\n      self: grad * self.sgn()\n"
    s = seed(analyzer, original, ABS, mutated)
    assert_located(s, "dispatch-not-supported", "Default")


def test_formula_not_a_string(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, ABS.replace("grad * self.sgn()", "[grad]"))
    assert_located(s, "formula-not-string", "[grad]")


def test_missing_name(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, "- self: grad * self.sgn()\n")
    assert_located(s, "missing-name", "s")  # the first character of the entry


def test_unknown_name_is_a_warning(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, ABS.replace("  self:", "  slef:"))
    d = assert_located(s, "unknown-name", "slef", Severity.WARNING)
    assert d.fixes and d.fixes[0].edits[0].new_text == "self"
    assert s.errors() == []


def test_duplicate_key_is_a_warning(analyzer, original) -> None:
    s = seed(analyzer, original, ABS, ABS + "  self: grad\n")
    assert_located(s, "duplicate-key", "self", Severity.WARNING)
    assert s.errors() == []


def test_forward_formulas_are_not_recognised(analyzer, original) -> None:
    """`result:` was not a key in 2021: it names no input, so it is only a warning, and no forward derivative."""
    s = seed(analyzer, original, ABS, ABS + "  result: self_t * self_p.sgn()\n")
    assert_located(s, "unknown-name", "result", Severity.WARNING)
    (entry,) = [e for e in s.analysis.entries if e.line == s.first_line]
    info = entry.result.sections[0].info
    assert info.forward_derivatives == ()
    assert [d.var_names for d in info.derivatives] == [("result",), ("self",)]


def test_edits_elsewhere_do_not_move_other_ops(analyzer, original) -> None:
    before = analyzer.analyse(original)
    s = seed(analyzer, original, ABS, ABS.replace("Tensor self)", "Tensor input)"))
    ops_before = {e.result.schema_string: e.ops for e in before.entries}
    ops_after = {e.result.schema_string: e.ops for e in s.analysis.entries}
    assert ops_after["add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"] == (
        ("Default", "AddBackward0"),
    )
    assert ops_before["abs(Tensor self) -> Tensor"] == (("Default", "AbsBackward"),)
    assert ops_after["abs(Tensor input) -> Tensor"] == (("Default", "AbsBackward"),)  # guessed from the formula
