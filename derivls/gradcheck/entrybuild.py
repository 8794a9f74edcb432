"""A run's extension built entry by entry: the entries whose code the compiler rejects get `check --compile`'s
diagnostics and are left out, and the others are built again (at most BUILD_ATTEMPTS builds)."""

from __future__ import annotations

import re
import threading
from collections.abc import Sequence
from pathlib import Path
from types import SimpleNamespace
from typing import Any

from derivls.base.diagnostics import Diagnostic
from derivls.compile.file_templates import Templates
from derivls.compile.toolchain import Toolchain
from derivls.compile.units import Unit
from derivls.gradcheck import build as building
from derivls.gradcheck import edited
from derivls.gradcheck.source import render


class Cancelled(Exception):
    """The run was cancelled (the editor's run superseded or stopped)."""


NOT_COMPILED = "the entry's code does not compile (its compile error is on the entry)"
BUILD_ATTEMPTS = 3  # builds of one run's extension: the first, then without the entries that did not compile


def build_checkable(
    units: Sequence[Unit],
    rendered: Any,
    toolchain: Toolchain,
    templates: Templates,
    cache: Path | None,
    cancel: threading.Event | None = None,
    manual: Any = None,
    helper_errors: list[Diagnostic] | None = None,
) -> tuple[Any, Any, list[Diagnostic]]:
    """The extension of `rendered` (the units' code), entry by entry: when the compiler rejects some units' code,
    their entries get `check --compile`'s diagnostics (each compiler error mapped through the source map onto its
    formula's YAML line: derivls.compile.engine), those units are left out (not checkable: NOT_COMPILED), and the
    others are rendered and built again. Returns (built, the rendered code built, the compile diagnostics).
    Raises CompileFailed when the failure is no unit's (nothing left to build, or none of the units to blame).

    With `manual` (derivls.gradcheck.edited.EditedManual; its helpers defined in the source): a compiler error on a
    helper's line is a diagnostic on that line of FunctionsManual.cpp (appended to `helper_errors`), the units
    whose formulas reach that helper are left out, and the rest built again; the check --compile run that places a
    unit's errors on its formulas compiles them with the same helpers (a changed signature: the build's error)."""
    from derivls.compile.engine import compile_units
    from derivls.gradcheck.trials import culprits

    diagnostics: list[Diagnostic] = []
    left_out: list[tuple[Unit, str]] = []
    for attempt in range(BUILD_ATTEMPTS):
        try:
            built = building.build(rendered.source, toolchain, templates, cache, units=len(rendered.plans))
            rendered.not_buildable = [*rendered.not_buildable, *left_out]
            return built, rendered, diagnostics
        except building.CompileFailed as e:
            if attempt == BUILD_ATTEMPTS - 1:
                raise
            if manual is not None and getattr(rendered, "manual", None) is not None:
                on_lines, broken = edited.compile_diagnostics(rendered, e.lines, manual)
                if on_lines:
                    if helper_errors is not None:
                        helper_errors.extend(d for d in on_lines if d not in helper_errors)
                    names = ", ".join(sorted(broken))
                    why = f"FunctionsManual.cpp's {names} does not compile (its error is on its line there)"
                    gone = {u.entry_line for u in units if manual.reached(u) & broken}
                    left_out.extend((u, why) for u in units if u.entry_line in gone)
                    units = [u for u in units if u.entry_line not in gone]
                    rendered = render_units(units, templates, manual.code(units, toolchain.include_dirs))
                    if not rendered.plans:
                        rendered.not_buildable = [*rendered.not_buildable, *left_out]
                        return None, rendered, diagnostics
                    continue
            by_plan = {p.id: SimpleNamespace(unit=p.unit) for p in rendered.plans}
            blamed = culprits(rendered.source, "\n".join(e.lines), by_plan)
            suspects = [p.unit for p in rendered.plans if blamed is None or p.id in blamed]
            if cancel is not None and cancel.is_set():
                raise Cancelled() from None
            helpers = None
            code = getattr(rendered, "manual", None)
            if code is not None:
                helpers = (code.text, code.usings())
            found = compile_units(suspects, toolchain, templates, cache=cache, cancel=cancel, helpers=helpers)
            failed = [u for u in suspects if found.by_entry.get(u.entry_line)]
            if failed:  # (by_entry's order is the batches' finishing order: sorted, as check --compile's)
                diagnostics.extend(d for u in failed for d in found.by_entry[u.entry_line] if d not in diagnostics)
                diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
            elif blamed is not None:  # the harness's code around the formulas: placed on the entry, not quoted
                failed = suspects
                diagnostics.extend(harness_error(u, e) for u in failed)
            else:
                raise
            gone = {u.entry_line for u in failed}
            left_out.extend((u, NOT_COMPILED) for u in units if u.entry_line in gone)
            rest = [u for u in units if u.entry_line not in gone]
            code = manual.code(rest, toolchain.include_dirs) if manual is not None else None
            rendered = render_units(rest, templates, code)
            if not rendered.plans:
                rendered.not_buildable = [*rendered.not_buildable, *left_out]
                return None, rendered, diagnostics
    raise AssertionError("unreachable")


def render_units(units: Sequence[Unit], templates: Templates, manual: Any = None) -> Any:
    """source.render into the extension's library, with FunctionsManual.cpp's helpers `manual` when there are."""
    if manual is None:
        return render(units, building.LIBRARY_PLACEHOLDER, templates)
    return render(units, building.LIBRARY_PLACEHOLDER, templates, manual)


def harness_error(unit: Unit, e: Exception) -> Diagnostic:
    """A compile error in the code gradcheck writes around a unit's formulas (check --compile's code compiles)."""
    from derivls.base.diagnostics import Severity
    from derivls.codes.compile import COMPILE_ERROR

    lines = [re.sub(r"^unit\.cpp:\d+:\d+:\s*", "", line) for line in getattr(e, "lines", ()) if "error" in line]
    what = lines[0][:300] if lines else "the compiler rejected it"
    return Diagnostic(
        unit.name_span,
        Severity.ERROR,
        COMPILE_ERROR,
        f"{unit.name}: the gradcheck code of this entry does not compile (its formulas do, as the build compiles "
        f"them): {what}",
    )
