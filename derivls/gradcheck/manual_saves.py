"""FunctionsManual.cpp saved in the editor, as plain code (no LSP): which helpers a save changed, which
derivatives.yaml entries call them, and a failure of such an entry as a diagnostic on the helper's definition.

    saves = ManualSaves()
    saves.read(path, text)                         # the text as first read: what "edited" is measured against
    changed = saves.saved(path, text)              # the helper names whose definition this save changed
    lines = entries_calling(analysis, saves.manual(path), changed)   # the `- name:` lines to check again
    helper_diagnostics(saves.manual(path), saves.edited(path), failures)  # on the helpers' lines

A helper "changed" when its definition's C++ tokens did (derivls.gradcheck.manual.edited_helpers: comments,
whitespace and moving it do not count); an entry calls a helper when one of its formulas does, directly or through
other helpers. A helper is "edited" while its definition differs from the text the server read first (the file as
it was when the first derivatives.yaml was opened with gradcheckOnSave, or when the file itself was opened): a
failing entry that calls an edited helper is reported on that helper's name too.
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from derivls.base.diagnostics import Diagnostic, Related, Severity, Span
from derivls.gradcheck.manual import (
    ManualFile,
    callers_of,
    edited_helpers,
    formula_names,
    parse_manual,
    reached_helpers,
)

__all__ = ["EntryFailure", "ManualSaves", "entries_calling", "entry_formulas", "helper_diagnostics"]


class ManualSaves:
    """The FunctionsManual.cpp files of a server: each one's helpers as first read and at its last save."""

    def __init__(self) -> None:
        self._first: dict[str, ManualFile] = {}
        self._last: dict[str, ManualFile] = {}

    def read(self, path: str, text: str) -> None:
        """The file as the server first sees it (nothing when it was read before): the base of `edited`."""
        if path not in self._first:
            manual = parse_manual(text, path)
            self._first[path] = self._last[path] = manual

    def known(self, path: str) -> bool:
        return path in self._last

    def saved(self, path: str, text: str) -> frozenset[str]:
        """The helper names this save changed since the last one (a name added or removed counts); the first save
        of a file never read before changes nothing (it becomes the base)."""
        manual = parse_manual(text, path)
        before = self._last.get(path)
        self._last[path] = manual
        if before is None:
            self._first[path] = manual
            return frozenset()
        return edited_helpers(manual, before) | (before.names - manual.names)

    def manual(self, path: str) -> ManualFile | None:
        """The helpers as last saved."""
        return self._last.get(path)

    def edited(self, path: str) -> frozenset[str]:
        """The helpers whose definition differs from the file as first read."""
        first, last = self._first.get(path), self._last.get(path)
        if first is None or last is None:
            return frozenset()
        return edited_helpers(last, first)


def entry_formulas(placed: Any) -> list[str]:
    """The formula texts of an entry (every key's value that is a string: backward and forward formulas)."""
    out: list[str] = []
    for section in placed.result.entry.sections:
        for item in section.items:
            if isinstance(item.value.value, str):
                out.append(item.value.value)
    return out


def entries_calling(analysis: Any, manual: ManualFile | None, names: Collection[str]) -> list[int]:
    """The `- name:` lines (0-based) of the entries with a formula that calls one of `names`, directly or through
    other helpers of `manual`."""
    if manual is None or not names:
        return []
    affected = callers_of(manual, names)  # `names` and every helper calling one of them: once, not per entry
    return [
        placed.line
        for placed in analysis.entries
        if placed.result.canonical is not None and any(formula_names(f) & affected for f in entry_formulas(placed))
    ]


@dataclass(frozen=True)
class EntryFailure:
    """A derivatives.yaml entry whose gradcheck failed: its formulas and the failures' diagnostics (placed)."""

    path: str  # the derivatives.yaml
    name: str  # the entry's `name:` (its schema)
    formulas: Sequence[str]
    diagnostics: Sequence[Diagnostic]


def helper_diagnostics(
    manual: ManualFile | None, edited: Collection[str], failures: Iterable[EntryFailure]
) -> list[Diagnostic]:
    """One diagnostic on the name of each edited helper a failing entry calls (directly or through other helpers),
    per failing entry, with the entry's failures as related information (their lines in derivatives.yaml)."""
    if manual is None or not edited:
        return []
    out: list[Diagnostic] = []
    for failure in failures:
        if not failure.diagnostics:
            continue
        reached = reached_helpers(manual, failure.formulas) & set(edited)
        for name in sorted(reached):
            first = failure.diagnostics[0]
            related = tuple(
                Related(failure.path, d.span.line, d.message.splitlines()[0] if d.message else "")
                for d in failure.diagnostics
            )
            summary = first.message.splitlines()[0] if first.message else "gradcheck failed"
            for helper in manual.by_name(name):
                span = Span(helper.name_line, helper.name_column, helper.name_line, helper.name_column + len(name))
                message = (
                    f"`{failure.name}` calls the edited `{name}` and fails gradcheck "
                    f"(derivatives.yaml:{first.span.line + 1}): {summary}"
                )
                out.append(Diagnostic(span, Severity.ERROR, first.code, message, related))
    return out
