"""server/blocklines.py: the lines of an edited document, versioned by splicing blocks."""

from __future__ import annotations

from unittest import mock

import pytest
from hypothesis import given
from hypothesis import strategies as st

from derivls.server.documents import blocklines
from derivls.server.documents.blocklines import BlockLines

line_text = st.text(alphabet="ab é", max_size=5)


def offsets(lines: list[str]) -> list[int]:
    return [sum(len(x) + 1 for x in lines[:k]) for k in range(len(lines))]


def assert_same(version: BlockLines, model: list[str]) -> None:
    assert list(version) == model
    assert len(version) == len(model)
    assert [version[k] for k in range(len(model))] == model
    assert [version[-k] for k in range(1, len(model) + 1)] == [model[-k] for k in range(1, len(model) + 1)]
    assert [version.offset(k) for k in range(len(model))] == offsets(model)
    assert version[1:3] == model[1:3]


@given(
    lines=st.lists(line_text, min_size=1, max_size=12),
    splices=st.lists(
        st.tuples(st.integers(0, 40), st.integers(0, 8), st.lists(line_text, min_size=1, max_size=9)), max_size=8
    ),
    block=st.integers(1, 3),
)
def test_splices_give_the_lines_a_list_splice_gives_and_leave_every_earlier_version_as_it_was(lines, splices, block):
    with mock.patch.object(blocklines, "BLOCK", block):  # blocks of 1-3 lines: edits cross block boundaries
        versions = [(BlockLines.of(lines), list(lines))]
        for start, span, replacement in splices:
            version, model = versions[-1]
            first = start % len(model)
            last = min(first + span, len(model) - 1)
            spliced = version.spliced(first, last, replacement)
            versions.append((spliced, model[:first] + replacement + model[last + 1 :]))
        for version, model in versions:
            assert_same(version, model)


def test_a_long_replacement_is_cut_into_blocks_of_block_lines():
    with mock.patch.object(blocklines, "BLOCK", 2):
        version = BlockLines.of(["a", "b", "c"]).spliced(1, 1, [str(k) for k in range(9)])
        assert max(len(b) for b in version._blocks) <= 2 * blocklines.BLOCK
        assert_same(version, ["a", *(str(k) for k in range(9)), "c"])


def test_an_empty_text_has_one_empty_line_and_indexes_out_of_range_raise():
    lines = BlockLines.of([])
    assert list(lines) == [""] and lines.offset(0) == 0
    with pytest.raises(IndexError):
        lines[1]
    with pytest.raises(IndexError):
        lines[-2]


def test_a_keystroke_shares_every_block_it_does_not_touch():
    lines = BlockLines.of([f"line {k}" for k in range(10 * blocklines.BLOCK)])
    edited = lines.spliced(5, 5, ["line 5 edited"])
    assert edited._blocks[0] is not lines._blocks[0]
    assert all(a is b for a, b in zip(edited._blocks[1:], lines._blocks[1:]))
    assert lines[5] == "line 5" and edited[5] == "line 5 edited"
