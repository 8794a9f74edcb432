"""Quick fixes: the fixes the analysis attaches to its diagnostics, for the diagnostics in a range."""

from __future__ import annotations

from dataclasses import dataclass

from derivls.derivatives.loader import DocumentAnalysis
from derivls.diagnostics import Diagnostic, Edit, Span


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
    found: list[QuickFix] = []
    for d in analysis.diagnostics:
        if not d.fixes or not overlaps(d.span, start, end):
            continue
        found.extend(QuickFix(fix.title, tuple(fix.edits), fix.preferred, d) for fix in d.fixes)
    return found


__all__ = ["QuickFix", "overlaps", "quick_fixes"]
