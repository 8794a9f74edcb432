"""What a check reports: a file's diagnostics, and how they are written (text, JSON, GitHub annotations).

Shared by `derivls check` (cli.py) and `derivls check --compile` (derivls.cli.compile).
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from derivls.base.diagnostics import Diagnostic, Severity
from derivls.base.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import TextIO


@frozen_dataclass
class CheckedFile:
    path: Path
    diagnostics: tuple[Diagnostic, ...]
    rules: str | None = None  # which release's rules, and why


def annotation_path(path: Path, cwd: Path | None = None) -> str:
    """The `file=` of a GitHub annotation: relative to the current directory (the repository root in a
    workflow) when `path` is under it, else as given."""
    try:
        base = os.path.abspath(cwd if cwd is not None else os.getcwd())
        relative = os.path.relpath(os.path.abspath(path), base)
    except (ValueError, OSError):  # another drive; no working directory
        return str(path)
    return str(path) if relative == os.pardir or relative.startswith(os.pardir + os.sep) else Path(relative).as_posix()


def diagnostic_rows(results: Sequence[CheckedFile]) -> list[dict[str, object]]:
    """The diagnostics as `--format json` gives them (1-based, end exclusive)."""
    return [
        {
            "path": str(r.path),
            "line": d.span.line + 1,
            "column": d.span.column + 1,
            "end_line": d.span.end_line + 1,
            "end_column": d.span.end_column + 1,
            "severity": d.severity.label,
            "code": d.code,
            "message": d.message,
        }
        for r in results
        for d in r.diagnostics
    ]


def write_diagnostics(results: Sequence[CheckedFile], fmt: str, out: TextIO) -> None:
    if fmt == "json":
        import json

        json.dump(diagnostic_rows(results), out, indent=2)
        out.write("\n")
        return
    for r in results:
        for d in r.diagnostics:
            if fmt == "github":
                level = {Severity.ERROR: "error", Severity.WARNING: "warning"}.get(d.severity, "notice")
                message = d.message.replace("%", "%25").replace("\r", "%0D").replace("\n", "%0A")
                out.write(
                    f"::{level} file={annotation_path(r.path)},line={d.span.line + 1},col={d.span.column + 1},"
                    f"endLine={d.span.end_line + 1},endColumn={d.span.end_column + 1},title={d.code}::{message}\n"
                )
            else:
                message = d.message.replace("\n", "\n    ")
                out.write(f"{r.path}:{d.span.line + 1}:{d.span.column + 1}: {d.severity.label}: {message} [{d.code}]\n")
    if fmt == "text":
        for r in results:
            if r.rules:
                out.write(f"{r.path}: using {r.rules}\n")
            out.write(summary_line(r) + "\n")


def summary_line(r: CheckedFile) -> str:
    """`checked PATH: 1 error, 0 warnings`, and a warning when the formula names could not be checked
    (an information diagnostic in an editor, easy to miss at the end of a terminal)."""
    from derivls.base.words import plural
    from derivls.codes.setup import FORMULA_SOURCES_MISSING

    errors = sum(1 for d in r.diagnostics if d.severity == Severity.ERROR)
    warnings = sum(1 for d in r.diagnostics if d.severity == Severity.WARNING)
    line = f"checked {r.path}: {plural(errors, 'error')}, {plural(warnings, 'warning')}"
    if any(d.code == FORMULA_SOURCES_MISSING for d in r.diagnostics):
        line += (
            "; warning: formula names were not checked (FunctionsManual.h or the Tensor headers not found:"
            f" pass --torch-include DIR of the matching torch; derivls explain {FORMULA_SOURCES_MISSING})"
        )
    return line


__all__ = ["CheckedFile", "diagnostic_rows", "summary_line", "annotation_path", "write_diagnostics"]
