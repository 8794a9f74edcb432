"""The lines of an edited document as a persistent sequence: a keystroke copies one block, not every line.

The server keeps the lines of each open derivatives.yaml (positions are converted with them) and an
edit makes the next version of them. Kept as one list, each keystroke copied it (the previous version
stays the analysed document's until the new text is analysed) and later freed the old one: a reference
count change on every line, twice, ~0.4 ms a keystroke on the 30,000 lines of a 10x file, most of it
cache misses. `BlockLines` holds the lines in blocks of about BLOCK lines, never changed once made;
`spliced()` makes the next version from the untouched blocks and one new block for the edited lines,
and `offset()` finds where a line starts from per-block offsets and one block's line lengths.
"""

from __future__ import annotations

from bisect import bisect_right
from collections.abc import Iterator, Sequence
from itertools import accumulate, chain
from typing import overload

__all__ = ["BLOCK", "BlockLines"]

BLOCK = 256  # lines per block when blocks are made; an edited block longer than 2 * BLOCK is cut again


class BlockLines(Sequence[str]):
    """The lines of a text (without their line breaks, "\\n" between them) in read-only blocks."""

    __slots__ = ("_blocks", "_firsts", "_starts", "_count")

    def __init__(self, blocks: list[list[str]], firsts: list[int], starts: list[int], count: int) -> None:
        # blocks: each non-empty, never changed; firsts[b]: the number of block b's first line;
        # starts[b]: the offset in the text where that line starts; count: the number of lines
        self._blocks = blocks
        self._firsts = firsts
        self._starts = starts
        self._count = count

    @classmethod
    def of(cls, lines: Sequence[str]) -> BlockLines:
        """The lines of a text (at least one: "" for an empty text)."""
        blocks = [list(lines[k : k + BLOCK]) for k in range(0, len(lines), BLOCK)] or [[""]]
        return cls._made(blocks)

    @classmethod
    def _made(cls, blocks: list[list[str]]) -> BlockLines:
        firsts = list(accumulate((len(b) for b in blocks[:-1]), initial=0))
        starts = list(accumulate((_chars(b) for b in blocks[:-1]), initial=0))
        return cls(blocks, firsts, starts, firsts[-1] + len(blocks[-1]))

    def __len__(self) -> int:
        return self._count

    @overload
    def __getitem__(self, i: int) -> str: ...
    @overload
    def __getitem__(self, i: slice) -> list[str]: ...
    def __getitem__(self, i: int | slice) -> str | list[str]:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(self._count))]
        if i < 0:
            i += self._count
        if not 0 <= i < self._count:
            raise IndexError("line index out of range")
        b = bisect_right(self._firsts, i) - 1
        return self._blocks[b][i - self._firsts[b]]

    def __iter__(self) -> Iterator[str]:
        return chain.from_iterable(self._blocks)

    def offset(self, line: int) -> int:
        """Where line `line` (0 <= line < len(self)) starts in the text."""
        b = bisect_right(self._firsts, line) - 1
        k = line - self._firsts[b]
        return self._starts[b] + sum(map(len, self._blocks[b][:k])) + k

    def spliced(self, first: int, last: int, replacement: list[str]) -> BlockLines:
        """These lines with lines `first`..`last` (inclusive, first <= last) replaced by `replacement`
        (at least one line); `self` is unchanged."""
        blocks, firsts, starts = self._blocks, self._firsts, self._starts
        b1 = bisect_right(firsts, first) - 1
        b2 = bisect_right(firsts, last) - 1
        merged = blocks[b1][: first - firsts[b1]] + replacement + blocks[b2][last - firsts[b2] + 1 :]
        middle = [merged] if len(merged) <= 2 * BLOCK else [merged[k : k + BLOCK] for k in range(0, len(merged), BLOCK)]
        new_blocks = blocks[:b1] + middle + blocks[b2 + 1 :]
        # the blocks before b1 keep their numbers and offsets; the new ones are counted from b1's;
        # those after move by as many lines and characters as the edit added
        new_firsts = firsts[: b1 + 1]
        new_starts = starts[: b1 + 1]
        for block in middle[:-1]:
            new_firsts.append(new_firsts[-1] + len(block))
            new_starts.append(new_starts[-1] + _chars(block))
        after = b2 + 1
        if after < len(blocks):
            old_end_line, old_end = firsts[after], starts[after]
            new_end_line = new_firsts[-1] + len(middle[-1])
            new_end = new_starts[-1] + _chars(middle[-1])
            lines_moved, chars_moved = new_end_line - old_end_line, new_end - old_end
            new_firsts += [f + lines_moved for f in firsts[after:]]
            new_starts += [s + chars_moved for s in starts[after:]]
        count = self._count + len(replacement) - (last - first + 1)
        return BlockLines(new_blocks, new_firsts, new_starts, count)


def _chars(block: list[str]) -> int:
    """The characters of a block's lines and the line break after each."""
    return sum(map(len, block)) + len(block)
