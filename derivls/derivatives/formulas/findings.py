"""What a formula rule reports: a `Finding` (a registered Code, a severity, offsets into the formula text,
suggestions and rewrites), and the helpers every rule shares to make one."""

from __future__ import annotations

from derivls.base.diagnostics import Code, Severity
from derivls.base.frozen import frozen_dataclass

ERROR, WARNING = Severity.ERROR, Severity.WARNING


@frozen_dataclass
class Finding:
    code: Code
    severity: Severity  # the code's own, or an error where a warning code is certain
    start: int
    end: int
    message: str
    suggestions: tuple[str, ...] = ()  # replacements of start..end
    rewrites: tuple[Rewrite, ...] = ()  # other fixes: edits elsewhere in the formula
    related: tuple[tuple[str, int, str], ...] = ()  # (file, 0-based line, message): e.g. the declarations


@frozen_dataclass
class Rewrite:
    """A fix that replaces formula[start:end] with `text` (offsets into the formula, like a Finding's)."""

    title: str
    start: int
    end: int
    text: str


def _closest(word: str, candidates: set[str] | frozenset[str] | list[str], n: int = 3) -> tuple[str, ...]:
    import difflib

    return tuple(difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6))
