"""What torchgen rejects in native_functions.yaml / tags.yaml, as diagnostics of those files.

The index (derivls.aten.native) records each rejection as a located `NativeProblem`; here it becomes a
`Diagnostic` of its own file. Where the release is known (`known`: a checkout's version.txt, a wheel's
torch/version.py, --torch-version, the setting), everything its torchgen rejects is an error under the
problem's code, with the quick fix where one is clear. Where it is not (no version found, or a release newer
than derivls knows), what the rules merely do not know may be a newer release's feature: a warning
`native-left-out` on its line.
"""

from __future__ import annotations

from collections.abc import Iterable

from derivls.aten.native_rules import NativeProblem
from derivls.base.diagnostics import Diagnostic, Edit, Fix, Span, error, warning
from derivls.codes import lookup
from derivls.codes.native import NATIVE_LEFT_OUT_HERE, NATIVE_YAML

__all__ = ["problem_diagnostic", "problems_by_file", "whole_file_diagnostic"]


def problem_diagnostic(p: NativeProblem, known: bool) -> Diagnostic:
    line = max(p.line - 1, 0)
    end = p.end_column if p.end_column is not None else p.column + 1
    span = Span(line, p.column, line, max(end, p.column + 1))
    if p.unknown and not known:
        return warning(
            span,
            NATIVE_LEFT_OUT_HERE,
            f"{p.message}: left out (the release is not known exactly, so it may be a newer release's; "
            "set --torch-version or the torchVersion setting to judge it)",
        )
    fixes: tuple[Fix, ...] = ()
    if p.fix:
        fixes = (Fix(f"Change to '{p.fix}'", (Edit(span, p.fix),), preferred=True),)
    return error(span, lookup(p.code), p.message, fixes=fixes)


def problems_by_file(problems: Iterable[NativeProblem], known: bool) -> dict[str, list[Diagnostic]]:
    """path → its diagnostics, in file order."""
    out: dict[str, list[Diagnostic]] = {}
    for p in problems:
        out.setdefault(p.path, []).append(problem_diagnostic(p, known))
    for diagnostics in out.values():
        diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
    return out


def whole_file_diagnostic(message: str, line: int | None) -> Diagnostic:
    """A file torchgen cannot read at all (a YAML error, not a list): at its line, else the first."""
    at = max((line or 1) - 1, 0)
    return error(Span(at, 0, at, 1), NATIVE_YAML, message)
