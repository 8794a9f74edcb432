"""Semantic tokens → LSP: ide.tokens' formula tokens, delta-encoded in the client's position encoding.

The legend is ide.tokens.TOKEN_TYPES / TOKEN_MODIFIERS (standard LSP types; custom modifiers
tangent, primal, output, grad, unresolved); the README documents it.
"""

from __future__ import annotations

from lsprotocol import types

from derivls.ide import tokens as ide_tokens
from derivls.server.app import DerivlsServer
from derivls.server.pipeline import current
from derivls.server.positions import LineIndex, to_client_column

LEGEND = types.SemanticTokensLegend(
    token_types=list(ide_tokens.TOKEN_TYPES), token_modifiers=list(ide_tokens.TOKEN_MODIFIERS)
)
_TYPE = {name: i for i, name in enumerate(ide_tokens.TOKEN_TYPES)}
_BITS = {
    kind: (_TYPE[t], sum(1 << ide_tokens.TOKEN_MODIFIERS.index(m) for m in mods))
    for kind, (t, mods) in ide_tokens.LEGEND.items()
}


def encode(found: list[ide_tokens.SemanticToken], lines: LineIndex) -> list[int]:
    """LSP's relative encoding: (Δline, Δstart, length, type, modifiers) per token, in client units."""
    data: list[int] = []
    prev_line = prev_start = 0
    encoding = lines.encoding
    for token in found:
        text = lines.line(token.line)
        if text.isascii():
            start, end = token.start, token.start + token.length
        else:
            start = to_client_column(text, token.start, encoding)
            end = to_client_column(text, token.start + token.length, encoding)
        if end <= start:
            continue
        delta_line = token.line - prev_line
        delta_start = start - prev_start if delta_line == 0 else start
        token_type, modifiers = _BITS[token.kind]
        data += (delta_line, delta_start, end - start, token_type, modifiers)
        prev_line, prev_start = token.line, start
    return data


def full(ls: DerivlsServer, params: types.SemanticTokensParams) -> types.SemanticTokens:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return types.SemanticTokens(data=[])
    return types.SemanticTokens(data=encode(ide_tokens.semantic_tokens(doc.analysis), doc.lines))


def in_range(ls: DerivlsServer, params: types.SemanticTokensRangeParams) -> types.SemanticTokens:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return types.SemanticTokens(data=[])
    first, start = doc.lines.column(params.range.start)
    last, end = doc.lines.column(params.range.end)
    found = [
        t
        for t in ide_tokens.semantic_tokens(doc.analysis, first, last)
        if (t.line, t.start + t.length) > (first, start) and (t.line, t.start) < (last, end)
    ]
    return types.SemanticTokens(data=encode(found, doc.lines))


__all__ = ["LEGEND", "encode", "full", "in_range"]
