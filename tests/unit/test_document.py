"""Splitting derivatives.yaml into entries and keeping every key's position."""

from __future__ import annotations

from derivls.base.diagnostics import Span
from derivls.derivatives.document import parse_chunk, split_entries

TEXT = """# a comment before the first entry
- name: abs(Tensor self) -> Tensor
  self: grad * self.sgn()
  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())

# a comment between entries
- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    Default:
      self: grad.expand_symint(self.sym_sizes())
      result: auto_linear
    AutogradNestedTensor:
      self: grad.expand(self)
"""


def test_split_keeps_line_numbers_and_preamble():
    chunks = split_entries(TEXT)
    assert [(c.start_line, c.is_entry) for c in chunks] == [(0, False), (1, True), (6, True)]
    assert "".join(c.text for c in chunks) == TEXT


def test_split_of_text_without_entries():
    assert split_entries("") == []
    assert [c.is_entry for c in split_entries("# only a comment\n")] == [False]


def test_entry_spans_are_relative_to_the_chunk():
    chunk = split_entries(TEXT)[1]
    (entry,), diagnostics = parse_chunk(chunk.text)
    assert diagnostics == ()
    assert entry.name is not None and entry.name.value == "abs(Tensor self) -> Tensor"
    assert entry.name.span == Span(0, 8, 0, 34)
    (section,) = entry.sections
    assert not section.explicit and section.key.value == "Default"
    keys = [(i.key.value, i.key.span.line, i.key.span.column) for i in section.items]
    assert keys == [("self", 1, 2), ("result", 2, 2)]
    assert section.items[0].value.locate("self.sgn()") == Span(1, 15, 1, 25)


def test_dispatch_sections():
    chunk = split_entries(TEXT)[2]
    (entry,), _ = parse_chunk(chunk.text)
    assert [(s.key.value, s.explicit, len(s.items)) for s in entry.sections] == [
        ("Default", True, 2),
        ("AutogradNestedTensor", True, 1),
    ]
    assert entry.sections[1].key.span == Span(5, 4, 5, 24)


def test_yaml_error_is_located_and_costs_only_its_entry():
    broken = TEXT.replace("self: grad * self.sgn()", "self: [grad * self.sgn()")
    chunks = split_entries(broken)
    entries, diagnostics = parse_chunk(chunks[1].text)
    assert entries == ()
    (diagnostic,) = diagnostics
    assert diagnostic.code == "yaml-syntax"
    assert 1 <= diagnostic.span.line <= 3
    later, later_diagnostics = parse_chunk(chunks[2].text)
    assert len(later) == 1 and later_diagnostics == ()


def test_duplicate_keys_are_reported_where_the_second_stands():
    (entry,), _ = parse_chunk("- name: abs(Tensor self) -> Tensor\n  self: grad\n  self: grad * 2\n")
    (diagnostic,) = entry.diagnostics
    assert diagnostic.code == "duplicate-key"
    assert diagnostic.span.line == 2


def test_a_quoted_multiline_formula_locates_tokens_on_their_own_line():
    text = '- name: f(Tensor self) -> Tensor\n  self: "grad *\n    self.sizes()"\n'
    (entry,), _ = parse_chunk(text)
    item = entry.sections[0].items[0]
    assert item.value.value == "grad * self.sizes()"
    assert item.value.locate("self.sizes()") == Span(2, 4, 2, 16)


def test_top_level_mapping_is_reported():
    entries, diagnostics = parse_chunk("name: abs(Tensor self) -> Tensor\n")
    assert entries == () and diagnostics[0].code == "not-a-list"
