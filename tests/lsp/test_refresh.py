"""Views the client shows without asking again: refresh requests after indexing, and quiet cancels.

Inlay hints, code lenses and semantic tokens asked for while native_functions.yaml is being indexed are answered
empty; the server must then ask the client to ask again (issue 14). Cancelling a request that was
already answered is routine and must not fill the client's output with warnings.
"""

from __future__ import annotations

import asyncio
import os
import time
from pathlib import Path

import pytest
from lsprotocol import types

from tests.lsp.conftest import (
    CHECKOUT,
    CHECKOUT_DERIVATIVES,
    SERVER,
    Documents,
    capabilities,
    diagnostics,
    initialize,
    make_client,
    position_of,
    status,
)

REFRESHES = {
    types.WORKSPACE_INLAY_HINT_REFRESH,
    types.WORKSPACE_CODE_LENS_REFRESH,
    types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
}


async def started(log_file: Path, cache: Path | None = None):
    """A server; with `cache`, its DERIVLS_CACHE_DIR (an empty one: a cold start, no boot answers)."""
    client = make_client()
    env = dict(os.environ, DERIVLS_CACHE_DIR=str(cache)) if cache is not None else None
    await client.start_io(*SERVER, "--log-file", str(log_file), "--log-level", "INFO", env=env)
    return client


async def stopped(client) -> None:
    await client.shutdown_async(None)
    client.exit(None)
    await client.stop()


def whole_file(lines: int) -> types.Range:
    return types.Range(start=types.Position(line=0, character=0), end=types.Position(line=lines, character=0))


def refreshing_client() -> types.ClientCapabilities:
    """VS Code's capabilities as today's VS Code sends them (pytest-lsp's 1.65 record predates inlay hints)."""
    caps = capabilities()
    assert caps.workspace is not None
    caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.code_lens = types.CodeLensWorkspaceClientCapabilities(refresh_support=True)
    caps.workspace.semantic_tokens = types.SemanticTokensWorkspaceClientCapabilities(refresh_support=True)
    return caps


async def refreshes(client, methods: set[str], timeout: float = 120) -> dict[str, float]:
    deadline = time.monotonic() + timeout
    while True:
        seen = {method: at for method, at in client.view_refreshes}
        if methods <= set(seen) or time.monotonic() > deadline:
            return seen
        await asyncio.sleep(0.01)


async def test_opened_while_indexing_the_client_is_asked_to_refresh_hints_lenses_and_tokens(real_files, tmp_path):
    client = await started(tmp_path / "server.log", cache=tmp_path / "empty-cache")
    try:
        await initialize(client, real_files.packaged, caps=refreshing_client())
        text = real_files.derivatives.read_text(encoding="utf-8")
        doc = Documents(client).open(real_files.derivatives)
        identifier = types.TextDocumentIdentifier(uri=doc)
        lines = text.count("\n") + 1
        # asked at once, like an editor on open: native_functions.yaml (~3,000 functions) is still indexing
        early = await client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=identifier, range=whole_file(lines))
        )
        early_tokens = await client.text_document_semantic_tokens_full_async(
            types.SemanticTokensParams(text_document=identifier)
        )
        assert not early and early_tokens is not None and not early_tokens.data
        seen = await refreshes(client, REFRESHES)
        assert REFRESHES <= set(seen), f"refresh requests received: {sorted(seen)}"
        tokens = await client.text_document_semantic_tokens_full_async(
            types.SemanticTokensParams(text_document=identifier)
        )
        assert tokens is not None and len(tokens.data) > 5 * 1000  # every formula's names, once indexed
        assert list(client.diagnostics[doc]) == []  # diagnostics were published before the refresh
        start = position_of(text, "- name: add.Tensor").line
        hints = await client.text_document_inlay_hint_async(
            types.InlayHintParams(
                text_document=identifier,
                range=types.Range(
                    start=types.Position(line=start, character=0), end=types.Position(line=start + 20, character=0)
                ),
            )
        )
        assert "AddBackward0" in [h.label for h in hints]
        lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier))
        assert lenses and any("AddBackward0" in lens.command.title for lens in lenses if lens.command)
    finally:
        await stopped(client)


async def test_an_index_replaced_by_an_edited_native_buffer_asks_for_a_refresh(tmp_path):
    client = await started(tmp_path / "server.log")
    try:
        await initialize(client, CHECKOUT, caps=refreshing_client())
        docs = Documents(client)
        doc = docs.open(CHECKOUT_DERIVATIVES)
        await diagnostics(client, doc)
        await refreshes(client, REFRESHES, timeout=10)
        client.view_refreshes.clear()
        native = CHECKOUT / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
        native_text = native.read_text(encoding="utf-8")
        docs.open(native, native_text + "\n- func: derivls_extra(Tensor self) -> Tensor\n  variants: function\n")
        seen = await refreshes(client, REFRESHES, timeout=30)
        assert REFRESHES <= set(seen)
    finally:
        await stopped(client)


async def test_no_refresh_requests_to_a_client_that_cannot_refresh(tmp_path):
    client = await started(tmp_path / "server.log")
    try:
        caps = capabilities()
        assert caps.workspace is not None
        caps.workspace.inlay_hint = types.InlayHintWorkspaceClientCapabilities(refresh_support=False)
        caps.workspace.code_lens = None
        caps.workspace.semantic_tokens = types.SemanticTokensWorkspaceClientCapabilities(refresh_support=False)
        await initialize(client, CHECKOUT, caps=caps)
        doc = Documents(client).open(CHECKOUT_DERIVATIVES)
        await diagnostics(client, doc)
        await status(client)
        assert client.view_refreshes == []
    finally:
        await stopped(client)


@pytest.mark.parametrize("requests", [20])
async def test_cancelling_answered_requests_logs_no_warning(tmp_path, requests):
    log_file = tmp_path / "server.log"
    client = await started(log_file)
    try:
        await initialize(client, CHECKOUT)
        text = CHECKOUT_DERIVATIVES.read_text(encoding="utf-8")
        doc = Documents(client).open(CHECKOUT_DERIVATIVES)
        await diagnostics(client, doc)
        for i in range(requests):
            # what editors do as the cursor moves: ask, and cancel what is no longer wanted (here: answered)
            msg_id = f"hover-{i}"
            future = client.protocol.send_request(
                types.TEXT_DOCUMENT_HOVER,
                types.HoverParams(
                    text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(text, "add.Tensor")
                ),
                msg_id=msg_id,
            )
            await asyncio.wrap_future(future)
            client.protocol.notify(types.CANCEL_REQUEST, types.CancelParams(id=msg_id))
        await status(client)
    finally:
        await stopped(client)
    log = log_file.read_text(encoding="utf-8")
    assert "WARNING" not in log, log
    assert "Cancel notification" not in log
