"""Definition and references → LSP locations (an open native_functions.yaml buffer is linked by its URI)."""

from __future__ import annotations

from lsprotocol import types

from derivls.base import discovery
from derivls.ide import navigation
from derivls.server.documents import indexes
from derivls.server.documents.indexes import ClosedAnalysis
from derivls.server.documents.pipeline import current
from derivls.server.documents.positions import LineIndex
from derivls.server.features.convert import file_uri
from derivls.server.runtime.app import DerivlsServer, resolved, uri_path


def _location(ls: DerivlsServer, location: navigation.Location, lines: LineIndex | None = None) -> types.Location:
    """`lines` converts columns when the file is one the server holds; other files are ASCII code."""
    overlay = ls.natives.overlays.get(location.path)
    uri = overlay[0] if overlay is not None else file_uri(location.path)
    span = location.span
    if lines is not None:
        return types.Location(uri=uri, range=lines.range(span))
    return types.Location(
        uri=uri,
        range=types.Range(
            start=types.Position(line=span.line, character=span.column),
            end=types.Position(line=span.end_line, character=span.end_column),
        ),
    )


def definition(ls: DerivlsServer, params: types.DefinitionParams) -> list[types.Location] | None:
    uri = params.text_document.uri
    if uri not in ls.docs:
        return None  # from native_functions.yaml: see references
    doc = current(ls, uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return None
    line, column = doc.lines.column(params.position)
    if navigation.called_function(doc.analysis, line, column) is not None:
        files = indexes.manual_files(ls, doc)
    else:
        files = []
    found = navigation.definition(doc.analysis, line, column, files)
    return [_location(ls, loc) for loc in found] or None


async def references(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
    uri = params.text_document.uri
    if uri in ls.docs:
        return _references_in_derivatives(ls, params)
    if indexes.native_kind(uri) != "native_functions.yaml":
        return None
    lines = LineIndex(ls.workspace.get_text_document(uri).source, ls.encoding)
    line, _ = lines.column(params.position)
    schema = navigation.func_at(lines.lines, line)
    if schema is None:
        return None
    locations: list[types.Location] = []
    for doc_uri, analysis, doc_lines, index in await _analyses_of(ls, uri):
        for span in navigation.entries_applying(analysis, index, schema):
            locations.append(types.Location(uri=doc_uri, range=doc_lines.range(span)))
    # the declaration is the func: line the request came from; clients show it already
    return locations


async def _analyses_of(ls: DerivlsServer, native_uri: str) -> list[ClosedAnalysis]:
    """Analyses of the derivatives.yaml files that read this native_functions.yaml: open ones, then its own."""
    path = uri_path(native_uri)
    native = resolved(path) if path is not None else None
    analyses: list[ClosedAnalysis] = []
    seen: set[str] = set()
    for doc in list(ls.docs.values()):
        if doc.key is None or doc.key[0] != native:
            continue
        if ls.host.waiting(doc):
            await indexes.ensure_index(ls, doc.key)
        now = current(ls, doc.uri)
        if now is None or now.analysis is None or now.lines is None or now.analyzer is None:
            continue
        if now.analyzer.index is None:
            continue
        analyses.append((now.uri, now.analysis, now.lines, now.analyzer.index))
        if now.path is not None:
            seen.add(str(now.path.resolve()))
    if path is not None:
        for candidate in discovery.derivatives_for_native(path):
            if str(candidate) in seen:
                continue
            closed = await indexes.closed_analysis(ls, candidate)
            if closed is not None:
                analyses.append(closed)
    return analyses


def _references_in_derivatives(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
    """From a `name:`: the `func:` line(s) of the functions sharing the entry's formulas."""
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None or doc.analyzer is None or doc.analyzer.index is None:
        return None
    line, column = doc.lines.column(params.position)
    found = navigation.group_locations(doc.analysis, doc.analyzer.index, line, column)
    return [_location(ls, loc) for loc in found] or None


__all__ = ["definition", "references"]
