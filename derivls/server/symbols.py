"""Document symbols (one per entry, keys as children) and workspace symbols (`AddBackward0`, `add.Tensor`)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from derivls.derivatives import query
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.diagnostics import Span
from derivls.limits import MAX_RESPONSE_ITEMS
from derivls.safeyaml import short_str
from derivls.server.positions import LineIndex
from derivls.server.raw import FragmentCache, RawJSON

if TYPE_CHECKING:
    from derivls.server.main import DerivlsServer

MAX_WORKSPACE_SYMBOLS = 500


def _entry_range(lines: LineIndex, placed: PlacedEntry) -> types.Range:
    last = placed.end_line
    # the YAML node ends at the start of the next entry's line; keep the range inside this entry
    span = placed.entry.span.shifted(placed.start_line)
    if span.end_column == 0 and last > span.line:
        last -= 1
    return types.Range(start=lines.position(span.line, span.column), end=lines.position(last, len(lines.line(last))))


def _short(text: str, width: int = 80) -> str:
    text = " ".join(text.split())
    return text if len(text) <= width else text[: width - 1] + "…"


def document_symbols(ls: DerivlsServer, params: types.DocumentSymbolParams) -> RawJSON | list[types.DocumentSymbol]:
    doc = ls.current(params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    cache = doc.fragments.setdefault("symbols", FragmentCache())
    assert isinstance(cache, FragmentCache)
    entries = doc.analysis.entries[:MAX_RESPONSE_ITEMS]  # limits: a bounded answer for a huge file
    return cache.join(entries, (lines.encoding,), lambda placed: [entry_symbol(lines, placed)])


def entry_symbol(lines: LineIndex, placed: PlacedEntry) -> types.DocumentSymbol:
    entry = placed.entry
    name = entry.name
    label = name.value if name is not None and isinstance(name.value, str) and name.value.strip() else "(entry)"
    full = _entry_range(lines, placed)
    selection = lines.range(name.span.shifted(placed.start_line)) if name is not None else full
    selection = _inside(selection, full)
    children: list[types.DocumentSymbol] = []
    for section in entry.sections:
        items = [_item_symbol(lines, placed, item, full) for item in section.items]
        if section.explicit:
            key_range = _inside(lines.range(section.key.span.shifted(placed.start_line)), full)
            end = items[-1].range.end if items else key_range.end
            section_range = types.Range(start=key_range.start, end=end)
            op = placed.op(str(section.key.value))
            children.append(
                types.DocumentSymbol(
                    name=short_str(section.key.value),
                    detail=op or "",
                    kind=types.SymbolKind.Namespace,
                    range=section_range,
                    selection_range=key_range,
                    children=items,
                )
            )
        else:
            children.extend(items)
    return types.DocumentSymbol(
        name=label,
        detail=", ".join(query.node_names(placed)),
        kind=types.SymbolKind.Function,
        range=full,
        selection_range=selection,
        children=children,
    )


def _inside(inner: types.Range, outer: types.Range) -> types.Range:
    """Clamp `inner` into `outer` (clients require selectionRange ⊆ range)."""

    def key(p: types.Position) -> tuple[int, int]:
        return p.line, p.character

    start = inner.start if key(outer.start) <= key(inner.start) <= key(outer.end) else outer.start
    end = inner.end if key(start) <= key(inner.end) <= key(outer.end) else outer.end
    if key(end) < key(start):
        end = start
    return types.Range(start=start, end=end)


def _item_symbol(lines: LineIndex, placed: PlacedEntry, item, outer: types.Range) -> types.DocumentSymbol:
    key_span = item.key.span.shifted(placed.start_line)
    value_span = item.value.span.shifted(placed.start_line)
    whole = _inside(
        lines.range(Span(key_span.line, key_span.column, value_span.end_line, value_span.end_column)), outer
    )
    return types.DocumentSymbol(
        name=short_str(item.key.value),
        detail=_short(short_str(item.value.value)),
        kind=types.SymbolKind.Field,
        range=whole,
        selection_range=_inside(lines.range(key_span), whole),
    )


def _matches(query_text: str, name: str) -> bool:
    if not query_text:
        return True
    if len(query_text) > len(name):  # cannot match: and a huge query costs nothing (no lower() per name)
        return False
    q = query_text.lower()
    n = name.lower()
    if q in n:
        return True
    # fuzzy: the query's characters in order
    i = 0
    for ch in n:
        if i < len(q) and ch == q[i]:
            i += 1
    return i == len(q)


def _symbols_of(uri: str, analysis: DocumentAnalysis, lines: LineIndex, query_text: str) -> list[types.WorkspaceSymbol]:
    found = []
    for placed in analysis.entries:
        name = placed.entry.name
        if name is None:
            continue
        location = types.Location(uri=uri, range=lines.range(name.span.shifted(placed.start_line)))
        function_name = query.entry_function_name(placed)
        if function_name is None and isinstance(name.value, str):
            function_name = name.value.split("(")[0].strip()
        if function_name and _matches(query_text, function_name):
            found.append(
                types.WorkspaceSymbol(
                    name=function_name,
                    kind=types.SymbolKind.Function,
                    location=location,
                    container_name=", ".join(query.node_names(placed)) or None,
                )
            )
        for op in query.node_names(placed):
            if _matches(query_text, op):
                found.append(
                    types.WorkspaceSymbol(
                        name=op, kind=types.SymbolKind.Class, location=location, container_name=function_name
                    )
                )
    return found


async def workspace_symbols(ls: DerivlsServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
    query_text = params.query.strip()
    found: list[types.WorkspaceSymbol] = []
    seen: set[str] = set()
    for doc in ls.analysed_documents():
        if doc.analysis is None or doc.lines is None:
            continue
        found.extend(_symbols_of(doc.uri, doc.analysis, doc.lines, query_text))
        if doc.path is not None:
            seen.add(str(doc.path.resolve()))
    for path in ls.workspace_derivatives():
        if str(path) in seen:
            continue
        closed = await ls.closed_analysis(path)
        if closed is not None:
            uri, analysis, lines, _ = closed
            found.extend(_symbols_of(uri, analysis, lines, query_text))
    q = query_text.lower()
    # exact and prefix matches first
    found.sort(
        key=lambda s: (s.name.lower() != q, not s.name.lower().startswith(q), q not in s.name.lower(), len(s.name))
    )
    return found[:MAX_WORKSPACE_SYMBOLS]


__all__ = ["document_symbols", "workspace_symbols"]
