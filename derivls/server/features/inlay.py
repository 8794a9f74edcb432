"""Inlay hints → LSP (only for the requested range)."""

from __future__ import annotations

from lsprotocol import types

from derivls.ide.inlay import inlay_hints as ide_inlay_hints
from derivls.server.documents.pipeline import current
from derivls.server.runtime.app import DerivlsServer


def inlay_hints(ls: DerivlsServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    return [
        types.InlayHint(
            position=lines.position(hint.line, hint.column),
            label=hint.label,
            kind=types.InlayHintKind.Type,
            padding_left=True,
            tooltip=hint.tooltip,
        )
        for hint in ide_inlay_hints(doc.analysis, params.range.start.line, params.range.end.line)
    ]


__all__ = ["inlay_hints"]
