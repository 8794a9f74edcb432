"""Code actions → LSP: ide.actions's quick fixes as workspace edits."""

from __future__ import annotations

from lsprotocol import types

from derivls.ide.actions import fixes_of, quick_fixes
from derivls.server.documents import gradcheck_runs
from derivls.server.documents.pipeline import current
from derivls.server.features import convert
from derivls.server.runtime.app import DerivlsServer


def code_actions(ls: DerivlsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
    only = params.context.only
    if only and not any(str(kind).startswith(types.CodeActionKind.QuickFix) for kind in only):
        return []
    uri = params.text_document.uri
    doc = current(ls, uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    document_changes = ls.client_supports("workspace.workspace_edit.document_changes")
    actions: list[types.CodeAction] = []
    converted: dict[int, types.Diagnostic] = {}
    start, end = lines.column(params.range.start), lines.column(params.range.end)
    # the analysis's fixes, then the repairs gradcheck found (a Replace with `...` on gradcheck-mismatch)
    repairs = fixes_of(gradcheck_runs.diagnostics_now(ls, doc), start, end)
    for fix in [*quick_fixes(doc.analysis, start, end), *repairs]:
        diagnostic = converted.get(id(fix.diagnostic))
        if diagnostic is None:
            diagnostic = converted[id(fix.diagnostic)] = convert.to_lsp(fix.diagnostic, lines, uri)
            if fix in repairs:
                diagnostic.source = gradcheck_runs.SOURCE
        edits = [types.TextEdit(range=lines.range(e.span), new_text=e.new_text) for e in fix.edits]
        if document_changes:
            edit = types.WorkspaceEdit(
                document_changes=[
                    types.TextDocumentEdit(
                        text_document=types.OptionalVersionedTextDocumentIdentifier(uri=uri, version=doc.version),
                        edits=edits,
                    )
                ]
            )
        else:
            edit = types.WorkspaceEdit(changes={uri: edits})
        actions.append(
            types.CodeAction(
                title=fix.title,
                kind=types.CodeActionKind.QuickFix,
                diagnostics=[diagnostic],
                is_preferred=fix.preferred or None,
                edit=edit,
            )
        )
    return actions


__all__ = ["code_actions"]
