"""An open native_functions.yaml → LSP: hover on `func:`, go to the derivatives.yaml entry that covers the
function, completion (ide.native_file's plain data, converted here)."""

from __future__ import annotations

from lsprotocol import types

from derivls.aten.native import NativeIndex
from derivls.ide import native_file
from derivls.server.documents import indexes
from derivls.server.documents.positions import LineIndex
from derivls.server.features import convert
from derivls.server.features.convert import file_uri
from derivls.server.features.hover import to_hover
from derivls.server.runtime.app import DerivlsServer, resolved, uri_path

_KINDS = {
    "key": types.CompletionItemKind.Property,
    "dispatch-key": types.CompletionItemKind.EnumMember,
    "tag": types.CompletionItemKind.EnumMember,
    "variant": types.CompletionItemKind.EnumMember,
    "device-check": types.CompletionItemKind.EnumMember,
    "type": types.CompletionItemKind.Class,
}


def is_native(uri: str) -> bool:
    return indexes.native_kind(uri) == "native_functions.yaml"


def _lines(ls: DerivlsServer, uri: str) -> LineIndex:
    return LineIndex(ls.workspace.get_text_document(uri).source, ls.encoding)


def _index(ls: DerivlsServer, uri: str) -> NativeIndex | None:
    path = uri_path(uri)
    if path is None:
        return None
    key = resolved(path)
    return next((i.index for k, i in ls.host.indexes.items() if k[0] == key and i.index is not None), None)


async def _analyses(ls: DerivlsServer, uri: str) -> list[tuple[str, object]]:
    from derivls.server.features.definition import _analyses_of

    found = await _analyses_of(ls, uri)
    return [(str(uri_path(doc_uri) or doc_uri), analysis) for doc_uri, analysis, _, _ in found]


async def hover(ls: DerivlsServer, params: types.HoverParams) -> types.Hover | None:
    uri = params.text_document.uri
    index = _index(ls, uri)
    if index is None:
        return None
    lines = _lines(ls, uri)
    line, _ = lines.column(params.position)
    if native_file.func_span(lines.lines, line) is None:
        return None
    analyses = await _analyses(ls, uri)
    info = native_file.func_hover(lines.lines, line, index, analyses)  # type: ignore[arg-type]
    if info is None:
        return None
    return to_hover(ls, info, lines)


async def definition(ls: DerivlsServer, params: types.DefinitionParams) -> list[types.Location] | None:
    """From a `func:` to the derivatives.yaml entries whose formulas apply to it (its own first)."""
    uri = params.text_document.uri
    index = _index(ls, uri)
    if index is None:
        return None
    lines = _lines(ls, uri)
    line, _ = lines.column(params.position)
    schema = native_file.func_at(lines.lines, line) if native_file.func_span(lines.lines, line) else None
    f = native_file.lookup(index, schema) if schema is not None else None
    if f is None:
        return None
    out = []
    for path, at, _name, _, _ in native_file.covering(await _analyses(ls, uri), f):  # type: ignore[arg-type]
        position = types.Position(line=at, character=0)
        doc = next((d for d in ls.docs.values() if d.path is not None and str(d.path) == path), None)
        target = doc.uri if doc is not None else file_uri(path)
        out.append(types.Location(uri=target, range=types.Range(start=position, end=position)))
    return out or None


def completion(ls: DerivlsServer, params: types.CompletionParams) -> types.CompletionList | None:
    uri = params.text_document.uri
    lines = _lines(ls, uri)
    line, column = lines.column(params.position)
    found = native_file.completions(lines.lines, line, column, _index(ls, uri))
    if found is None:
        return None
    edit_range = lines.range(found.span)
    kind = _KINDS.get(found.kind)
    items = [
        types.CompletionItem(label=item, kind=kind, text_edit=types.TextEdit(range=edit_range, new_text=item))
        for item in found.items
    ]
    return types.CompletionList(is_incomplete=False, items=items)


def code_actions(ls: DerivlsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    """The quick fixes of the mistakes in range: the one known name one edit away from a misspelled type, key,
    tag, dispatch key, variant or device check."""
    from derivls.aten.native_report import problem_diagnostic

    only = params.context.only
    if only and not any(str(kind).startswith(types.CodeActionKind.QuickFix) for kind in only):
        return []
    uri = params.text_document.uri
    path = uri_path(uri)
    checker = ls.natives.checkers.get(resolved(path)) if path is not None else None
    loaded = next((i for k, i in ls.host.indexes.items() if path is not None and k[0] == resolved(path)), None)
    if checker is None or loaded is None:
        return []
    known = loaded.load.release is not None and loaded.load.release.known
    document = ls.workspace.get_text_document(uri)
    lines = LineIndex(document.source, ls.encoding)
    start, end = lines.column(params.range.start), lines.column(params.range.end)
    actions: list[types.CodeAction] = []
    for problem in checker.check(document.source):
        if not problem.fix:
            continue
        d = problem_diagnostic(problem, known)
        if (d.span.end_line, d.span.end_column) < start or (d.span.line, d.span.column) > end:
            continue
        diagnostic = convert.to_lsp(d, lines, uri)
        for fix in d.fixes:
            edits = [types.TextEdit(range=lines.range(e.span), new_text=e.new_text) for e in fix.edits]
            actions.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[diagnostic],
                    is_preferred=fix.preferred or None,
                    edit=types.WorkspaceEdit(changes={uri: edits}),
                )
            )
    return actions


__all__ = ["code_actions", "completion", "definition", "hover", "is_native"]
