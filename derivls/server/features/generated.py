""" "Show generated code" → LSP: code lenses, the `derivls.showGeneratedCode` command and the
`workspace/textDocumentContent` provider for `derivls-generated:` URIs (LSP 3.18).

The command answers `{"uri": "derivls-generated:/add.Tensor.cpp?source=…", "content": "…"}`; when
the entry changes, pipeline.push_generated sends the new content.
"""

from __future__ import annotations

from typing import Any

from lsprotocol import types

from derivls.base.limits import MAX_RESPONSE_ITEMS
from derivls.ide import generated as ide
from derivls.server.documents import gradcheck_runs
from derivls.server.documents.pipeline import current
from derivls.server.features.raw import FragmentCache, RawJSON
from derivls.server.runtime.app import DerivlsServer

SHOW_GENERATED_CODE = "derivls.showGeneratedCode"


def code_lenses(ls: DerivlsServer, params: types.CodeLensParams) -> RawJSON | list[types.CodeLens]:
    uri = params.text_document.uri
    doc = current(ls, uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return []
    lines = doc.lines

    def lens(placed: Any) -> list[types.CodeLens]:
        found = ide.entry_lens(placed)
        if found is None:
            return []
        command = types.Command(title=found.title, command=SHOW_GENERATED_CODE, arguments=[uri, found.line])
        lenses = [types.CodeLens(range=lines.line_range(found.line), command=command)]
        return lenses + gradcheck_runs.lenses(ls, uri, lines, placed)  # "Run gradcheck"

    cache = doc.fragments.setdefault("lenses", FragmentCache())
    assert isinstance(cache, FragmentCache)
    # limits: a bounded answer for a huge file (each entry gives up to two lenses: generated code, gradcheck)
    entries = doc.analysis.entries[: MAX_RESPONSE_ITEMS // 2]
    # (the gradcheck lens also depends on the trust and on the verdicts recorded: part of the cache's key)
    return cache.join(entries, (uri, lines.encoding, *gradcheck_runs.lens_context(ls, uri)), lens)


def show_generated_code(ls: DerivlsServer, args: tuple[Any, ...]) -> dict[str, str] | None:
    uri, line = _arguments(args)
    if uri is None:
        return None
    doc = current(ls, uri)
    if doc is None or doc.analysis is None:
        return None
    view = ide.view_at(doc.analysis, uri, line)
    if view is None:
        return None
    doc.generated_shown.add(view.uri)
    doc.generated_sent[view.uri] = view.content
    return {"uri": view.uri, "content": view.content}


def _arguments(args: tuple[Any, ...]) -> tuple[str | None, int]:
    """(uri, line) from `[uri, line]`, `[[uri, line]]` or `[{"uri"|"textDocument", "line"|"position"}]`."""
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if len(args) == 1 and isinstance(args[0], dict):
        d = args[0]
        uri = d.get("uri") or (d.get("textDocument") or {}).get("uri")
        line = d.get("line")
        if line is None and isinstance(d.get("position"), dict):
            line = d["position"].get("line")
        try:
            return uri, int(line or 0)
        except (TypeError, ValueError):
            return uri, 0
    uri = args[0] if args and isinstance(args[0], str) else None
    line = 0
    if len(args) > 1:
        value = args[1]
        if isinstance(value, dict):
            value = value.get("line", 0)
        try:
            line = int(value)
        except (TypeError, ValueError):
            line = 0
    return uri, line


def text_document_content(
    ls: DerivlsServer, params: types.TextDocumentContentParams
) -> types.TextDocumentContentResult | None:
    parsed = ide.parse_generated_uri(params.uri)
    if parsed is None:
        return None
    source, name = parsed
    doc = current(ls, source)
    content = ide.content_for(doc.analysis, name) if doc is not None and doc.analysis is not None else None
    if content is None:
        content = "// derivls: this entry is no longer in the document (or the document is closed).\n"
    if doc is not None:
        doc.generated_shown.add(params.uri)
        doc.generated_sent[params.uri] = content
    return types.TextDocumentContentResult(text=content)


__all__ = ["SHOW_GENERATED_CODE", "code_lenses", "show_generated_code", "text_document_content"]
