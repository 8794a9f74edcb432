"""UTF-16 / UTF-8 / UTF-32 columns and incremental changes, against a naive model of the LSP rules."""

from __future__ import annotations

import re

from hypothesis import given
from hypothesis import strategies as st
from lsprotocol import types

from derivls.server.documents.positions import (
    EditedText,
    LineIndex,
    apply_change,
    from_client_column,
    to_client_column,
)

BREAK = re.compile(r"\r\n|\r|\n")
ALPHABET = st.sampled_from(["a", "b", " ", "\n", "\r", "\r\n", "é", "\U0001f600", "\t", "\x0c", "\u2028"])


def units(char: str, encoding: str) -> int:
    return {"utf-8": len(char.encode("utf-8")), "utf-16": len(char.encode("utf-16-le")) // 2, "utf-32": 1}[encoding]


def naive_offset(text: str, line: int, character: int, encoding: str) -> int:
    starts = [0] + [m.end() for m in BREAK.finditer(text)]
    lines = BREAK.split(text)
    if line >= len(lines):
        return len(text)
    seen = 0
    for i, char in enumerate(lines[line]):
        if seen + units(char, encoding) > character:
            return starts[line] + i
        seen += units(char, encoding)
    return starts[line] + len(lines[line])


@given(
    text=st.lists(ALPHABET, max_size=30).map("".join),
    start=st.tuples(st.integers(0, 8), st.integers(0, 10)),
    end=st.tuples(st.integers(0, 8), st.integers(0, 10)),
    new=st.lists(ALPHABET, max_size=4).map("".join),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_apply_change_follows_the_lsp_rules(text, start, end, new, encoding):
    if end < start:
        start, end = end, start
    change = types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        ),
        text=new,
    )
    a = naive_offset(text, *start, encoding)
    b = naive_offset(text, *end, encoding)
    a, b = min(a, b), max(a, b)
    assert apply_change(text, change, encoding) == text[:a] + new + text[b:]


def change_at(start: tuple[int, int], end: tuple[int, int], new: str) -> types.TextDocumentContentChangePartial:
    return types.TextDocumentContentChangePartial(
        range=types.Range(
            start=types.Position(line=start[0], character=start[1]),
            end=types.Position(line=end[0], character=end[1]),
        ),
        text=new,
    )


position = st.tuples(st.integers(0, 8), st.integers(0, 10))


@given(
    text=st.lists(ALPHABET, max_size=30).map("".join),
    changes=st.lists(st.tuples(position, position, st.lists(ALPHABET, max_size=4).map("".join)), max_size=6),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_edited_text_applies_changes_as_apply_change_does_and_keeps_its_lines_and_edits(text, changes, encoding):
    edited, expected = EditedText(text), text
    for start, end, new in changes:
        change = change_at(start, end, new)
        expected = apply_change(expected, change, encoding)
        assert edited.apply(change, encoding) == expected == edited.text
        if edited.lines is not None:
            assert list(edited.lines) == LineIndex(expected).lines
    edits = edited.take_edits(text)
    assert edits is not None and len(edits) == len(changes)
    assert edited.take_edits(edited.text) == []  # the text is the base now
    assert edited.take_edits(None) is None


@given(
    text=st.lists(st.sampled_from(["a", "b", " ", "\n", "é", "\U0001f600"]), max_size=40).map("".join),
    changes=st.lists(
        st.tuples(position, position, st.lists(st.sampled_from(["x", "\n", "é"]), max_size=3).map("".join)),
        max_size=8,
    ),
)
def test_edits_replayed_on_the_old_text_give_the_new_text(text, changes):
    edited = EditedText(text)
    snapshots = [text]
    for start, end, new in changes:
        snapshots.append(edited.apply(change_at(start, end, new), "utf-16"))
    edits = edited.take_edits(text)
    assert edits is not None and len(edits) == len(changes)
    for before, after, (begin, end_, length) in zip(snapshots, snapshots[1:], edits):
        assert before[:begin] + after[begin : begin + length] + before[end_:] == after


@given(
    line=st.lists(st.sampled_from(["a", "é", "\U0001f600", "\u20ac"]), max_size=12).map("".join),
    encoding=st.sampled_from(["utf-8", "utf-16", "utf-32"]),
)
def test_columns_round_trip(line, encoding):
    for column in range(len(line) + 1):
        client = to_client_column(line, column, encoding)
        assert client == sum(units(c, encoding) for c in line[:column])
        assert from_client_column(line, client, encoding) == column


def test_line_index_ranges():
    index = LineIndex("ab\r\n\U0001f600x\ry")
    assert index.lines == ["ab", "\U0001f600x", "y"]
    assert index.position(1, 1) == types.Position(line=1, character=2)
    assert index.column(types.Position(line=1, character=2)) == (1, 1)
    assert index.position(99, 0) == types.Position(line=2, character=1)  # clamped to the end


def test_edited_text_takes_the_lines_of_a_line_index_of_its_text():
    text = "a\nbc\n\nd"
    index = LineIndex(text)
    edited = EditedText(text, index.lines)
    assert list(edited.lines) == index.lines  # read from the index's list, not split again
    assert edited.apply(change_at((1, 1), (1, 2), "x\ny"), "utf-16") == "a\nbx\ny\n\nd"
    assert index.lines == ["a", "bc", "", "d"]  # the index's list is never changed
    assert list(edited.lines) == LineIndex(edited.text).lines
    after = LineIndex(edited.text, lines=edited.lines)  # as the server makes the next version's index
    assert EditedText(edited.text, after.lines).lines is edited.lines  # a BlockLines is shared as it is
    assert EditedText("a\r\nb", ["a", "b"]).lines is None  # a text with \r keeps no lines, as before
