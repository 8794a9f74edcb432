"""Fuzz the server with hypothesis: random incremental edits of the real derivatives.yaml, every request at
random places. No request may fail, no handler may log an exception, and after each edit sequence the
published diagnostics are those of a from-scratch analysis of the same text.

One server serves every example (an event loop in a thread drives it), so examples are cheap.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine
from pathlib import Path
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from lsprotocol import types

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.server.documents.positions import to_client_column
from tests.lsp.conftest import (
    SERVER,
    Documents,
    diagnostics,
    initialize,
    lsp_lines,
    make_client,
    uri,
)

# str.splitlines (the core's line counting) also breaks at these; LSP does not
OTHER_LINE_BREAKS = "\x0b\x0c\x1c\x1d\x1e\x85\u2028\u2029"

SNIPPETS = [
    "",
    " ",
    "x",
    "\n",
    "- ",
    ":",
    "'",
    '"',
    "#",
    "\t",
    "[",
    "{",
    "&a ",
    "*a",
    "grads[0]",
    "grads[7]",
    ".sizes()",
    ".size(0)",
    ".strides()",
    "self.sym_sizes()",
    "result",
    "auto_linear",
    "auto_element_wise",
    "non_differentiable",
    "  self: grad\n",
    "  other: grad\n",
    "  dispatch:\n    Default:\n      self: grad\n",
    "  output_differentiability: [True, False]\n",
    "\n- name: abs(Tensor self) -> Tensor\n",
    "\n- name: nope(Tensor self) -> Tensor\n  self: grad\n",
    "é",
    "\U0001f600",
    "\r\n",
    "\x00",
]

edit = st.tuples(
    st.floats(0, 1),  # where, as a fraction of the text
    st.integers(0, 60),  # how many characters to replace
    st.one_of(st.sampled_from(SNIPPETS), st.text(max_size=6)),
)
request = st.tuples(
    st.sampled_from(
        ["hover", "completion", "definition", "inlay", "symbols", "actions", "lens", "references", "generated"]
    ),
    st.floats(0, 1),
)


class Driver:
    """A pytest-lsp client on an event loop in a background thread, for synchronous hypothesis tests."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.client = make_client()

    def run(self, coroutine: Coroutine[Any, Any, Any], timeout: float = 120) -> Any:
        return asyncio.run_coroutine_threadsafe(coroutine, self.loop).result(timeout)

    def close(self) -> None:
        async def stop() -> None:
            try:
                await asyncio.wait_for(self.client.shutdown_session(), timeout=10)
            finally:
                await self.client.stop()

        try:
            self.run(stop(), timeout=30)
        finally:
            self.loop.call_soon_threadsafe(self.loop.stop)
            self.thread.join(timeout=10)


@pytest.fixture(scope="module")
def server(real_files, tmp_path_factory):
    log = tmp_path_factory.mktemp("fuzz") / "server.log"
    driver = Driver()
    driver.log = log  # type: ignore[attr-defined]

    async def start() -> Documents:
        await driver.client.start_io(*SERVER, "--log-level", "ERROR", "--log-file", str(log))
        await initialize(driver.client, real_files.packaged)
        docs = Documents(driver.client)
        doc = docs.open(real_files.derivatives)
        await diagnostics(driver.client, doc, timeout=120)
        return docs

    driver.docs = driver.run(start())  # type: ignore[attr-defined]
    yield driver
    driver.close()


@pytest.fixture(scope="module")
def index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


def _position(text: str, where: float) -> types.Position:
    lines = lsp_lines(text)
    line = min(int(where * len(lines)), len(lines) - 1)
    column = int((where * len(lines) - line) * (len(lines[line]) + 1))
    return types.Position(line=line, character=to_client_column(lines[line], column))


async def _request(client, doc: str, kind: str, position: types.Position) -> None:
    identifier = types.TextDocumentIdentifier(uri=doc)
    window = types.Range(start=types.Position(line=max(position.line - 50, 0), character=0), end=position)
    if kind == "hover":
        await client.text_document_hover_async(types.HoverParams(text_document=identifier, position=position))
    elif kind == "completion":
        await client.text_document_completion_async(types.CompletionParams(text_document=identifier, position=position))
    elif kind == "definition":
        await client.text_document_definition_async(types.DefinitionParams(text_document=identifier, position=position))
    elif kind == "inlay":
        await client.text_document_inlay_hint_async(types.InlayHintParams(text_document=identifier, range=window))
    elif kind == "symbols":
        await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=identifier))
    elif kind == "actions":
        await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=identifier, range=window, context=types.CodeActionContext(diagnostics=[])
            )
        )
    elif kind == "lens":
        await client.text_document_code_lens_async(types.CodeLensParams(text_document=identifier))
    elif kind == "references":
        await client.text_document_references_async(
            types.ReferenceParams(
                text_document=identifier, position=position, context=types.ReferenceContext(include_declaration=True)
            )
        )
    elif kind == "generated":
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="derivls.showGeneratedCode", arguments=[doc, position.line])
        )


def _expected(index: NativeIndex, native: Path, text: str) -> list[tuple[int, str]]:
    analysis = DocumentAnalyzer(index, str(native)).analyse(text)
    return sorted((d.span.line, d.code) for d in analysis.diagnostics)


@settings(
    max_examples=int(os.environ.get("DERIVLS_FUZZ_EXAMPLES", "25")),
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@pytest.mark.slow  # hypothesis drives the real server: half a minute
@given(edits=st.lists(edit, min_size=1, max_size=6), requests=st.lists(request, max_size=6))
def test_fuzz_the_server(server, index, real_files, edits, requests):
    docs: Documents = server.docs
    client = server.client
    doc = uri(real_files.derivatives)
    original = real_files.derivatives.read_text(encoding="utf-8")

    async def example() -> list[types.Diagnostic]:
        for (where, length, insert), (kind, place) in zip(edits, requests + [("hover", 0.5)] * len(edits)):
            text = docs.texts[doc]
            at = _position(text, where)
            docs.edit(doc, at.line, at.character, at.line, at.character + length, insert)
            await _request(client, doc, kind, _position(docs.texts[doc], place))
        for kind, place in requests[len(edits) :]:
            await _request(client, doc, kind, _position(docs.texts[doc], place))
        # settle: the diagnostics of the newest version
        client.diagnostics.pop(doc, None)
        docs.edit(doc, 0, 0, 0, 0, "")
        return await diagnostics(client, doc)

    try:
        published = server.run(example())
        assert client.error is None
        final = docs.texts[doc]
        if not any(c in final for c in OTHER_LINE_BREAKS):
            assert sorted((d.range.start.line, str(d.code)) for d in published) == _expected(
                index, real_files.native, final
            )
    finally:
        server.run(_reset(docs, doc, original))
    log = server.log.read_text(encoding="utf-8") if server.log.exists() else ""
    assert "Traceback" not in log, log[-4000:]


async def _reset(docs: Documents, doc: str, original: str) -> None:
    docs.client.diagnostics.pop(doc, None)
    docs.replace_all(doc, original)
    await diagnostics(docs.client, doc)
