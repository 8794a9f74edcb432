"""Document symbols (one per entry, its keys or dispatch sections as children) and workspace symbols
(`AddBackward0` as a class, `add.Tensor` as a function)."""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from derivls.base.diagnostics import Span
from derivls.base.safeyaml import short_str
from derivls.derivatives.document import FormulaItem
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.ide import facts

# kinds (the server maps them to its protocol's)
FUNCTION = "function"
CLASS = "class"
NAMESPACE = "namespace"
FIELD = "field"


@dataclass(frozen=True)
class DocumentSymbol:
    """`span` covers the symbol; `selection` (inside it) is its name. 0-based code points."""

    name: str
    detail: str
    kind: str
    span: Span
    selection: Span
    children: tuple[DocumentSymbol, ...] = ()


@dataclass(frozen=True)
class WorkspaceSymbol:
    name: str
    kind: str
    span: Span  # of the entry's `name:` value
    container: str | None


def _line_length(lines: Sequence[str], line: int) -> int:
    return len(lines[line]) if 0 <= line < len(lines) else 0


def entry_span(lines: Sequence[str], placed: PlacedEntry) -> Span:
    """The entry, from its `- ` to the end of its last line (not into the next entry)."""
    last = placed.end_line
    span = placed.entry.span.shifted(placed.start_line)
    if span.end_column == 0 and last > span.line:
        last -= 1
    return Span(span.line, span.column, last, _line_length(lines, last))


def inside(inner: Span, outer: Span) -> Span:
    """Clamp `inner` into `outer` (clients require the selection inside the symbol)."""
    start = (inner.line, inner.column)
    if not (outer.line, outer.column) <= start <= (outer.end_line, outer.end_column):
        start = (outer.line, outer.column)
    end = (inner.end_line, inner.end_column)
    if not start <= end <= (outer.end_line, outer.end_column):
        end = (outer.end_line, outer.end_column)
    if end < start:
        end = start
    return Span(start[0], start[1], end[0], end[1])


def short(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def entry_symbol(lines: Sequence[str], placed: PlacedEntry) -> DocumentSymbol:
    entry = placed.entry
    name = entry.name
    label = name.value if name is not None and isinstance(name.value, str) and name.value.strip() else "(entry)"
    full = entry_span(lines, placed)
    selection = inside(name.span.shifted(placed.start_line), full) if name is not None else full
    children: list[DocumentSymbol] = []
    for section in entry.sections:
        items = [_item_symbol(placed, item, full) for item in section.items]
        if not section.explicit:
            children.extend(items)
            continue
        key_span = inside(section.key.span.shifted(placed.start_line), full)
        end = items[-1].span if items else key_span
        children.append(
            DocumentSymbol(
                name=short_str(section.key.value),
                detail=placed.op(short_str(section.key.value)) or "",
                kind=NAMESPACE,
                span=Span(key_span.line, key_span.column, end.end_line, end.end_column),
                selection=key_span,
                children=tuple(items),
            )
        )
    return DocumentSymbol(
        name=label,
        detail=", ".join(facts.node_names(placed)),
        kind=FUNCTION,
        span=full,
        selection=selection,
        children=tuple(children),
    )


def _item_symbol(placed: PlacedEntry, item: FormulaItem, outer: Span) -> DocumentSymbol:
    key_span = item.key.span.shifted(placed.start_line)
    value_span = item.value.span.shifted(placed.start_line)
    whole = inside(Span(key_span.line, key_span.column, value_span.end_line, value_span.end_column), outer)
    return DocumentSymbol(
        name=short_str(item.key.value),
        detail=short(short_str(item.value.value)),
        kind=FIELD,
        span=whole,
        selection=inside(key_span, whole),
    )


def document_symbols(lines: Sequence[str], analysis: DocumentAnalysis) -> list[DocumentSymbol]:
    return [entry_symbol(lines, placed) for placed in analysis.entries]


def matches(query: str, name: str) -> bool:
    """`query` in `name`, or its characters in order (case-insensitive)."""
    if not query:
        return True
    if len(query) > len(name):  # cannot match; and a huge query costs nothing (no lower() per name)
        return False
    q = query.lower()
    n = name.lower()
    if q in n:
        return True
    i = 0
    for ch in n:
        if i < len(q) and ch == q[i]:
            i += 1
    return i == len(q)


def workspace_symbols(analysis: DocumentAnalysis, query: str) -> list[WorkspaceSymbol]:
    """The function and node names of every entry matching `query`, in document order."""
    found = []
    for placed in analysis.entries:
        name = placed.entry.name
        if name is None:
            continue
        span = name.span.shifted(placed.start_line)
        function_name = facts.entry_function_name(placed)
        if function_name is None and isinstance(name.value, str):
            function_name = name.value.split("(")[0].strip()
        ops = facts.node_names(placed)
        if function_name and matches(query, function_name):
            found.append(WorkspaceSymbol(function_name, FUNCTION, span, ", ".join(ops) or None))
        for op in ops:
            if matches(query, op):
                found.append(WorkspaceSymbol(op, CLASS, span, function_name))
    return found


def rank(symbols: list[WorkspaceSymbol], query: str) -> list[WorkspaceSymbol]:
    """Exact matches first, then prefixes, then substrings, then shorter names."""
    q = query.lower()
    return sorted(
        symbols,
        key=lambda s: (s.name.lower() != q, not s.name.lower().startswith(q), q not in s.name.lower(), len(s.name)),
    )


__all__ = [
    "CLASS",
    "FIELD",
    "FUNCTION",
    "NAMESPACE",
    "DocumentSymbol",
    "WorkspaceSymbol",
    "document_symbols",
    "entry_span",
    "entry_symbol",
    "matches",
    "rank",
    "workspace_symbols",
]
