"""Incremental analysis equals analysis from scratch, for random edit sequences on the real file
and on a file 10x as large (bench/bench_scale.py's consistent copies).

The property tests draw the same examples on every run (derandomized, no example database): the
default run is reproducible, and a long random run (`-m slow`) draws thousands of sequences. A
failing example is not shrunk (it is a few edits) and is reported as its edits and the first
difference, never as the file."""

from __future__ import annotations

import json
import sys
from pathlib import Path

import pytest
from hypothesis import HealthCheck, Phase, example, given, note, settings
from hypothesis import strategies as st

from derivls.aten.native import NativeIndex
from derivls.derivatives.document import Chunk
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
    "- name: no_such_op(Tensor self) -> Tensor",
]

# Every property test: the same examples each run, nothing written to an example database, and no
# shrinking (an example is a few edits already; shrinking one over the whole file took minutes).
FIXED = settings(
    derandomize=True,
    database=None,
    deadline=None,
    phases=(Phase.explicit, Phase.generate),
    suppress_health_check=[HealthCheck.function_scoped_fixture],
)


class FileText(str):
    """A file's text that a failing example shows by its length (Hypothesis shows the fixtures too)."""

    def __repr__(self) -> str:
        return f"<a text of {len(self)} characters>"


@pytest.fixture(scope="module")
def index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


@pytest.fixture(scope="module")
def text(real_files) -> str:
    return FileText(real_files.derivatives.read_text())


def fingerprint(analysis: DocumentAnalysis):
    diagnostics = [(d.span, d.code, d.message) for d in analysis.diagnostics]
    entries = [(e.line, e.ops) for e in analysis.entries]
    return diagnostics, entries, dump(analysis), list(analysis.entry_lines)


def sources(analysis: DocumentAnalysis):
    """What the dump is made of (its infos with their op names and lines, the dispatch keys used): equal
    sources give equal dumps, and comparing them costs a fiftieth of dumping."""
    diagnostics = [(d.span, d.code, d.message) for d in analysis.diagnostics]
    entries = [(e.line, e.ops) for e in analysis.entries]
    dumped = analysis.infos, analysis.info_lines, analysis.used_dispatch_keys
    return diagnostics, entries, dumped, list(analysis.entry_lines)


def first_difference(got: DocumentAnalysis, expected: DocumentAnalysis, dumped: bool = True) -> str | None:
    """Where two analyses part (a line or two), or None when they agree: never the whole file.
    `dumped=False`: the dump's sources are compared, and the dumps only when they differ."""
    if not dumped and sources(got) == sources(expected):
        return None
    for what, a, b in zip(("diagnostics", "entries", "dump", "entry lines"), fingerprint(got), fingerprint(expected)):
        if a != b:
            if what == "dump":
                a, b = (json.dumps(d, indent=1, sort_keys=True, default=repr).splitlines() for d in (a, b))
            i = next((i for i, (x, y) in enumerate(zip(a, b)) if x != y), min(len(a), len(b)))
            shown = [repr(v)[:300] for v in (a[i] if i < len(a) else "(none)", b[i] if i < len(b) else "(none)")]
            return f"{what} #{i} (of {len(a)} / {len(b)}): incremental {shown[0]}, from scratch {shown[1]}"
    return None


def assert_same(got: DocumentAnalysis, expected: DocumentAnalysis, applied: list, dumped: bool = True) -> None:
    difference = first_difference(got, expected, dumped)
    if difference is not None:
        raise AssertionError(f"after the edits {applied}: {difference}")


# An edit: where (a float: that fraction of the text; an int: that offset), how many characters it
# replaces, what it inserts, and whether it is moved to the start of its line (Enter before a `- name:`).
edit = st.tuples(st.floats(0, 1), st.integers(0, 40), st.sampled_from(SNIPPETS), st.booleans())
edits = st.lists(edit, min_size=1, max_size=4)


def apply(current: str, where: float | int, length: int, insert: str, line_start: bool = False):
    """The text after one edit, and the edit as told: (start, end, new length)."""
    at = int(where * len(current)) if isinstance(where, float) else min(max(where, 0), len(current))
    if line_start:
        at = current.rfind("\n", 0, at) + 1
    end = min(at + length, len(current))
    return current[:at] + insert + current[end:], (at, end, len(insert))


def described(current: str, told: tuple[int, int, int], insert: str) -> tuple[int, str, str]:
    """An edit as a failing example shows it: where, what it replaced (cut short), what it inserted."""
    at, end, _ = told
    replaced = current[at:end]
    return at, replaced if len(replaced) <= 40 else replaced[:37] + "...", insert


def edit_and_compare(
    index, text, edits, told: bool, analyzer: DocumentAnalyzer | None = None, scratch=None, dumped: bool = True
):
    """Apply `edits` one analysis each (telling the analyzer what changed if `told`), then compare the
    result with an analysis of the final text from scratch (`scratch(text)`, else a new analyzer's);
    `dumped`: the dumps (else their sources: see first_difference)."""
    incremental = analyzer or DocumentAnalyzer(index)
    if analyzer is None:
        incremental.analyse(text)
    current = text
    applied = []
    for step in edits:
        edited, change = apply(current, *step)
        applied.append(described(current, change, step[2]))
        note(f"edit {len(applied)}: at {change[0]}, {applied[-1][1]!r} -> {step[2]!r}")
        current = edited
        result = incremental.analyse(current, [change] if told else None)
        assert len(result.entry_lines) == len(result.entries)  # computed: the next in-place edit hands it on
    expected = scratch(current) if scratch is not None else DocumentAnalyzer(index).analyse(current)
    assert_same(result, expected, applied, dumped)


@settings(FIXED, max_examples=12)
@given(edits=edits)
def test_incremental_equals_from_scratch(index, text, edits):
    edit_and_compare(index, text, edits, told=False)


@settings(FIXED, max_examples=12)
@given(edits=edits)
def test_told_edits_give_what_the_whole_text_gives(index, text, edits):
    edit_and_compare(index, text, edits, told=True)


nearby = st.lists(
    st.tuples(st.integers(-300, 300), st.integers(0, 40), st.sampled_from(SNIPPETS), st.booleans()),
    min_size=1,
    max_size=6,
)

ACOS = "- name: acos(Tensor self) -> Tensor"
# Issue 49: a `name:` line replaced by one naming no function, then Enter at its start. The diagnostic
# on that line stayed where it was (the line before the entry it is about's new place).
ENTER_BEFORE_A_BROKEN_NAME = [(0, len(ACOS), "- name: acoz(Tensor self) -> Tensor", False), (0, 0, "\n", False)]


def placed_near(text: str, first: float | str, edits) -> list:
    """`edits` at offsets from `first`: a fraction of the text, or the text it starts at."""
    at = text.index(first) if isinstance(first, str) else int(first * len(text))
    return [(at + delta, length, insert, line_start) for delta, length, insert, line_start in edits]


@settings(FIXED, max_examples=6)
@given(first=st.floats(0, 1), edits=nearby)
@example(first=ACOS, edits=ENTER_BEFORE_A_BROKEN_NAME)
def test_told_edits_near_each_other_give_what_the_whole_text_gives(index, text, first, edits):
    """Typing: edits close together, so the chunk ends an edit leaves shifted are read by the next."""
    edit_and_compare(index, text, placed_near(text, first, edits), told=True)


@pytest.mark.parametrize("told", [True, False], ids=["told edits", "whole texts"])
def test_enter_before_a_name_line_moves_its_diagnostic_down_with_it(index, text, told):
    """Issue 49: a `name:` line made wrong, then Enter at its start (the edits told, or the texts given
    whole): the `schema-not-found` is on the name's new line, as from scratch (it stayed one line up)."""
    at = text.index(ACOS)
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    wrong = text[:at] + "- name: acoz(Tensor self) -> Tensor" + text[at + len(ACOS) :]
    analyzer.analyse(wrong, [(at, at + len(ACOS), len(ACOS))] if told else None)
    entered = wrong[:at] + "\n" + wrong[at:]
    analysis = analyzer.analyse(entered, [(at, at, 1)] if told else None)
    line = entered.count("\n", 0, at + 1)
    assert [(d.code, d.span.line) for d in analysis.diagnostics] == [("schema-not-found", line)]
    assert fingerprint(analysis) == fingerprint(DocumentAnalyzer(index).analyse(entered))


class Scratch:
    """Analyses from scratch (a whole-text split and file pass, by an analyzer that never saw the text
    before), with each chunk's entry results kept by its text across calls: those depend on nothing
    else, and the long run would spend its minutes analysing the same 690 entries again."""

    def __init__(self, index: NativeIndex) -> None:
        self.index = index
        self.memo: dict = {}
        self.runs = 0

    def fresh(self) -> DocumentAnalyzer:
        """An analyzer that never saw a text, but for the chunk results kept."""
        analyzer = DocumentAnalyzer(self.index)
        analyzer._cache = dict(self.memo)
        return analyzer

    def keep(self, analyzer: DocumentAnalyzer) -> None:
        if len(self.memo) > 20_000:
            self.memo.clear()
        self.memo.update(analyzer._cache)

    def __call__(self, text: str) -> DocumentAnalysis:
        analyzer = self.fresh()
        analysis = analyzer.analyse(text)
        self.keep(analyzer)
        return analysis


@pytest.fixture(scope="module")
def scratch(index) -> Scratch:
    return Scratch(index)


@pytest.mark.slow  # 2,000 sequences, one core: 3 min 57 s measured (200 s of CPU) on a busy machine
@settings(FIXED, max_examples=2000, derandomize=False, print_blob=True)
@given(first=st.floats(0, 1), name=st.booleans(), edits=nearby, spread=edits)
def test_thousands_of_told_edit_sequences_give_what_the_whole_text_gives(
    index, text, scratch, first, name, edits, spread
):
    """The long random run (`-m slow`): edits close together, then some anywhere in the file, told one
    by one, over the whole real file; every diagnostic's range, the entries and the dump (its sources each
    time, the JSON one time in ten) as from scratch. Half the sequences first break an entry's name (a
    diagnostic on its `- name:` line, the first line of its chunk, which the edits around it move). Random
    (a failure prints its edits, and a blob for @reproduce_failure)."""
    incremental = scratch.fresh()  # (a new analyzer each time: from its full pass on, what it does is its own)
    incremental.analyse(text)
    start = int(first * len(text))
    if name and (found := text.find("\n- name: ", start)) >= 0:
        start = found + len("\n- name: ")
        edits = [(start, 0, "x", False)] + placed_near(text, start / len(text), edits) + spread
    else:
        edits = placed_near(text, first, edits) + spread
    scratch.runs += 1
    dumped = scratch.runs % 10 == 0  # the dumps themselves one time in ten (their sources every time)
    edit_and_compare(index, text, edits, told=True, analyzer=incremental, scratch=scratch, dumped=dumped)
    scratch.keep(incremental)


def test_several_told_edits_at_once(index, text):
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    at = text.index("self: grad * self.sgn()")
    edited = text[:at] + "self: grad * self.sizes()" + text[at + len("self: grad * self.sgn()") :]
    edited = edited[:10] + "\n" + edited[10:]
    changes = [(at, at + len("self: grad * self.sgn()"), len("self: grad * self.sizes()")), (10, 10, 1)]
    assert fingerprint(analyzer.analyse(edited, changes)) == fingerprint(DocumentAnalyzer(index).analyse(edited))


def test_edits_that_do_not_add_up_fall_back_to_the_whole_text(index, text):
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    edited = "# a comment\n" + text
    assert fingerprint(analyzer.analyse(edited, [(0, 0, 1)])) == fingerprint(DocumentAnalyzer(index).analyse(edited))


@pytest.fixture(scope="module")
def scaled(tmp_path_factory) -> tuple[NativeIndex, str]:
    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "bench"))
    try:
        from bench_scale import build
    finally:
        sys.path.pop(0)
    derivatives, native, tags = build(10, tmp_path_factory.mktemp("scaled"))
    return NativeIndex.load(str(native), str(tags)), FileText(derivatives.read_text(encoding="utf-8"))


@pytest.mark.slow  # a 10x file: half a minute
@settings(FIXED, max_examples=3)
@given(first=st.floats(0, 1), edits=nearby)
def test_told_edits_on_a_file_10x_as_large_give_what_the_whole_text_gives(scaled, first, edits):
    index, text = scaled
    placed = placed_near(text, first, edits)
    placed += [(0.999, 0, "x", False), (0.0005, 3, "\n", False)]  # far apart: chunk ends shifted on both sides
    edit_and_compare(index, text, placed, told=True)


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
    before = analyzer.analyse(text.replace("self: grad * self.sgn()", "self: grad * self.sgn( )", 1)).entry_lines
    analysis = analyzer.analyse(edited)
    assert analysis.entry_lines is before  # handed on: no line moved
    assert full_passes == []
    assert [d.code for d in analysis.diagnostics] == ["sizes-not-supported"]
    assert fingerprint(analysis) == fingerprint(DocumentAnalyzer(index).analyse(edited))
    # Renaming the entry changes its node name: every later number may move, so the full pass runs.
    analyzer.analyse(edited.replace("- name: abs(Tensor self)", "- name: absolute(Tensor self)", 1))
    assert full_passes == [1]


def test_a_line_added_inside_an_entry_moves_the_later_entries_without_a_full_pass(index, text, monkeypatch):
    """Enter (or a deleted line) in one entry: that entry is analysed again, every later entry and
    diagnostic moves by the lines added, and no pass over all entries runs."""
    broken = text.replace("self: grad * self.sgn()", "self: grad * self.sizes()", 1)  # a diagnostic further on
    analyzer = DocumentAnalyzer(index)
    before = analyzer.analyse(broken)
    full_passes = []
    original = analyzer._full_pass
    monkeypatch.setattr(analyzer, "_full_pass", lambda chunks: full_passes.append(1) or original(chunks))
    at = broken.index("\n", broken.index("- name: ")) + 1  # after the first entry's `- name:` line
    assert broken.index("self: grad * self.sizes()") > at
    added = broken[:at] + "\n\n" + broken[at:]
    after = analyzer.analyse(added, [(at, at, 2)])
    assert full_passes == []
    assert [d.span.line for d in after.diagnostics] == [d.span.line + 2 for d in before.diagnostics]
    assert [e.line for e in after.entries[1:]] == [e.line + 2 for e in before.entries[1:]]
    assert fingerprint(after) == fingerprint(DocumentAnalyzer(index).analyse(added))
    removed = analyzer.analyse(broken, [(at, at + 2, 0)])  # and back
    assert full_passes == []
    assert fingerprint(removed) == fingerprint(before)


def test_a_whole_new_text_with_lines_added_in_one_entry_takes_no_full_pass(index, text, monkeypatch):
    """A new text given whole (the check daemon reading the file again): one entry's text changed, lines
    added in it, is found by comparing the entries' texts; the later entries move; no full pass."""
    broken = text.replace("self: grad * self.sgn()", "self: grad * self.sizes()", 1)
    analyzer = DocumentAnalyzer(index)
    before = analyzer.analyse(broken)
    full_passes = []
    original = analyzer._full_pass
    monkeypatch.setattr(analyzer, "_full_pass", lambda chunks: full_passes.append(1) or original(chunks))
    at = broken.index("\n", broken.index("- name: ")) + 1
    added = broken[:at] + "  # a comment\n\n" + broken[at:]
    after = analyzer.analyse(added)
    assert full_passes == []
    assert [d.span.line for d in after.diagnostics] == [d.span.line + 2 for d in before.diagnostics]
    assert fingerprint(after) == fingerprint(DocumentAnalyzer(index).analyse(added))
    assert fingerprint(analyzer.analyse(broken)) == fingerprint(before)  # and back
    assert full_passes == []
    acos = "- name: acos(Tensor self) -> Tensor"
    assert acos in added
    two = added.replace("# a comment", "# another\n", 1).replace(acos, acos + "  # too\n", 1)  # two entries
    assert fingerprint(analyzer.analyse(two)) == fingerprint(DocumentAnalyzer(index).analyse(two))
    assert full_passes == []
    gone = two.replace(acos, "", 1)  # an entry less: the file pass
    assert fingerprint(analyzer.analyse(gone)) == fingerprint(DocumentAnalyzer(index).analyse(gone))
    assert full_passes == [1]


@settings(FIXED, max_examples=10)
@given(edits=st.lists(edit, min_size=2, max_size=8))
def test_several_edits_given_as_one_whole_text_give_what_the_whole_text_gives(index, text, edits):
    """Edits in several entries at once, the text given whole (as the daemon reads a saved file)."""
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    current = text
    applied = []
    for step in edits:
        edited, change = apply(current, *step)
        applied.append(described(current, change, step[2]))
        current = edited
    assert_same(analyzer.analyse(current), DocumentAnalyzer(index).analyse(current), applied)


def test_a_line_added_makes_no_chunk_again_past_the_edit_until_an_edit_there(index, text, monkeypatch):
    """The chunks after an edit that moved lines keep their start lines lazily (as their ends): Enter
    costs its entry, and a later edit further down finds every line where it is."""
    from derivls.derivatives import loader

    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    made = []
    monkeypatch.setattr(loader, "Chunk", lambda *a: made.append(a) or Chunk(*a))
    at = text.index("\n", text.index("- name: ")) + 1
    edited = text[:at] + "\n" + text[at:]
    analyzer.analyse(edited, [(at, at, 1)])
    assert 0 < len(made) < 10  # the edited chunk (and its neighbours), not the ~690 after it
    far = edited.rindex("self: grad")
    edited = edited[:far] + "self: grad * 1 " + edited[far + len("self: grad") :]
    analysis = analyzer.analyse(edited, [(far, far + len("self: grad"), len("self: grad * 1 "))])
    assert fingerprint(analysis) == fingerprint(DocumentAnalyzer(index).analyse(edited))


def test_identical_entries_keep_working_after_in_place_edits(index):
    entry = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(entry + entry)
    for edited in (entry + entry.replace("sgn", "sgn2"), entry.replace("sgn", "sgn3") + entry.replace("sgn", "sgn2")):
        assert fingerprint(analyzer.analyse(edited)) == fingerprint(DocumentAnalyzer(index).analyse(edited))


def test_a_told_keystroke_splits_only_the_entries_around_it(index, text, monkeypatch):
    from derivls.derivatives import loader

    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    split = []
    monkeypatch.setattr(loader, "split_entries", lambda t: split.append(len(t)) or loader_split(t))
    at = text.index("self: grad * self.sgn()") + len("self: grad")
    edited = text[:at] + " " + text[at:]
    analysis = analyzer.analyse(edited, [(at, at, 1)])
    assert len(split) == 1 and split[0] < 1000
    assert fingerprint(analysis) == fingerprint(DocumentAnalyzer(index).analyse(edited))


def loader_split(text):
    from derivls.derivatives.document import split_entries

    return split_entries(text)


def test_after_an_analysis_that_raised_the_next_one_is_right(index, text, monkeypatch):
    analyzer = DocumentAnalyzer(index)
    analyzer.analyse(text)
    at = text.index("self: grad * self.sgn()") + len("self: grad")
    edited = text[:at] + " " + text[at:]
    original = analyzer._analyse_entry

    def broken(entry):
        raise RuntimeError("a bug")

    monkeypatch.setattr(analyzer, "_analyse_entry", broken)
    with pytest.raises(RuntimeError):
        analyzer.analyse(edited, [(at, at, 1)])
    monkeypatch.setattr(analyzer, "_analyse_entry", original)
    # the same edit again, told from the text analysed last
    assert fingerprint(analyzer.analyse(edited, [(at, at, 1)])) == fingerprint(DocumentAnalyzer(index).analyse(edited))
