"""Hover → LSP: ide.hover's markdown (or plain text for clients that want it)."""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from derivls.ide import hover as ide_hover
from derivls.server.documents.pipeline import current
from derivls.server.documents.positions import LineIndex
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
    return to_hover(ls, info, doc.lines)


def to_hover(ls: DerivlsServer, info: Any, lines: LineIndex) -> types.Hover:
    """An ide hover answer (markdown, plain text, span) as the client wants it: derivatives.yaml's and
    native_functions.yaml's alike."""
    markdown = ls.markdown()
    return types.Hover(
        contents=types.MarkupContent(
            kind=types.MarkupKind.Markdown if markdown else types.MarkupKind.PlainText,
            value=info.markdown if markdown else info.plain,
        ),
        range=lines.range(info.span) if info.span is not None else None,
    )


__all__ = ["hover", "to_hover"]
