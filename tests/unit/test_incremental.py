"""Incremental analysis equals analysis from scratch, for random edit sequences on the real file."""

from __future__ import annotations

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from derivls.aten.native import NativeIndex
from derivls.derivatives.dump import dump
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer

SNIPPETS = [
    "",
    "x",
    "\n",
    "- ",
    "  self: grad\n",
    ".sizes()",
    "grads[0]",
    ":",
    "'",
    "#",
    "\n- name: abs(Tensor self) -> Tensor\n",
]


@pytest.fixture(scope="module")
def index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


@pytest.fixture(scope="module")
def text(real_files) -> str:
    return real_files.derivatives.read_text()


def fingerprint(analysis: DocumentAnalysis):
    diagnostics = [(d.span, d.code, d.message) for d in analysis.diagnostics]
    entries = [(e.line, e.ops) for e in analysis.entries]
    return diagnostics, entries, dump(analysis)


edits = st.lists(st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(SNIPPETS)), min_size=1, max_size=4)


@settings(max_examples=12, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(edits=edits)
def test_incremental_equals_from_scratch(index, text, edits):
    incremental = DocumentAnalyzer(index)
    incremental.analyse(text)
    current = text
    for where, length, insert in edits:
        at = int(where * len(current))
        current = current[:at] + insert + current[at + length :]
        result = incremental.analyse(current)
    assert fingerprint(result) == fingerprint(DocumentAnalyzer(index).analyse(current))


def test_an_edit_reanalyses_only_the_touched_entry(index, text, monkeypatch):
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    calls = []
    original = analyzer._analyse_entry
    monkeypatch.setattr(analyzer, "_analyse_entry", lambda entry: calls.append(entry) or original(entry))
    edited = text.replace("self: grad * self.sgn()", "self: grad * self.sgn() * 2", 1)
    analysis = analyzer.analyse(edited)
    assert len(calls) == 1
    assert calls[0].name.value == "abs(Tensor self) -> Tensor"
    assert not analysis.diagnostics


def test_inserting_lines_shifts_later_positions(index, text):
    analyzer = DocumentAnalyzer(index)
    before = analyzer.analyse(text)
    after = analyzer.analyse("# new first line\n# and another\n" + text)
    assert [e.line + 2 for e in before.entries] == [e.line for e in after.entries]
    assert [e.ops for e in before.entries] == [e.ops for e in after.entries]


def test_a_keystroke_inside_a_formula_takes_the_in_place_path(index, text, monkeypatch):
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    full_passes = []
    original = analyzer._full_pass
    monkeypatch.setattr(analyzer, "_full_pass", lambda chunks: full_passes.append(1) or original(chunks))
    edited = text.replace("self: grad * self.sgn()", "self: grad * self.sizes()", 1)
    analysis = analyzer.analyse(edited)
    assert full_passes == []
    assert [d.code for d in analysis.diagnostics] == ["sizes-not-supported"]
    assert fingerprint(analysis) == fingerprint(DocumentAnalyzer(index).analyse(edited))
    # Renaming the entry changes its node name: every later number may move, so the full pass runs.
    analyzer.analyse(edited.replace("- name: abs(Tensor self)", "- name: absolute(Tensor self)", 1))
    assert full_passes == [1]


def test_identical_entries_keep_working_after_in_place_edits(index):
    entry = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(entry + entry)
    for edited in (entry + entry.replace("sgn", "sgn2"), entry.replace("sgn", "sgn3") + entry.replace("sgn", "sgn2")):
        assert fingerprint(analyzer.analyse(edited)) == fingerprint(DocumentAnalyzer(index).analyse(edited))
