"""Completion → LSP: ide.completion's items as text edits."""

from __future__ import annotations

from lsprotocol import types

from derivls.ide import completion as ide
from derivls.ide.facts import analyzer_profile
from derivls.ide.manual import function_names
from derivls.server.documents.indexes import manual_files
from derivls.server.documents.pipeline import current
from derivls.server.documents.positions import LineIndex
from derivls.server.runtime.app import DerivlsServer

KINDS = {
    ide.FIELD: types.CompletionItemKind.Field,
    ide.KEYWORD: types.CompletionItemKind.Keyword,
    ide.ENUM_MEMBER: types.CompletionItemKind.EnumMember,
    ide.VARIABLE: types.CompletionItemKind.Variable,
    ide.FUNCTION: types.CompletionItemKind.Function,
    ide.METHOD: types.CompletionItemKind.Method,
}


def completion(ls: DerivlsServer, params: types.CompletionParams) -> types.CompletionList | None:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.lines is None:
        return None
    lines = doc.lines
    line, column = lines.column(params.position)
    found = ide.completions(
        lines.lines,
        line,
        column,
        doc.analyzer.index if doc.analyzer is not None else None,
        analyzer_profile(doc.analyzer),
        doc.analysis,
        lambda: function_names(manual_files(ls, doc)),
    )
    if found is None:
        return None
    return types.CompletionList(is_incomplete=found.incomplete, items=[_item(lines, item) for item in found.items])


def _item(lines: LineIndex, item: ide.CompletionItem) -> types.CompletionItem:
    edit_range = types.Range(start=lines.position(item.line, item.start), end=lines.position(item.line, item.end))
    return types.CompletionItem(
        label=item.label,
        kind=KINDS[item.kind],
        detail=item.detail,
        sort_text=item.sort_text,
        filter_text=item.label,
        text_edit=types.TextEdit(range=edit_range, new_text=item.new_text),
    )


__all__ = ["completion"]
