"""Positions and diagnostics of the analysis core (no LSP types here).

Lines and columns are 0-based, ends exclusive, as in the YAML marks they come
from; the CLI and the server convert at their edges.
"""

from __future__ import annotations

from dataclasses import replace

from derivls.base.frozen import frozen_dataclass
from derivls.codes.model import Code, Severity


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
    code: Code  # a registered code (derivls.codes), never a bare string
    message: str
    related: tuple[Related, ...] = ()
    fixes: tuple[Fix, ...] = ()

    def __post_init__(self) -> None:
        if type(self.code) is not Code:
            raise TypeError(f"diagnostic code {self.code!r} is not a registered Code (declare it in derivls.codes)")

    def shifted(self, lines: int) -> Diagnostic:
        if lines == 0:
            return self
        return replace(
            self,
            span=self.span.shifted(lines),
            fixes=tuple(f.shifted(lines) for f in self.fixes),
        )


def error(span: Span, code: Code, message: str, **extra: object) -> Diagnostic:
    return Diagnostic(span, Severity.ERROR, code, message, **extra)  # type: ignore[arg-type]


def warning(span: Span, code: Code, message: str, **extra: object) -> Diagnostic:
    return Diagnostic(span, Severity.WARNING, code, message, **extra)  # type: ignore[arg-type]


def emit(span: Span, code: Code, message: str, **extra: object) -> Diagnostic:
    """A diagnostic at `code`'s own severity (the registry's)."""
    return Diagnostic(span, code.severity, code, message, **extra)  # type: ignore[arg-type]


__all__ = ["FIRST_LINE", "Code", "Diagnostic", "Edit", "Fix", "Related", "Severity", "Span", "emit", "error", "warning"]
