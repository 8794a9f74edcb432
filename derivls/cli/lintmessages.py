"""`derivls check --format lintrunner`: lintrunner's LintMessage, one JSON object per line.

lintrunner (PyTorch's linter runner) reads a linter's stdout as JSON lines with the keys path, line
(1-based), char (0-based here: the column as derivls counts it, in code points), code (the linter's
code, `DERIVLS`, as `.lintrunner.toml` names it), severity (error | warning | advice | disabled), name
(here the diagnostic code), original, replacement and description. A message with original and
replacement (the whole file before and after) is a patch `lintrunner -a` writes; lintrunner refuses two
patches for one file from one run, so a file's unambiguous fixes (derivls.ide.actions.unambiguous_fix:
a diagnostic with exactly one fix) travel together in one message, and a diagnostic whose fix is a choice
(several close names) is reported without one. A message with no path is lintrunner's "general linter
failure": what `derivls check` cannot do at all (a missing file) is said so, and the linter exits 0 as
lintrunner's protocol asks.
"""

from __future__ import annotations

import json
import os
from collections.abc import Callable, Sequence
from pathlib import Path

from derivls.base.diagnostics import Diagnostic, Edit, Severity
from derivls.cli.report import CheckedFile
from derivls.ide.actions import apply_edits, unambiguous_fix

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

LINTER_CODE = "DERIVLS"  # the `code` of the [[linter]] in .lintrunner.toml
SEVERITY = {Severity.ERROR: "error", Severity.WARNING: "warning"}  # information and hints: "advice"


def severity(d: Diagnostic) -> str:
    return SEVERITY.get(d.severity, "advice")


def message(
    path: str | None,
    d: Diagnostic | None,
    *,
    name: str,
    description: str,
    level: str = "error",
    original: str | None = None,
    replacement: str | None = None,
) -> dict[str, Any]:
    return {
        "path": path,
        "line": d.span.line + 1 if d is not None else None,
        "char": d.span.column if d is not None else None,
        "code": LINTER_CODE,
        "severity": level,
        "name": name,
        "original": original,
        "replacement": replacement,
        "description": description,
    }


def _described(d: Diagnostic, fix_title: str | None = None) -> str:
    text = d.message.rstrip()
    if fix_title:
        text += f"{'' if text.endswith('.') else '.'} Fix: {fix_title}."
    return text


def file_messages(checked: CheckedFile, text: str | None) -> list[dict[str, Any]]:
    """The messages of one checked file; `text` is the file as read (None: unreadable, so no patch)."""
    path = os.path.abspath(checked.path)
    fixed: list[tuple[Diagnostic, str]] = []  # (diagnostic, its fix's title), in file order
    edits: list[Edit] = []
    plain: list[Diagnostic] = []
    for d in sorted(checked.diagnostics, key=lambda d: (d.span.line, d.span.column)):
        fix = unambiguous_fix(d)
        if fix is not None and text is not None and apply_edits(text, [*edits, *fix.edits]) is not None:
            edits.extend(fix.edits)
            fixed.append((d, fix.title))
        else:
            plain.append(d)
    found = [message(path, d, name=str(d.code), description=_described(d), level=severity(d)) for d in plain]
    if fixed and text is not None:
        first = fixed[0][0]
        levels = [d.severity for d, _ in fixed]
        names = list(dict.fromkeys(str(d.code) for d, _ in fixed))
        if len(fixed) == 1:
            description = _described(first, fixed[0][1])
        else:
            description = f"{len(fixed)} fixes in one patch: " + " ".join(
                f"line {d.span.line + 1}: {_described(d, title)}" for d, title in fixed
            )
        found.append(
            message(
                path,
                first,
                name=", ".join(names),
                description=description,
                level=SEVERITY.get(Severity(min(levels)), "advice"),
                original=text,
                replacement=apply_edits(text, edits),
            )
        )
    return sorted(found, key=lambda m: (m["line"] or 0, m["char"] or 0))


def write_lint_messages(results: Sequence[CheckedFile], out: TextIO, read: Callable[[Path], str | None]) -> None:
    """Every file's messages, one JSON object a line; `read(path)` gives a file's text (None: unreadable)."""
    for checked in results:
        for m in file_messages(checked, read(checked.path) if checked.diagnostics else None):
            out.write(json.dumps(m) + "\n")


def failure(description: str) -> str:
    """The one line of a general linter failure (no path): what the check could not do, and why."""
    return json.dumps(message(None, None, name="derivls check failed", description=description)) + "\n"


__all__ = ["LINTER_CODE", "failure", "file_messages", "write_lint_messages"]
