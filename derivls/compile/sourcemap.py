"""From a column of generated C++ back to the formula text in derivatives.yaml.

A formula travels three steps before the compiler sees it, and each is undone here:

1. YAML folds the scalar's source (a plain scalar over several lines, a quoted one with escapes)
   into its value: `fold_offsets` maps each value character to its source offset.
2. derivls's substitutions rewrite the value (`self.sym_sizes()` -> `self_sym_sizes`, the
   forward-mode `self_p` of an in-place function -> `self`, ...): `FormulaAlignment` aligns the
   rewritten formula with the value character by character, so a rewritten piece maps to the
   text it replaced.
3. The codegen places the rewritten formula in a template: `SourceMap` records, while the C++ is
   generated, which range of the generated text holds which formula (and which node belongs to
   which entry), and turns a (line, column) of the generated file into a YAML `Span`.
"""

from __future__ import annotations

import bisect
import difflib
import functools
from dataclasses import dataclass, field
from typing import Any

from derivls.base.diagnostics import Span
from derivls.derivatives.document import offset_span


def fold_offsets(value: str, source: str) -> list[int]:
    """For each character of a scalar's `value`, its offset in the scalar's `source` text.

    Whitespace that YAML folded (a line break and the indentation after it) maps to the first
    character of the folded run; quotes and escape backslashes in the source are skipped.
    """
    offsets: list[int] = []
    j = 0
    for ch in value:
        while j < len(source):
            s = source[j]
            if s == ch:
                offsets.append(j)
                j += 1
                break
            if ch.isspace() and s.isspace():
                offsets.append(j)
                while j < len(source) and source[j].isspace():
                    j += 1
                break
            j += 1
        else:
            offsets.append(max(0, len(source) - 1))
    return offsets


class FormulaAlignment:
    """Maps offsets of a rewritten formula to ranges of the formula the user wrote."""

    def __init__(self, rewritten: str, original: str) -> None:
        self.rewritten = rewritten
        self.original = original
        matcher = difflib.SequenceMatcher(None, rewritten, original, autojunk=False)
        # (start in rewritten, end in rewritten, start in original, end in original, equal?)
        self._blocks = [(i1, i2, j1, j2, tag == "equal") for tag, i1, i2, j1, j2 in matcher.get_opcodes() if i2 > i1]
        self._starts = [b[0] for b in self._blocks]

    def char(self, k: int) -> tuple[int, int]:
        """The original range that rewritten character `k` comes from."""
        if not self._blocks:
            return 0, len(self.original)
        k = min(max(k, 0), len(self.rewritten) - 1)
        i1, _i2, j1, j2, equal = self._blocks[bisect.bisect_right(self._starts, k) - 1]
        if equal:
            return j1 + (k - i1), j1 + (k - i1) + 1
        if j2 > j1:
            return j1, j2
        return _word_around(self.original, j1)

    def range(self, begin: int, end: int) -> tuple[int, int]:
        """The original range covering rewritten characters [begin, end)."""
        lo, _ = self.char(begin)
        _, hi = self.char(max(begin, end - 1))
        return lo, max(hi, lo + 1)


def _word_around(text: str, at: int) -> tuple[int, int]:
    """The identifier at or just before offset `at` (an insertion point has no text of its own)."""
    if not text:
        return 0, 0
    at = min(at, len(text) - 1)
    if not _is_word(text[at]) and at > 0 and _is_word(text[at - 1]):
        at -= 1
    if not _is_word(text[at]):
        return at, at + 1
    begin = at
    while begin > 0 and _is_word(text[begin - 1]):
        begin -= 1
    end = at
    while end < len(text) and _is_word(text[end]):
        end += 1
    return begin, end


def _is_word(ch: str) -> bool:
    return ch.isalnum() or ch == "_"


def token_at(text: str, at: int) -> tuple[int, int]:
    """The token of generated text a compiler column points at: an identifier, or one character."""
    if at >= len(text):
        return max(0, len(text) - 1), len(text)
    if text[at] == "(" and at > 0 and _is_word(text[at - 1]):  # a call: the callee's name
        begin = at
        while begin > 0 and _is_word(text[begin - 1]):
            begin -= 1
        return begin, at
    if not _is_word(text[at]):
        return at, at + 1
    end = at
    while end < len(text) and _is_word(text[end]):
        end += 1
    return at, end


@functools.lru_cache(maxsize=256)
def _alignment(rewritten: str, original: str) -> FormulaAlignment:
    """One alignment per formula, however many compiler errors point into it (difflib is quadratic)."""
    return FormulaAlignment(rewritten, original)


@functools.lru_cache(maxsize=256)
def _folded(value: str, source: str) -> list[int]:
    return fold_offsets(value, source)


@dataclass(frozen=True)
class FormulaOrigin:
    """Where one formula came from: the scalar in the YAML (absolute span) and its texts."""

    rewritten: str  # the formula as generated
    original: str  # the scalar's value (what the user wrote, folded)
    source: str  # the scalar's source text in the file
    span: Span  # the scalar's span in the file (0-based, absolute)

    def to_span(self, begin: int, end: int) -> Span:
        """The YAML span of rewritten-formula characters [begin, end)."""
        lo, hi = _alignment(self.rewritten, self.original).range(begin, end)
        folded = _folded(self.original, self.source)
        if not folded:
            return self.span
        source_lo = folded[min(lo, len(folded) - 1)]
        source_hi = folded[min(hi, len(folded)) - 1] + 1
        return offset_span(self.source, self.span, source_lo, max(source_hi, source_lo + 1))


@dataclass(frozen=True)
class OriginSlice:
    """Characters [begin, …) of a formula as the user wrote it, standing verbatim in the generated text
    (a value the kernel saves: `self.sym_sizes()` of the formula `grad.expand_symint(self.sym_sizes())`)."""

    origin: FormulaOrigin
    begin: int

    def to_span(self, begin: int, end: int) -> Span:
        written = FormulaOrigin(self.origin.original, self.origin.original, self.origin.source, self.origin.span)
        return written.to_span(self.begin + begin, self.begin + end)


@dataclass(frozen=True)
class Located:
    """A generated position mapped back: the YAML span, and whether it is inside a formula."""

    span: Span
    in_formula: bool
    unit: str  # the node or kernel whose code holds the position


@dataclass
class SourceMap:
    """Generated-text ranges -> where they came from, filled in while the text is generated."""

    text: list[str] = field(default_factory=list)
    _length: int = 0
    _formulas: list[tuple[int, int, FormulaOrigin | OriginSlice]] = field(default_factory=list)
    _units: list[tuple[int, int, str, Span]] = field(default_factory=list)
    entry_lines: dict[str, int] = field(default_factory=dict)  # unit name -> its entry's `- name:` line
    _line_starts: list[int] | None = None
    _sorted: tuple[list[Any], list[int], list[Any], list[int]] | None = None

    def append(self, chunk: str) -> int:
        """Append generated text; return the offset it starts at."""
        start = self._length
        self.text.append(chunk)
        self._length += len(chunk)
        return start

    def add_formula(self, start: int, origin: FormulaOrigin) -> None:
        """Record that `origin.rewritten` stands at generated offset `start`."""
        self._formulas.append((start, start + len(origin.rewritten), origin))
        self._sorted = None

    def add_slice(self, start: int, origin: FormulaOrigin, begin: int, length: int) -> None:
        """Record that `origin.original[begin:begin + length]` stands at generated offset `start`."""
        self._formulas.append((start, start + length, OriginSlice(origin, begin)))
        self._sorted = None

    def add_unit(self, start: int, end: int, name: str, span: Span, entry_line: int | None = None) -> None:
        """Record that generated [start, end) is the code of `name` (a node or kernel) of the entry at `span`."""
        self._units.append((start, end, name, span))
        self.entry_lines[name] = span.line if entry_line is None else entry_line
        self._sorted = None

    def render(self) -> str:
        return "".join(self.text)

    @property
    def formulas(self) -> list[tuple[int, int, FormulaOrigin]]:
        """(start, end, origin) of each formula placed in the generated text."""
        return [(start, end, o) for start, end, o in self._formulas if isinstance(o, FormulaOrigin)]

    @property
    def units(self) -> list[tuple[int, int, str, Span]]:
        return list(self._units)

    def offset(self, line: int, column: int) -> int:
        """Offset of a 1-based line and 1-based byte column of the rendered text (ASCII)."""
        text = self._rendered()
        if self._line_starts is None:
            self._line_starts = [0, *(i + 1 for i, c in enumerate(text) if c == "\n")]
        if line - 1 >= len(self._line_starts):
            return len(text)
        return self._line_starts[max(line, 1) - 1] + max(column - 1, 0)

    def _rendered(self) -> str:
        if len(self.text) != 1:
            self.text = [self.render()]
            self._line_starts = None
        return self.text[0]

    def locate(self, line: int, column: int) -> Located | None:
        """Where generated 1-based (line, column) comes from, or None outside every unit. Constant work per call
        (but the first: the line starts and the ranges sorted once), so mapping n errors is linear in n."""
        at = self.offset(line, column)
        text = self.text[0]
        if self._sorted is None:
            formulas = sorted(self._formulas, key=lambda f: f[0])
            units = sorted(self._units, key=lambda u: u[0])
            self._sorted = (formulas, [f[0] for f in formulas], units, [u[0] for u in units])
        formulas, formula_starts, units, unit_starts = self._sorted
        unit = _containing(units, unit_starts, at)
        found = _containing(formulas, formula_starts, at)
        if found is not None:
            start, end, origin = found
            begin, stop = token_at(text, at)
            name = unit[2] if unit is not None else ""
            return Located(origin.to_span(begin - start, min(stop, end) - start), True, name)
        if unit is not None:
            return Located(unit[3], False, unit[2])
        return None


def _containing(ranges: list[Any], starts: list[int], at: int) -> Any:
    """The range (start, end, ...) of `ranges` (sorted by start, not overlapping) that holds `at`, or None."""
    k = bisect.bisect_right(starts, at) - 1
    return ranges[k] if k >= 0 and ranges[k][0] <= at < ranges[k][1] else None
