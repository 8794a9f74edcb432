"""Issue 51, the editor side without a server (derivls.gradcheck.manual_saves): which helpers a save of
FunctionsManual.cpp changed, which derivatives.yaml entries call them (directly or through another helper), and a
failing entry's diagnostic on the edited helper's name."""

from __future__ import annotations

from derivls.base.diagnostics import Diagnostic, Severity, Span
from derivls.codes.gradcheck import GRADCHECK_MISMATCH
from derivls.gradcheck.manual_saves import (
    EntryFailure,
    ManualSaves,
    entries_calling,
    entry_formulas,
    helper_diagnostics,
)
from tests.unit.ide_support import analyse

MANUAL = """\
#include <torch/csrc/autograd/FunctionsManual.h>

namespace torch::autograd::generated::details {

Tensor scale_grad(const Tensor& grad, double k) {
  return grad * k;
}

// acos's backward goes through another helper
Tensor acos_grad(const Tensor& grad, const Tensor& self) {
  return scale_grad(grad * -((-self * self + 1).rsqrt()).conj(), 1.0);
}

Tensor unused_helper(const Tensor& x) {
  return x;
}

} // namespace torch::autograd::generated::details
"""

DERIVATIVES = """\
- name: acos(Tensor self) -> Tensor
  self: acos_grad(grad, self)
  result: auto_element_wise

- name: asin(Tensor self) -> Tensor
  self: grad * (-self * self + 1).rsqrt().conj()
  result: auto_element_wise

- name: abs(Tensor self) -> Tensor
  self: scale_grad(grad * self.sgn(), 1.0)
  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())
"""

PATH = "/w/torch/csrc/autograd/FunctionsManual.cpp"


def saves_of(text: str = MANUAL) -> ManualSaves:
    saves = ManualSaves()
    saves.read(PATH, text)
    return saves


def test_a_save_changes_the_helpers_whose_code_changed_not_their_comments_or_place():
    saves = saves_of()
    assert saves.saved(PATH, MANUAL.replace("// acos's backward", "// a comment\n// acos's")) == frozenset()
    assert saves.saved(PATH, MANUAL.replace("return grad * k;", "return grad * k * 2;")) == {"scale_grad"}
    assert saves.saved(PATH, MANUAL.replace("return grad * k;", "return grad * k * 2;")) == frozenset()  # (again)


def test_a_helper_removed_or_added_counts_as_changed():
    saves = saves_of()
    without = MANUAL.replace("Tensor unused_helper(const Tensor& x) {\n  return x;\n}\n", "")
    assert saves.saved(PATH, without) == {"unused_helper"}
    assert saves.saved(PATH, MANUAL) == {"unused_helper"}


def test_the_first_save_of_a_file_never_read_changes_nothing_and_becomes_the_base():
    saves = ManualSaves()
    assert saves.saved(PATH, MANUAL) == frozenset()
    assert saves.edited(PATH) == frozenset()
    saves.saved(PATH, MANUAL.replace("grad * k", "grad * -k"))
    assert saves.edited(PATH) == {"scale_grad"}


def test_edited_is_measured_against_the_text_first_read_so_a_reverted_helper_is_not_edited():
    saves = saves_of()
    saves.saved(PATH, MANUAL.replace("grad * k", "grad * -k"))
    assert saves.edited(PATH) == {"scale_grad"}
    saves.saved(PATH, MANUAL)
    assert saves.edited(PATH) == frozenset()


def test_a_changed_helper_picks_the_entries_calling_it_directly_or_through_another_helper():
    analysis = analyse(DERIVATIVES)
    manual = saves_of().manual(PATH)
    lines = {placed.result.entry.name.value.split("(")[0]: placed.line for placed in analysis.entries}
    assert entries_calling(analysis, manual, {"scale_grad"}) == [lines["acos"], lines["abs"]]
    assert entries_calling(analysis, manual, {"acos_grad"}) == [lines["acos"]]
    assert entries_calling(analysis, manual, {"unused_helper"}) == []
    assert entries_calling(analysis, manual, set()) == []
    assert entries_calling(analysis, None, {"scale_grad"}) == []


def test_entry_formulas_are_every_backward_and_forward_formula_of_the_entry():
    analysis = analyse(DERIVATIVES)
    abs_entry = analysis.entries[2]
    assert entry_formulas(abs_entry) == [
        "scale_grad(grad * self.sgn(), 1.0)",
        "handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())",
    ]


def failure(line: int = 41) -> EntryFailure:
    mismatch = Diagnostic(Span(line, 8, line, 30), Severity.ERROR, GRADCHECK_MISMATCH, "gradcheck: backward wrong")
    return EntryFailure(
        "/w/tools/autograd/derivatives.yaml", "acos(Tensor self) -> Tensor", ["acos_grad(grad, self)"], [mismatch]
    )


def test_a_failing_entry_is_reported_on_the_name_of_each_edited_helper_it_reaches():
    saves = saves_of()
    edited = MANUAL.replace("grad * k", "grad * -k")
    saves.saved(PATH, edited)
    found = helper_diagnostics(saves.manual(PATH), saves.edited(PATH), [failure()])
    assert len(found) == 1
    (d,) = found
    line = edited.splitlines().index("Tensor scale_grad(const Tensor& grad, double k) {")
    assert (d.span.line, d.span.column, d.span.end_column) == (line, 7, 7 + len("scale_grad"))
    assert d.code == GRADCHECK_MISMATCH and d.severity is Severity.ERROR
    assert "`acos(Tensor self) -> Tensor` calls the edited `scale_grad`" in d.message
    assert "derivatives.yaml:42" in d.message
    assert [(r.path, r.line) for r in d.related] == [("/w/tools/autograd/derivatives.yaml", 41)]


def test_no_helper_diagnostic_without_an_edited_helper_or_a_failure():
    saves = saves_of()
    assert helper_diagnostics(saves.manual(PATH), saves.edited(PATH), [failure()]) == []
    saves.saved(PATH, MANUAL.replace("return x;", "return -x;"))  # edited, but acos does not call it
    assert helper_diagnostics(saves.manual(PATH), saves.edited(PATH), [failure()]) == []
    passing = EntryFailure("/w/d.yaml", "acos(Tensor self) -> Tensor", ["acos_grad(grad, self)"], [])
    saves.saved(PATH, MANUAL.replace("grad * k", "grad * -k"))
    assert helper_diagnostics(saves.manual(PATH), saves.edited(PATH), [passing]) == []
