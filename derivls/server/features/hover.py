"""Hover → LSP: ide.hover's markdown (or plain text for clients that want it)."""

from __future__ import annotations

from lsprotocol import types

from derivls.ide import hover as ide_hover
from derivls.server.documents.pipeline import current
from derivls.server.runtime.app import DerivlsServer


def hover(ls: DerivlsServer, params: types.HoverParams) -> types.Hover | None:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return None
    line, column = doc.lines.column(params.position)
    index = doc.analyzer.index if doc.analyzer is not None else None
    info = ide_hover.hover(doc.analysis, index, line, column)
    if info is None:
        return None
    markdown = ls.markdown()
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
            value=info.markdown if markdown else info.plain,
        ),
        range=doc.lines.range(info.span) if info.span is not None else None,
    )


__all__ = ["hover"]
