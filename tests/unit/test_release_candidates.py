"""tests/releases/candidates.py: the entries whose formulas differ between two releases' derivatives.yaml."""

from __future__ import annotations

import pytest

from tests.releases.candidates import CHANGED, NEW, REMOVED, backported, candidates, graft, main, read_entries

EARLIER = """\
- name: clamp_min(Tensor self, Scalar min) -> Tensor
  self: where(self >= min, grad, at::scalar_tensor(0., grad.options()))
  result: auto_element_wise

# a comment that the later release rewrites
- name: erf(Tensor self) -> Tensor
  self: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad

- name: sin(Tensor self) -> Tensor
  self: grad * self.cos().conj()

- name: _pdist_backward(Tensor grad, Tensor self, float p, Tensor pdist) -> Tensor
  grad: not_implemented("_pdist_backward")
  self: not_implemented("_pdist_backward")

- name: cholesky(Tensor self, bool upper=False) -> Tensor
  self: cholesky_backward(grad, upper, result)

- name: _cudnn_attention_forward(Tensor query) -> Tensor
  query: not_implemented("x")

- name: sum(Tensor self) -> Tensor
  dispatch:
    Default:
      self: grad.expand_symint(self.sym_sizes())
    AutogradNestedTensor:
      self: grad.expand(self)
"""

LATER = """\
- name: clamp_min(Tensor self, Scalar min) -> Tensor
  self: where(self > min, grad, at::scalar_tensor(0., grad.options()))
  result: auto_element_wise

# the comment, rewritten: not a formula
- name: erf(Tensor self) -> Tensor
  self: M_2_SQRTPI * exp(-(self.pow(2))) * grad

- name: sin(Tensor self) -> Tensor
  self:   grad *
    self.cos().conj()

- name: _pdist_backward(Tensor grad_output, Tensor self, float p, Tensor pdist) -> Tensor
  grad_output, self: "_pdist_backward_backward(grad, grad_output, self, p, pdist, grad_input_mask)"

- name: _cudnn_attention_forward(Tensor query, Tensor? seqused_k=None) -> Tensor
  query: not_implemented("x")

- name: linalg_polar(Tensor A) -> (Tensor U, Tensor H)
  A: linalg_polar_backward(grad_U, grad_H, A, U, H)

- name: sum(Tensor self) -> Tensor
  dispatch:
    Default:
      self: grad.expand_symint(self.sym_sizes())
    AutogradNestedTensor:
      self: grad.expand_as(self)
"""


def _by_name(found):
    return {c.name: c for c in found}


def test_an_entry_whose_formula_text_changed_is_a_changed_candidate_with_that_key():
    found = _by_name(candidates(EARLIER, LATER))
    assert found["clamp_min"].kind == CHANGED
    assert found["clamp_min"].changed_keys == ("self",)
    assert found["erf"].changed_keys == ("self",)


def test_whitespace_and_comments_are_not_changes():
    assert "sin" not in _by_name(candidates(EARLIER, LATER))


def test_an_entry_whose_schema_changed_but_not_its_formulas_is_no_candidate():
    assert "_cudnn_attention_forward" not in _by_name(candidates(EARLIER, LATER))


def test_renamed_arguments_keep_the_entry_and_show_as_keys_added_and_removed():
    pdist = _by_name(candidates(EARLIER, LATER))["_pdist_backward"]
    assert (pdist.kind, pdist.schema_changed) == (CHANGED, True)
    assert pdist.added_keys == ("grad_output, self",)
    assert pdist.removed_keys == ("grad", "self")
    assert pdist.changed_keys == ()


def test_entries_only_in_one_release_are_new_or_removed():
    found = _by_name(candidates(EARLIER, LATER))
    assert found["linalg_polar"].kind == NEW and found["linalg_polar"].earlier is None
    assert found["cholesky"].kind == REMOVED and found["cholesky"].later is None


def test_a_dispatch_section_is_compared_key_by_key():
    summed = _by_name(candidates(EARLIER, LATER))["sum"]
    assert summed.changed_keys == ("AutogradNestedTensor/self",)


def test_the_order_is_the_later_files_then_the_removed_entries():
    assert [c.name for c in candidates(EARLIER, LATER)] == [
        "clamp_min",
        "erf",
        "_pdist_backward",
        "linalg_polar",
        "sum",
        "cholesky",
    ]


def test_a_name_twice_or_a_file_that_is_no_list_is_refused():
    with pytest.raises(ValueError, match="two entries are named sin"):
        read_entries("- name: sin(Tensor self) -> Tensor\n- name: sin(Tensor self) -> Tensor\n")
    with pytest.raises(ValueError, match="not a list"):
        read_entries("name: sin\n")


def test_the_command_prints_one_line_per_candidate(monkeypatch, capsys, tmp_path):
    from tests.releases import candidates as module

    files = {"1.0": EARLIER, "1.1": LATER}
    for version, text in files.items():
        (tmp_path / version).write_text(text)
    monkeypatch.setattr(module, "release_derivatives", lambda version: tmp_path / version)
    assert main(["1.0", "1.1"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0].split() == ["changed", "clamp_min", "changed", "self"]
    assert lines[2].split()[:2] == ["changed", "_pdist_backward"] and lines[2].endswith("schema changed")
    assert len(lines) == 6


def test_graft_puts_the_later_entry_in_place_of_the_earlier_one_and_leaves_every_other_line():
    grafted = graft(EARLIER, LATER, ["erf"])
    before, after = EARLIER.splitlines(), grafted.splitlines()
    assert after[before.index("  self: 2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad")] == (
        "  self: M_2_SQRTPI * exp(-(self.pow(2))) * grad"
    )
    assert [line for line in after if "M_2_SQRTPI" not in line] == [line for line in before if "M_PI" not in line]


def test_graft_takes_a_multi_line_formula_whole_and_keeps_the_comments_between_entries():
    grafted = graft(EARLIER, LATER, ["sin", "clamp_min"])
    assert "  self:   grad *\n    self.cos().conj()\n\n- name: _pdist_backward" in grafted
    assert "# a comment that the later release rewrites\n- name: erf" in grafted
    assert "where(self > min" in grafted and "where(self >= min" not in grafted


def test_graft_refuses_an_entry_not_in_both():
    with pytest.raises(ValueError, match="linalg_polar, cholesky"):
        graft(EARLIER, LATER, ["erf", "linalg_polar", "cholesky"])


def test_a_backported_helper_becomes_the_earlier_releases_method_on_its_first_argument():
    formula = "masked_fill_inplace_if_safe(at::where(self == other, grad / 2, grad), self < other, 0)"
    assert backported(formula) == "(at::where(self == other, grad / 2, grad)).masked_fill(self < other, 0)"
    nested = "masked_fill_inplace_if_safe(masked_fill_inplace_if_safe(g, a, 0), f(b, c), 1) + x"
    assert backported(nested) == "((g).masked_fill(a, 0)).masked_fill(f(b, c), 1) + x"
    assert backported("my_masked_fill_inplace_if_safe(g, a, 0)") == "my_masked_fill_inplace_if_safe(g, a, 0)"
