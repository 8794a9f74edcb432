"""Go to definition and references, as files and spans (0-based code points).

- definition: from `name:` to its `func:` line in native_functions.yaml; from a function called in a
  formula to its definition in FunctionsManual.cpp (else its declaration in FunctionsManual.h);
- references: from a `func:` of native_functions.yaml to the entries whose formulas apply to it (its
  own entry first, then its overload group's); from `name:` to the `func:` lines of its overload group.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from pathlib import Path

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.base.diagnostics import Span
from derivls.derivatives.loader import DocumentAnalysis
from derivls.ide import facts, manual
from derivls.ide.context import strip_quotes
from derivls.ide.targets import target_at


@dataclass(frozen=True)
class Location:
    path: str
    span: Span


def native_location(f: NativeFunction) -> Location | None:
    """The schema on the `func:` line of `f` (of the function it was generated from, if generated)."""
    if f.line is None:
        f = f.generated_from or f
    if f.line is None:
        return None
    line = f.line - 1
    column = f.func_column or 0
    return Location(f.path, Span(line, column, line, column + len(str(f.func))))


def manual_locations(files: Iterable[Path], name: str) -> list[Location]:
    """Definitions of `name` in the .cpp files first; the header only when no .cpp has it."""
    locations = []
    for path in sorted(files, key=lambda p: p.suffix != ".cpp"):
        for line, column in manual.definitions(path).get(name, []):
            locations.append(Location(str(path), Span(line, column, line, column + len(name))))
        if locations:
            break
    return locations


def called_function(analysis: DocumentAnalysis, line: int, column: int) -> str | None:
    """The name of the function called at (line, column) of a formula (`foo` in `foo(grad, self)`)."""
    target = target_at(analysis, line, column)
    if target is None or target.kind != "formula" or not target.word or target.item is None:
        return None
    if target.pattern is not None or not re.fullmatch(r"[A-Za-z_]\w*", target.word):
        return None
    if not re.search(rf"(?<![\w.>]){re.escape(target.word)}\s*[(<]", target.item.value.source):
        return None  # not called here
    return target.word


def definition(analysis: DocumentAnalysis, line: int, column: int, manual_files: Iterable[Path] = ()) -> list[Location]:
    target = target_at(analysis, line, column)
    if target is None:
        return []
    if target.kind == "name":
        f = target.entry.result.schema_function
        location = native_location(f) if f is not None else None
        return [location] if location is not None else []
    name = called_function(analysis, line, column)
    return manual_locations(manual_files, name) if name is not None else []


def group_locations(analysis: DocumentAnalysis, index: NativeIndex, line: int, column: int) -> list[Location]:
    """From a `name:`: the `func:` lines of the functions sharing the entry's formulas."""
    target = target_at(analysis, line, column)
    if target is None or target.kind != "name" or target.entry.result.schema_function is None:
        return []
    group = facts.overload_group(index, target.entry.result.schema_function, facts.profile_of(target.entry))
    return [loc for f in group if (loc := native_location(f)) is not None]


_FUNC_LINE = re.compile(r"^\s*(?:-\s+)?func\s*:\s*(.+?)\s*(?:#.*)?$")


def func_at(lines: Sequence[str], line: int) -> str | None:
    """The schema of the native_functions.yaml entry holding `line`."""
    for i in range(min(line, len(lines) - 1), -1, -1):
        text = lines[i]
        m = _FUNC_LINE.match(text)
        if m:
            return strip_quotes(m.group(1))
        if text.startswith("-") and i != line:
            break
    # the cursor may be on the `- ` line of an entry whose func: comes later
    for i in range(line + 1, min(len(lines), line + 30)):
        if lines[i].startswith("-"):
            break
        m = _FUNC_LINE.match(lines[i])
        if m:
            return strip_quotes(m.group(1))
    return None


def lookup(index: NativeIndex, schema: str) -> NativeFunction | None:
    """The function of a schema as written (or as printed after parsing it)."""
    f = index.by_schema.get(schema)
    if f is not None:
        return f
    try:
        from derivls.aten.schema import FunctionSchema

        return index.by_schema.get(str(FunctionSchema.parse(schema)))
    except Exception:
        return None


def entries_applying(analysis: DocumentAnalysis, index: NativeIndex, schema: str) -> list[Span]:
    """`name:` spans of the entries whose formulas apply to `schema`: its own entry first, then its group's."""
    f = lookup(index, schema)
    if f is None:
        return []
    exact: list[Span] = []
    group: list[Span] = []
    for placed, is_exact in facts.entries_for_function(analysis, f):
        name = placed.entry.name
        if name is not None:
            (exact if is_exact else group).append(name.span.shifted(placed.start_line))
    return exact + group


__all__ = [
    "Location",
    "called_function",
    "definition",
    "entries_applying",
    "func_at",
    "group_locations",
    "lookup",
    "manual_locations",
    "native_location",
]
