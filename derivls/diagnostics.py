"""Positions and diagnostics of the analysis core (no LSP types here).

Lines and columns are 0-based, ends exclusive, as in the YAML marks they come
from; the CLI and the server convert at their edges.
"""

from __future__ import annotations

from dataclasses import replace
from enum import IntEnum

from derivls.frozen import frozen_dataclass


@frozen_dataclass(slots=True)
class Span:
    line: int
    column: int
    end_line: int
    end_column: int

    def shifted(self, lines: int) -> Span:
        if lines == 0:
            return self
        return Span(self.line + lines, self.column, self.end_line + lines, self.end_column)

    def contains(self, line: int, column: int) -> bool:
        if (line, column) < (self.line, self.column):
            return False
        return (line, column) <= (self.end_line, self.end_column)


FIRST_LINE = Span(0, 0, 0, 1)  # where diagnostics about the set-up (not about a token) go


class Severity(IntEnum):
    # Values match LSP's DiagnosticSeverity so the server can pass them through.
    ERROR = 1
    WARNING = 2
    INFORMATION = 3
    HINT = 4

    @property
    def label(self) -> str:
        return self.name.lower()


@frozen_dataclass
class Related:
    """A place elsewhere that explains a diagnostic (e.g. a candidate `func:` line)."""

    path: str | None  # None: the same document
    line: int
    message: str


@frozen_dataclass
class Edit:
    span: Span
    new_text: str

    def shifted(self, lines: int) -> Edit:
        return Edit(self.span.shifted(lines), self.new_text)


@frozen_dataclass
class Fix:
    """Edits (in the same document) that would resolve a diagnostic; one quick fix."""

    title: str
    edits: tuple[Edit, ...]
    preferred: bool = False

    def shifted(self, lines: int) -> Fix:
        return replace(self, edits=tuple(e.shifted(lines) for e in self.edits))


@frozen_dataclass
class Diagnostic:
    span: Span
    severity: Severity
    code: str
    message: str
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()

    def shifted(self, lines: int) -> Diagnostic:
        if lines == 0:
            return self
        return replace(
            self,
            span=self.span.shifted(lines),
            fixes=tuple(f.shifted(lines) for f in self.fixes),
        )


def error(span: Span, code: str, message: str, **extra: object) -> Diagnostic:
    return Diagnostic(span, Severity.ERROR, code, message, **extra)  # type: ignore[arg-type]


def warning(span: Span, code: str, message: str, **extra: object) -> Diagnostic:
    return Diagnostic(span, Severity.WARNING, code, message, **extra)  # type: ignore[arg-type]
