"""Document and workspace symbols → LSP. Document symbols are joined from per-entry JSON (raw.py)."""

from __future__ import annotations

from lsprotocol import types

from derivls.base.limits import MAX_RESPONSE_ITEMS
from derivls.derivatives.loader import DocumentAnalysis
from derivls.ide import symbols as ide
from derivls.server.documents import indexes
from derivls.server.documents.pipeline import analysed_documents, current
from derivls.server.documents.positions import LineIndex
from derivls.server.features.raw import FragmentCache, RawJSON
from derivls.server.runtime.app import DerivlsServer

MAX_WORKSPACE_SYMBOLS = 500

KINDS = {
    ide.FUNCTION: types.SymbolKind.Function,
    ide.CLASS: types.SymbolKind.Class,
    ide.NAMESPACE: types.SymbolKind.Namespace,
    ide.FIELD: types.SymbolKind.Field,
}


def to_lsp(lines: LineIndex, symbol: ide.DocumentSymbol) -> types.DocumentSymbol:
    return types.DocumentSymbol(
        name=symbol.name,
        detail=symbol.detail,
        kind=KINDS[symbol.kind],
        range=lines.range(symbol.span),
        selection_range=lines.range(symbol.selection),
        children=[to_lsp(lines, child) for child in symbol.children] if symbol.kind != ide.FIELD else None,
    )


def document_symbols(ls: DerivlsServer, params: types.DocumentSymbolParams) -> RawJSON | list[types.DocumentSymbol]:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    cache = doc.fragments.setdefault("symbols", FragmentCache())
    assert isinstance(cache, FragmentCache)
    entries = doc.analysis.entries[:MAX_RESPONSE_ITEMS]  # limits: a bounded answer for a huge file
    return cache.join(entries, (lines.encoding,), lambda placed: [to_lsp(lines, ide.entry_symbol(lines.lines, placed))])


def _symbols_of(uri: str, analysis: DocumentAnalysis, lines: LineIndex, query: str) -> list[types.WorkspaceSymbol]:
    return [
        types.WorkspaceSymbol(
            name=s.name,
            kind=KINDS[s.kind],
            location=types.Location(uri=uri, range=lines.range(s.span)),
            container_name=s.container,
        )
        for s in ide.workspace_symbols(analysis, query)
    ]


async def workspace_symbols(ls: DerivlsServer, params: types.WorkspaceSymbolParams) -> list[types.WorkspaceSymbol]:
    query = params.query.strip()
    found: list[types.WorkspaceSymbol] = []
    seen: set[str] = set()
    for doc in analysed_documents(ls):
        if doc.analysis is None or doc.lines is None:
            continue
        found.extend(_symbols_of(doc.uri, doc.analysis, doc.lines, query))
        if doc.path is not None:
            seen.add(str(doc.path.resolve()))
    for path in indexes.workspace_derivatives(ls):
        if str(path) in seen:
            continue
        closed = await indexes.closed_analysis(ls, path)
        if closed is not None:
            uri, analysis, lines, _ = closed
            found.extend(_symbols_of(uri, analysis, lines, query))
    q = query.lower()
    found.sort(
        key=lambda s: (s.name.lower() != q, not s.name.lower().startswith(q), q not in s.name.lower(), len(s.name))
    )
    return found[:MAX_WORKSPACE_SYMBOLS]


__all__ = ["document_symbols", "workspace_symbols"]
