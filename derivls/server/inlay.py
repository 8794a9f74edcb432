"""Inlay hints: the node name(s) after `name:`, and what each backward formula makes the node save."""

from __future__ import annotations

from bisect import bisect_left
from typing import TYPE_CHECKING

from lsprotocol import types

from derivls.derivatives import query

if TYPE_CHECKING:
    from derivls.server.main import DerivlsServer

MAX_SAVED_SHOWN = 6


def inlay_hints(ls: DerivlsServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    doc = ls.current(params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines
    first = max(params.range.start.line, 0)
    last = params.range.end.line
    entries = doc.analysis.entries
    starts = [e.line for e in entries]
    i = max(bisect_left(starts, first) - 1, 0)
    hints: list[types.InlayHint] = []
    for placed in entries[i:]:
        if placed.line > last:
            break
        if placed.end_line < first:
            continue
        name = placed.entry.name
        ops = query.node_names(placed)
        if name is not None and ops:
            span = name.span.shifted(placed.start_line)
            if first <= span.end_line <= last:
                hints.append(
                    types.InlayHint(
                        position=lines.position(span.end_line, span.end_column),
                        label=", ".join(ops),
                        kind=types.InlayHintKind.Type,
                        padding_left=True,
                        tooltip="the autograd node torchgen generates for this entry",
                    )
                )
        for section in placed.result.sections:
            for kr in section.keys:
                saves = query.derivative_saves(kr)
                if not saves:
                    continue
                span = kr.item.value.span.shifted(placed.start_line)
                if not first <= span.end_line <= last:
                    continue
                labels = [query.saved_label(s) for s in saves]
                label = ", ".join(labels[:MAX_SAVED_SHOWN])
                if len(labels) > MAX_SAVED_SHOWN:
                    label += f", +{len(labels) - MAX_SAVED_SHOWN}"
                hints.append(
                    types.InlayHint(
                        position=lines.position(span.end_line, span.end_column),
                        label="saves " + label,
                        kind=types.InlayHintKind.Type,
                        padding_left=True,
                        tooltip="\n".join(labels),
                    )
                )
    return hints


__all__ = ["inlay_hints"]
