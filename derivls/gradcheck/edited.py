"""The FunctionsManual.cpp of a gradcheck run: where it is, which of its helpers are edited, against which base.

In a PyTorch checkout (or with `--manual FILE`), the checked entries' formulas call the checkout's helpers where
they are *edited*: their text differs from the base's (derivls.gradcheck.manual.edited_helpers: other tokens;
comments and layout do not count). The base, in order:

1. `--since REF`: the file at REF (a file REF does not have is new: every helper is edited);
2. the commit the chosen Python's torch was built from (`git_version` in its torch/version.py, read as a file:
   derivls never imports torch), when the file's repository has it;
3. none: every helper the entries call is compiled from the file.

git is asked through derivls.project.since.text_at (derivls.base.safegit: plumbing only, no fetch, bounded). Only the helpers
the checked entries reach (directly or through other helpers) and that are edited or call an edited one are
compiled, with the file-local helpers they need (derivls.gradcheck.manual.helpers_to_define); a helper that is not
edited costs nothing.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from derivls.base.exits import UsageError
from derivls.gradcheck import manual as manual_text
from derivls.gradcheck.manual import ManualCode, ManualFile

_GIT_VERSION = re.compile(r"""^git_version\s*=\s*['"]([0-9a-fA-F]{7,40})['"]""", re.MULTILINE)


@dataclass(frozen=True)
class EditedManual:
    """A FunctionsManual.cpp, its helpers, and which of them are edited (see the module's doc)."""

    path: Path
    manual: ManualFile
    edited: frozenset[str]
    base: str  # how `edited` was decided, for the summary: "--since main", "torch's commit cf30153", "no base: ..."
    header: str | None = None  # FunctionsManual.h's text (its default arguments; the names it declares)
    declared: frozenset[str] | None = None
    known_base: bool = True  # False: no base, every helper counts as edited
    _reached: dict[str, frozenset[str]] = field(default_factory=dict, compare=False, repr=False)

    def reached(self, unit: object) -> frozenset[str]:
        """The helpers a unit's formulas call, directly or through other helpers (kept by the formulas' text)."""
        formulas = unit_formulas(unit)
        key = "\0".join(formulas)
        if key not in self._reached:
            self._reached[key] = manual_text.reached_helpers(self.manual, formulas)
        return self._reached[key]

    def edited_reached(self, unit: object) -> frozenset[str]:
        """The edited helpers a unit reaches."""
        return self.reached(unit) & self.edited

    def blamed(self, unit: object) -> frozenset[str]:
        """The helpers a failure of the unit is also reported on: the edited ones it reaches; without a base (every
        helper counts as edited), the ones its formulas call themselves."""
        if self.known_base:
            return self.edited_reached(unit)
        names: set[str] = set()
        for formula in unit_formulas(unit):
            names |= manual_text.formula_names(formula)
        return frozenset(names) & self.manual.names

    def to_define(self, units: Iterable[object]) -> frozenset[str]:
        """The helpers an extension of these units defines (none when no unit reaches an edited helper)."""
        reached: set[str] = set()
        for unit in units:
            reached |= self.reached(unit)
        return manual_text.helpers_to_define(self.manual, reached, self.edited, self.declared)

    def code(self, units: Iterable[object], include_roots: Sequence[Path] = ()) -> ManualCode | None:
        """The C++ defining what `to_define` names, None when nothing is."""
        names = self.to_define(units)
        if not names:
            return None
        return manual_text.manual_code(self.manual, names, self.header, include_roots=include_roots)

    def summary(self) -> dict[str, object]:
        return {"path": str(self.path), "base": self.base, "edited": sorted(self.edited)}


def unit_formulas(unit: object) -> list[str]:
    """The C++ text of a unit's formulas (backward and forward) and its saved expressions."""
    info = getattr(unit, "info", None)
    if info is None:
        return []
    texts = [d.formula for d in getattr(info, "derivatives", ())]
    texts += [d.formula for d in getattr(info, "forward_derivatives", ())]
    texts += [a.expr for a in (*getattr(info, "all_saved_inputs", ()), *getattr(info, "all_saved_outputs", ()))]
    return [t for t in texts if isinstance(t, str)]


def find_manual(derivatives: Path, given: Path | None) -> Path | None:
    """The FunctionsManual.cpp of a run: `given` (`--manual FILE`, checked: UsageError) or the checkout's."""
    if given is not None:
        read_manual(given)  # (the error now, before any work)
        return given
    from derivls.base.discovery import CHECKOUT, functions_manual_sources, layout_of

    if layout_of(derivatives).kind != CHECKOUT:
        return None
    found = [p for p in functions_manual_sources(derivatives) if p.suffix == ".cpp"]
    return found[0] if found else None


def read_manual(path: Path) -> str:
    """FunctionsManual.cpp's text, or UsageError (missing, not a regular file, unreadable, not text)."""
    from derivls.project.opener import read_text

    text = read_text(path, "--manual")
    if "\0" in text:
        raise UsageError(f"--manual {path} is not a C++ source (it holds a NUL byte: a binary file)")
    return text


def torch_commit(python: str) -> str | None:
    """The commit the chosen Python's torch was built from: `git_version` of its torch/version.py (read as text)."""
    from derivls.gradcheck.runner import torch_folder

    folder = torch_folder(python)
    if folder is None:
        return None
    try:
        text = (folder / "version.py").read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None
    m = _GIT_VERSION.search(text)
    return m.group(1) if m else None


def load(
    path: Path, *, since: str | None = None, python: str | None = None, header: Path | None = None
) -> EditedManual:
    """The file at `path` and its edited helpers against the base of the module's doc. Raises UsageError for an
    unreadable file or a bad `since` (a torch commit the repository lacks is no error: no base then)."""
    from derivls.project.since import text_at

    text = read_manual(path)
    parsed = manual_text.parse_manual(text, str(path))
    base_text: str | None = None
    if since is not None:
        base_text = text_at(since, path)
        base = f"--since {since}" if base_text is not None else f"--since {since} (the file is new there)"
        if base_text is None:
            return _made(path, parsed, parsed.names, base, header)
    else:
        commit = torch_commit(python) if python is not None else None
        if commit is not None:
            try:
                base_text = text_at(commit, path)
            except UsageError:
                base_text = None
        if base_text is None:
            why = "no git repository holds torch's commit" if commit else "torch's commit is not known"
            return _made(
                path, parsed, parsed.names, f"no base ({why}): every helper the entries call", header, known=False
            )
        base = f"torch's commit {commit[:12]}" if commit else "?"
    return _made(path, parsed, manual_text.edited_helpers(parsed, manual_text.parse_manual(base_text)), base, header)


def _made(
    path: Path, parsed: ManualFile, edited: frozenset[str], base: str, header: Path | None, known: bool = True
) -> EditedManual:
    header_text = None
    declared = None
    if header is not None:
        try:
            header_text = header.read_text(encoding="utf-8", errors="replace")
        except OSError:
            header_text = None
    if header_text is not None:
        from derivls.derivatives.formulas.declarations import parse_declarations

        declared = frozenset(d.name for d in parse_declarations(header_text))
    return EditedManual(path, parsed, frozenset(edited), base, header_text, declared, known)


def header_beside(manual: Path, include_dirs: Sequence[Path]) -> Path | None:
    """FunctionsManual.h for the helpers' defaults and declared names: the one beside the .cpp, else the torch
    headers' (what the extension compiles against)."""
    beside = manual.with_name("FunctionsManual.h")
    if beside.is_file():
        return beside
    for root in include_dirs:
        candidate = Path(root) / "torch" / "csrc" / "autograd" / "FunctionsManual.h"
        if candidate.is_file():
            return candidate
    return None


_COMPILER_ERROR = re.compile(r"^unit\.cpp:(\d+):(\d+):\s*(?:fatal )?error:\s*(.*)$")


def compile_diagnostics(rendered: object, lines: Iterable[str], edited: EditedManual) -> tuple[list[Any], set[str]]:
    """The compiler's errors (`lines`: what it said about unit.cpp) that fall on a FunctionsManual.cpp helper
    defined in `rendered`'s source, each a diagnostic on its line of FunctionsManual.cpp; and those helpers' names."""
    from derivls.base.diagnostics import Diagnostic, Severity, Span
    from derivls.codes.compile import COMPILE_ERROR

    found: list[Any] = []
    names: set[str] = set()
    origin_of = getattr(rendered, "manual_origin", None)
    if origin_of is None:
        return found, names
    file_lines = None
    for line in lines:
        m = _COMPILER_ERROR.match(line)
        if m is None:
            continue
        origin = origin_of(int(m.group(1)) - 1)
        if origin is None:
            continue
        helper = edited.manual.at_line(origin)
        if helper is None and origin in edited.manual.using_lines:  # (every helper defined needs the file's usings)
            what = "a using-declaration of the file"
            broken_now = set(getattr(getattr(rendered, "manual", None), "names", ()))
        elif helper is None:
            continue
        else:
            what = helper.name
            broken_now = {helper.name}
        if file_lines is None:
            file_lines = [""]
            try:
                file_lines = read_manual(edited.path).splitlines()
            except UsageError:
                pass
        width = len(file_lines[origin]) if origin < len(file_lines) else 0
        column = max(0, min(int(m.group(2)) - 1, width))
        names |= broken_now
        diagnostic = Diagnostic(
            Span(origin, column, origin, max(column + 1, width)),
            Severity.ERROR,
            COMPILE_ERROR,
            f"{what}: {m.group(3)} (compiled for derivls gradcheck: {edited.base})",
        )
        if diagnostic not in found:
            found.append(diagnostic)
    return found, names


def failure_diagnostics(
    diagnostics: Sequence[Any], units: Sequence[Any], defined: Iterable[str], edited: EditedManual, derivatives: Path
) -> tuple[list[Any], list[Any]]:
    """Each failure (gradcheck-mismatch) of a unit whose formulas reach an edited helper the extension defined,
    reported twice: on the formula (as it is, with a related place: the helper's definition) and on the helper's
    name in FunctionsManual.cpp. Returns (the diagnostics of derivatives.yaml, those of FunctionsManual.cpp)."""
    from dataclasses import replace

    from derivls.base.diagnostics import Diagnostic, Related, Span
    from derivls.gradcheck.results import CODE

    compiled = set(defined) & edited.edited
    if not compiled:
        return list(diagnostics), []
    by_line = sorted(units, key=lambda u: u.entry_line)
    starts = [u.entry_line for u in by_line]
    out: list[Any] = []
    on_helpers: list[Any] = []
    import bisect

    first: dict[tuple[str, int, str], Any] = {}  # (helper, its line, unit) -> the unit's first failure on it
    counts: dict[tuple[str, int, str], int] = {}
    for d in diagnostics:
        if d.code != CODE:
            out.append(d)
            continue
        k = bisect.bisect_right(starts, d.span.line) - 1
        entry = starts[k] if k >= 0 else None
        mine = [u for u in by_line if u.entry_line == entry]
        helpers = sorted({name for u in mine for name in edited.blamed(u) if name in compiled})
        if not helpers:
            out.append(d)
            continue
        related = list(d.related)
        for name in helpers:
            for h in edited.manual.by_name(name):
                related.append(Related(str(edited.path), h.name_line, f"calls {name}, compiled from this file"))
                key = (name, h.name_line, mine[0].name)
                counts[key] = counts.get(key, 0) + 1
                first.setdefault(key, (h, d))
        out.append(replace(d, related=tuple(related)))
    for key, (h, d) in first.items():
        name, _, unit_name = key
        summary = d.message.splitlines()[0] if d.message else ""
        summary = summary.removeprefix(f"{unit_name}: ")
        more = f" (and {counts[key] - 1} more of its failures)" if counts[key] > 1 else ""
        message = (
            f"{name}: {unit_name}, whose formulas call it, fails gradcheck ({derivatives}:{d.span.line + 1}): "
            f"{summary}{more}"
        )
        span = Span(h.name_line, h.name_column, h.name_line, h.name_column + len(name))
        on_helpers.append(
            Diagnostic(
                span, d.severity, d.code, message, (Related(str(derivatives), d.span.line, "the failing formula"),)
            )
        )
    on_helpers.sort(key=lambda x: (x.span.line, x.span.column))
    return out, on_helpers


__all__ = [
    "EditedManual",
    "compile_diagnostics",
    "failure_diagnostics",
    "find_manual",
    "header_beside",
    "load",
    "read_manual",
    "torch_commit",
    "unit_formulas",
]
