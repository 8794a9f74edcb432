"""The formula under a position, as the C++ the generated code makes of it (shared by hover, signature
help and semantic tokens): the workspace's HeaderIndex, the formula scalar at a position, its scope,
and the offset into the formula's text (the scalar's value) of a document position."""

from __future__ import annotations

from bisect import bisect_right
from dataclasses import dataclass

from derivls.derivatives.analysis import KeyResult, SectionResult
from derivls.derivatives.document import Scalar
from derivls.derivatives.formulas.entry_formulas import value_offsets
from derivls.derivatives.formulas.headercache import header_index_for
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.scope import Scope
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.ide.formula_editor import scope_for_key
from derivls.ide.targets import entry_at, key_result_for, scalar_offset, section_result_for

FORMULA_KINDS = ("backward", "forward")


def headers_of(analysis: DocumentAnalysis) -> HeaderIndex | None:
    """The HeaderIndex the analysis' formula diagnostics were computed with (None without an index)."""
    index = analysis.index
    if index is None:
        return None
    return header_index_for(index, index.path)


@dataclass(frozen=True)
class FormulaAt:
    """A formula (backward or forward) of an analysed entry, and an offset into its text."""

    placed: PlacedEntry
    section: SectionResult
    key: KeyResult
    formula: str  # the scalar's value: the C++ text torchgen reads
    offset: int  # into `formula`

    @property
    def scalar(self) -> Scalar:
        return self.key.item.value

    @property
    def scope(self) -> Scope:
        return scope_for_key(self.placed.result, self.section, self.key)


def value_offset(scalar: Scalar, source_offset: int) -> int:
    """An offset into the scalar's source text → the offset into its value (quotes, folded lines)."""
    value = scalar.value
    if not isinstance(value, str) or scalar.source == value:
        return max(0, min(source_offset, len(scalar.source)))
    mapping = value_offsets(scalar)
    return max(0, min(bisect_right(mapping, source_offset) - 1, len(value)))


def formula_at(analysis: DocumentAnalysis, line: int, column: int, past_end: bool = False) -> FormulaAt | None:
    """The formula at (line, column) (0-based code points), if the position is inside one; `past_end`: also
    after its end on its last line (a call being typed: `f(a, ` has a trailing space the value drops)."""
    placed = entry_at(analysis, line)
    if placed is None or line > placed.end_line or placed.result.canonical is None:
        return None
    rel = line - placed.start_line
    for section in placed.entry.sections:
        for item in section.items:
            scalar = item.value
            span = scalar.span
            inside = span.contains(rel, column)  # its end included: the cursor after the last character
            if not inside and not (past_end and rel == span.end_line and column > span.end_column):
                continue
            sr = section_result_for(placed, section)
            kr = key_result_for(sr, item)
            if sr is None or kr is None or kr.kind not in FORMULA_KINDS or not isinstance(scalar.value, str):
                return None
            offset = value_offset(scalar, scalar_offset(scalar, rel, column))
            return FormulaAt(placed, sr, kr, scalar.value, offset)
    return None


__all__ = ["FormulaAt", "formula_at", "headers_of", "value_offset"]
