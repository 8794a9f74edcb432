"""Quick fixes: the fixes the analysis attaches to its diagnostics, for the diagnostics in a range; the one
fix a diagnostic has when it has only one, and a document's text with edits applied (`check --format
lintrunner` gives both to `lintrunner -a`)."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from derivls.base.diagnostics import Diagnostic, Edit, Fix, Span
from derivls.base.linebreaks import line_starts
from derivls.derivatives.loader import DocumentAnalysis


@dataclass(frozen=True)
class QuickFix:
    """One fix: its edits replace spans of the same document (0-based code points)."""

    title: str
    edits: tuple[Edit, ...]
    preferred: bool
    diagnostic: Diagnostic


def overlaps(span: Span, start: tuple[int, int], end: tuple[int, int]) -> bool:
    """Does `span` touch the (line, column) range [start, end]?"""
    return (span.line, span.column) <= end and start <= (span.end_line, span.end_column)


def quick_fixes(analysis: DocumentAnalysis, start: tuple[int, int], end: tuple[int, int]) -> list[QuickFix]:
    """The fixes of every diagnostic touching [start, end], each diagnostic's fixes best first."""
    return fixes_of(analysis.diagnostics, start, end)


def fixes_of(diagnostics: Iterable[Diagnostic], start: tuple[int, int], end: tuple[int, int]) -> list[QuickFix]:
    """The fixes of those of `diagnostics` touching [start, end] (a background run's: gradcheck's repairs)."""
    found: list[QuickFix] = []
    for d in diagnostics:
        if not d.fixes or not overlaps(d.span, start, end):
            continue
        found.extend(QuickFix(fix.title, tuple(fix.edits), fix.preferred, d) for fix in d.fixes)
    return found


def unambiguous_fix(diagnostic: Diagnostic) -> Fix | None:
    """The diagnostic's fix when it has exactly one (several, such as the close names of a misspelling,
    are a choice for a person: None)."""
    return diagnostic.fixes[0] if len(diagnostic.fixes) == 1 and diagnostic.fixes[0].edits else None


def _offsets(starts: list[int], size: int, edit: Edit) -> tuple[int, int] | None:
    span = edit.span
    if not (0 <= span.line <= span.end_line < len(starts) and span.column >= 0 and span.end_column >= 0):
        return None
    start, end = starts[span.line] + span.column, starts[span.end_line] + span.end_column
    return (start, end) if start <= end <= size else None


def apply_edits(text: str, edits: tuple[Edit, ...] | list[Edit]) -> str | None:
    """`text` with the edits applied (each span as `text` places it: LSP lines, code points); None when a
    span is not in the text or two spans overlap (no single result is meant)."""
    starts = line_starts(text)
    placed = []
    for edit in edits:
        offsets = _offsets(starts, len(text), edit)
        if offsets is None:
            return None
        placed.append((offsets, edit.new_text))
    placed.sort(key=lambda p: p[0])
    previous_end = 0
    for (start, end), _ in placed:
        if start < previous_end:
            return None
        previous_end = end
    for (start, end), new_text in reversed(placed):
        text = text[:start] + new_text + text[end:]
    return text


__all__ = ["QuickFix", "apply_edits", "overlaps", "quick_fixes", "unambiguous_fix"]
