"""Semantic tokens → LSP: ide.tokens' formula tokens, delta-encoded in the client's position encoding.

The legend is ide.tokens.TOKEN_TYPES / TOKEN_MODIFIERS (standard LSP types; custom modifiers
tangent, primal, output, grad, unresolved); the README documents it.
"""

from __future__ import annotations

from typing import NamedTuple

from lsprotocol import types

from derivls.ide import tokens as ide_tokens
from derivls.ide.formulas import headers_of
from derivls.server.documents.pipeline import current
from derivls.server.documents.positions import LineIndex, to_client_column
from derivls.server.documents.state import DerivDocument
from derivls.server.features.raw import RawJSON
from derivls.server.runtime.app import DerivlsServer

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


EMPTY = RawJSON('{"data":[]}')


def as_json(data: list[int]) -> RawJSON:
    """`SemanticTokens` as JSON text: tens of thousands of ints through pygls's cattrs cost ~40 ms, a join ~2."""
    return RawJSON('{"data":[' + ",".join(map(str, data)) + "]}")


# One entry's tokens encoded once: (its first token's line relative to the chunk, start, and the rest of its
# 5-tuple), the other tokens already relative to the one before, and its last token's (line, start).
_Fragment = tuple[int, int, str, str, int, int]


def _fragment(tokens: list[tuple[int, int, int, str]], start_line: int, lines: LineIndex) -> _Fragment | None:
    placed = [ide_tokens.SemanticToken(start_line + ln, s, n, kind) for ln, s, n, kind in tokens]
    data = encode(placed, lines)
    if not data:
        return None
    first_line = data[0]  # relative to line 0: absolute
    first_start = data[1]
    line, start = first_line, first_start
    for i in range(5, len(data), 5):  # find the last token's absolute place
        line += data[i]
        start = start + data[i + 1] if data[i] == 0 else data[i + 1]
    head = ",".join(map(str, data[2:5]))
    rest = ",".join(map(str, data[5:]))
    return first_line - start_line, first_start, head, rest, line - start_line, start


def full_data(doc: DerivDocument) -> RawJSON:
    """`SemanticTokens` of the whole file (see `_joined_data`)."""
    return RawJSON('{"data":[' + _joined_data(doc) + "]}")


def _joined_data(doc: DerivDocument) -> str:
    """Every formula's tokens, comma-separated: each entry's part is encoded once per entry object (an unchanged entry keeps
    it across edits); only each entry's first token is made relative to the entry before it here."""
    assert doc.analysis is not None and doc.lines is not None
    headers = headers_of(doc.analysis)
    cache = doc.fragments.get("semanticTokens")
    old: dict[int, tuple[object, int, str, _Fragment | None]] = cache if isinstance(cache, dict) else {}
    fresh: dict[int, tuple[object, int, str, _Fragment | None]] = {}
    encoding = doc.lines.encoding
    parts: list[str] = []
    prev_line = prev_start = 0
    for placed in doc.analysis.entries:
        result = placed.result
        hit = old.get(id(result))
        if hit is None or hit[0] is not result or hit[1] != placed.start_line or hit[2] != encoding:
            fragment = _fragment(ide_tokens.entry_tokens(result, headers), placed.start_line, doc.lines)
            hit = (result, placed.start_line, encoding, fragment)
        fresh[id(result)] = hit
        fragment = hit[3]
        if fragment is None:
            continue
        first_line, first_start, head, rest, last_line, last_start = fragment
        line = placed.start_line + first_line
        delta_start = first_start - prev_start if line == prev_line else first_start
        parts.append(f"{line - prev_line},{delta_start},{head}")
        if rest:
            parts.append(rest)
        prev_line, prev_start = placed.start_line + last_line, last_start
    doc.fragments["semanticTokens"] = fresh
    return ",".join(parts)


def full(ls: DerivlsServer, params: types.SemanticTokensParams) -> RawJSON:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return EMPTY
    return _full_answer(_with_result_id(doc, _joined_data(doc)))


# -- semanticTokens/full/delta: the client keeps the last answer; send only what changed -----------------


class _Sent(NamedTuple):
    """The last tokens answer sent for a document: its resultId and its data (comma-separated ints)."""

    number: int
    data: str


def _with_result_id(doc: DerivDocument, data: str) -> _Sent:
    """`data` under a new resultId, kept for the next delta request."""
    previous = doc.fragments.get("semanticTokensResult")
    sent = _Sent(previous.number + 1 if isinstance(previous, _Sent) else 1, data)
    doc.fragments["semanticTokensResult"] = sent
    return sent


def _full_answer(sent: _Sent) -> RawJSON:
    return RawJSON(f'{{"resultId":"{sent.number}","data":[{sent.data}]}}')


def delta_edit(old: list[str], new: list[str]) -> tuple[int, int, list[str]] | None:
    """One edit (start, deleteCount, data) turning `old` into `new`, None if they are equal. The longest
    common prefix and suffix are found by bisection on slice comparisons (C speed on ~10^5 items)."""
    if old == new:
        return None
    low, high = 0, min(len(old), len(new))
    while low < high:  # prefix: the largest p with old[:p] == new[:p]
        middle = (low + high + 1) // 2
        if old[:middle] == new[:middle]:
            low = middle
        else:
            high = middle - 1
    prefix = low
    low, high = 0, min(len(old), len(new)) - prefix
    while low < high:  # suffix, not overlapping the prefix
        middle = (low + high + 1) // 2
        if old[len(old) - middle :] == new[len(new) - middle :]:
            low = middle
        else:
            high = middle - 1
    suffix = low
    return prefix, len(old) - prefix - suffix, new[prefix : len(new) - suffix]


def _items(data: str) -> list[str]:
    return data.split(",") if data else []


def delta(ls: DerivlsServer, params: types.SemanticTokensDeltaParams) -> RawJSON:
    """The edits from the answer `previous_result_id` names to the current tokens; the whole data (with a
    resultId, as the full request answers) when that answer is not the last one sent."""
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return EMPTY
    previous = doc.fragments.get("semanticTokensResult")
    sent = _with_result_id(doc, _joined_data(doc))
    if not isinstance(previous, _Sent) or params.previous_result_id != str(previous.number):
        return _full_answer(sent)
    edit = delta_edit(_items(previous.data), _items(sent.data)) if previous.data != sent.data else None
    edits = "" if edit is None else f'{{"start":{edit[0]},"deleteCount":{edit[1]},"data":[{",".join(edit[2])}]}}'
    return RawJSON(f'{{"resultId":"{sent.number}","edits":[{edits}]}}')


def in_range(ls: DerivlsServer, params: types.SemanticTokensRangeParams) -> RawJSON:
    doc = current(ls, params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return EMPTY
    first, start = doc.lines.column(params.range.start)
    last, end = doc.lines.column(params.range.end)
    found = [
        t
        for t in ide_tokens.semantic_tokens(doc.analysis, first, last)
        if (t.line, t.start + t.length) > (first, start) and (t.line, t.start) < (last, end)
    ]
    return as_json(encode(found, doc.lines))


__all__ = ["EMPTY", "LEGEND", "as_json", "delta", "delta_edit", "encode", "full", "full_data", "in_range"]
