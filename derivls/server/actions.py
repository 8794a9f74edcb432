"""Code actions: the quick fixes the analysis attaches to its diagnostics."""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from derivls.server import convert

if TYPE_CHECKING:
    from derivls.server.main import DerivlsServer


def code_actions(ls: DerivlsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only
    if only and not any(str(kind).startswith(types.CodeActionKind.QuickFix) for kind in only):
        return []
    uri = params.text_document.uri
    doc = ls.current(uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    start = lines.column(params.range.start)
    end = lines.column(params.range.end)
    actions: list[types.CodeAction] = []
    for d in doc.analysis.diagnostics:
        if not d.fixes or not convert.overlaps(d.span, start, end):
            continue
        lsp_diagnostic = convert.to_lsp(d, lines, uri)
        for fix in d.fixes:
            edits = [types.TextEdit(range=lines.range(e.span), new_text=e.new_text) for e in fix.edits]
            actions.append(
                types.CodeAction(
                    title=fix.title,
                    kind=types.CodeActionKind.QuickFix,
                    diagnostics=[lsp_diagnostic],
                    is_preferred=fix.preferred or None,
                    edit=types.WorkspaceEdit(
                        document_changes=[
                            types.TextDocumentEdit(
                                text_document=types.OptionalVersionedTextDocumentIdentifier(
                                    uri=uri, version=doc.version
                                ),
                                edits=edits,
                            )
                        ]
                    )
                    if _document_changes(ls)
                    else types.WorkspaceEdit(changes={uri: edits}),
                )
            )
    return actions


def _document_changes(ls: DerivlsServer) -> bool:
    return ls.client_supports("workspace.workspace_edit.document_changes")


__all__ = ["code_actions"]
