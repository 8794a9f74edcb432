"""Serving: discovery, settings, native_functions.yaml buffers and watched files, bursts, robustness, transports."""

from __future__ import annotations

import asyncio
import json
import shutil
import socket
import subprocess
import sys
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    CHECKOUT,
    CHECKOUT_DERIVATIVES,
    CHECKOUT_NATIVE,
    CONFIG,
    PACKAGED_DERIVATIVES,
    PACKAGED_NATIVE,
    SERVER,
    Documents,
    capabilities,
    diagnostics,
    hover_text,
    initialize,
    make_client,
    position_of,
    status,
    uri,
)

TEXT = CHECKOUT_DERIVATIVES.read_text(encoding="utf-8")


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def codes(found: list[types.Diagnostic]) -> list[str]:
    return [str(d.code) for d in found]


async def hover_at(client: LanguageClient, doc: str, position: types.Position) -> str:
    return hover_text(
        await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position)
        )
    )


# -- discovery ----------------------------------------------------------------------------------------


async def test_checkout_layout(client: LanguageClient):
    await initialize(client, CHECKOUT)
    doc = Documents(client).open(CHECKOUT_DERIVATIVES)
    assert await diagnostics(client, doc) == []
    info = await status(client)
    assert info.documents[0].native == str(CHECKOUT_NATIVE)


async def test_packaged_layout(client: LanguageClient):
    await initialize(client, PACKAGED_DERIVATIVES.parent)
    doc = Documents(client).open(PACKAGED_DERIVATIVES)
    assert await diagnostics(client, doc) == []
    text = PACKAGED_DERIVATIVES.read_text()
    result = await client.text_document_definition_async(
        types.DefinitionParams(
            text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(text, "add.Tensor", offset=1)
        )
    )
    assert result[0].uri == uri(PACKAGED_NATIVE)


async def test_no_native_functions_one_warning(client: LanguageClient, tmp_path: Path):
    await initialize(client, tmp_path)
    path = tmp_path / "derivatives.yaml"
    path.write_text(TEXT)
    docs = Documents(client)
    doc = docs.open(path)
    found = await diagnostics(client, doc)
    assert codes(found) == ["native-not-found"]
    warning = found[0]
    assert warning.severity == types.DiagnosticSeverity.Warning
    assert warning.range.start == types.Position(line=0, character=0)
    assert "nativeFunctions" in warning.message
    assert str(tmp_path / "aten" / "src" / "ATen" / "native" / "native_functions.yaml") in warning.message
    # still exactly one after an edit
    docs.edit(doc, 3, 0, 3, 0, "  ")
    found = await diagnostics(client, doc)
    assert codes(found).count("native-not-found") == 1


# -- settings -----------------------------------------------------------------------------------------------


@pytest.mark.parametrize("nested", [False, True])
async def test_initialization_options(client: LanguageClient, tmp_path: Path, nested: bool):
    settings = {"nativeFunctions": str(CHECKOUT_NATIVE), "profile": "torchgen"}
    await initialize(client, tmp_path, options={"derivls": settings} if nested else settings)
    path = tmp_path / "derivatives.yaml"
    path.write_text(TEXT)
    doc = Documents(client).open(path)
    assert await diagnostics(client, doc) == []
    assert "AddBackward0" in await hover_at(client, doc, position_of(TEXT, "add.Tensor", offset=1))
    info = await status(client)
    assert info.settings.profile == "torchgen"


async def test_relative_setting_resolves_against_the_root(client: LanguageClient, tmp_path: Path):
    shutil.copytree(CHECKOUT / "aten", tmp_path / "vendor" / "aten")
    shutil.copytree(CHECKOUT / "torch", tmp_path / "vendor" / "torch")  # FunctionsManual.h: a complete checkout
    await initialize(client, tmp_path, options={"nativeFunctions": "vendor/aten/src/ATen/native/native_functions.yaml"})
    path = tmp_path / "derivatives.yaml"
    path.write_text(TEXT)
    doc = Documents(client).open(path)
    assert await diagnostics(client, doc) == []


async def test_workspace_configuration(client: LanguageClient, tmp_path: Path):
    client.set_configuration({"nativeFunctions": str(CHECKOUT_NATIVE)}, section="derivls")
    await initialize(client, tmp_path)
    path = tmp_path / "derivatives.yaml"
    path.write_text(TEXT)
    docs = Documents(client)
    doc = docs.open(path)
    assert await diagnostics(client, doc) == []
    # the setting changes: pulled again on didChangeConfiguration
    client.set_configuration({"nativeFunctions": str(tmp_path / "missing.yaml")}, section="derivls")
    client.diagnostics.pop(doc, None)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    found = await diagnostics(client, doc)
    assert codes(found) == ["native-unreadable"]
    assert found[0].range.start.line == 0 and "missing.yaml" in found[0].message


# -- native_functions.yaml buffers and files -------------------------------------------------------------------


async def test_unsaved_native_buffer_rechecks(client: LanguageClient):
    await initialize(client, CHECKOUT)
    docs = Documents(client)
    doc = docs.open(CHECKOUT_DERIVATIVES)
    assert await diagnostics(client, doc) == []
    native_text = CHECKOUT_NATIVE.read_text()
    native = docs.open(CHECKOUT_NATIVE)
    await asyncio.sleep(0.2)
    # rename mul.Tensor's argument in the unsaved buffer: the mul.Tensor entry no longer resolves
    where = position_of(native_text, "Tensor other) -> Tensor\n  variants: function, method\n\n- func: max", offset=7)
    client.diagnostics.pop(doc, None)
    docs.edit(native, where.line, where.character, where.line, where.character + 5, "another")
    found = await diagnostics(client, doc, timeout=30)
    assert codes(found) == ["schema-not-found"]
    assert found[0].range.start.line == position_of(TEXT, "mul.Tensor").line
    # a buffer that does not parse: derivatives keep the last good index, the buffer shows the problem
    client.diagnostics.pop(native, None)
    docs.edit(native, 2, 0, 2, 0, "- func: [unclosed\n")
    native_problems = await diagnostics(client, native, timeout=30)
    # at once the entry's own YAML error (per keystroke), then the whole file's when it is re-indexed
    assert codes(native_problems) in (["native-yaml"], ["native-index"])
    assert native_problems[0].range.start.line == 2
    # fixing the buffer brings the real file's functions back
    client.diagnostics.pop(doc, None)
    docs.replace_all(native, native_text)
    found = await diagnostics(client, doc, timeout=30)
    assert found == []
    docs.close(native)


async def test_watched_files(client: LanguageClient, tmp_path: Path):
    shutil.copytree(CHECKOUT, tmp_path / "pytorch")
    root = tmp_path / "pytorch"
    await initialize(client, root)
    docs = Documents(client)
    path = root / "tools" / "autograd" / "derivatives.yaml"
    doc = docs.open(path)
    assert await diagnostics(client, doc) == []
    native = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.write_text(
        native.read_text().replace("- func: sin(Tensor self) -> Tensor\n", "- func: sinus(Tensor self) -> Tensor\n")
    )
    client.diagnostics.pop(doc, None)
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(changes=[types.FileEvent(uri=uri(native), type=types.FileChangeType.Changed)])
    )
    found = await diagnostics(client, doc, timeout=30)
    assert codes(found) == ["schema-not-found"]
    assert found[0].range.start.line == position_of(TEXT, "- name: sin").line


async def test_native_functions_appears(client: LanguageClient, tmp_path: Path):
    await initialize(client, tmp_path)
    (tmp_path / "tools" / "autograd").mkdir(parents=True)
    path = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    path.write_text(TEXT)
    docs = Documents(client)
    doc = docs.open(path)
    assert codes(await diagnostics(client, doc)) == ["native-not-found"]
    shutil.copytree(CHECKOUT / "aten", tmp_path / "aten")
    shutil.copytree(CHECKOUT / "torch", tmp_path / "torch")  # FunctionsManual.h: a complete checkout
    client.diagnostics.pop(doc, None)
    created = tmp_path / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    client.workspace_did_change_watched_files(
        types.DidChangeWatchedFilesParams(
            changes=[types.FileEvent(uri=uri(created), type=types.FileChangeType.Created)]
        )
    )
    assert await diagnostics(client, doc, timeout=30) == []


# -- incremental sync and bursts ------------------------------------------------------------------------------


async def test_incremental_edits(client: LanguageClient):
    await initialize(client, CHECKOUT)
    docs = Documents(client)
    doc = docs.open(CHECKOUT_DERIVATIVES)
    assert await diagnostics(client, doc) == []
    line = position_of(TEXT, "  self: grad * self.sgn()").line
    docs.edit(doc, line, 2, line, 6, "selff")
    found = await diagnostics(client, doc)
    assert codes(found) == ["unknown-name"]
    assert (found[0].range.start.line, found[0].range.start.character, found[0].range.end.character) == (line, 2, 7)
    docs.edit(doc, line, 2, line, 7, "self")
    assert await diagnostics(client, doc) == []


async def test_burst_of_edits_analyses_the_newest_text(client: LanguageClient):
    await initialize(client, CHECKOUT)
    docs = Documents(client)
    doc = docs.open(CHECKOUT_DERIVATIVES)
    assert await diagnostics(client, doc) == []
    before = (await status(client)).analyses
    line = position_of(TEXT, "- name: sin").line
    # type " xyz" one character at a time after "sin", then delete it again: 40 versions, the last is clean
    typed = " xyz" * 5
    for i, ch in enumerate(typed):
        docs.edit(doc, line, 11 + i, line, 11 + i, ch)
    for i in range(len(typed)):
        end = 11 + len(typed) - i
        docs.edit(doc, line, end - 1, line, end, "")
    deadline = asyncio.get_running_loop().time() + 30
    while True:
        info = await status(client)
        if info.documents[0].version == docs.versions[doc] or asyncio.get_running_loop().time() > deadline:
            break
        await asyncio.sleep(0.01)
    # the newest version is analysed and (published before the status answer) clean
    assert info.documents[0].version == docs.versions[doc]
    assert list(client.diagnostics[doc]) == []
    assert docs.texts[doc] == TEXT
    assert info.analyses - before < 2 * len(typed)


# -- robustness ----------------------------------------------------------------------------------------------------


async def test_requests_on_unknown_documents_and_positions(client: LanguageClient):
    await initialize(client, CHECKOUT)
    docs = Documents(client)
    doc = docs.open(CHECKOUT_DERIVATIVES)
    await diagnostics(client, doc)
    unknown = types.TextDocumentIdentifier(uri="file:///nowhere/derivatives.yaml")
    far = types.Position(line=99_999, character=99_999)
    for identifier in (unknown, types.TextDocumentIdentifier(uri=doc)):
        assert await client.text_document_hover_async(types.HoverParams(text_document=identifier, position=far)) is None
        assert not await client.text_document_definition_async(
            types.DefinitionParams(text_document=identifier, position=far)
        )
        await client.text_document_completion_async(types.CompletionParams(text_document=identifier, position=far))
        await client.text_document_inlay_hint_async(
            types.InlayHintParams(text_document=identifier, range=types.Range(start=far, end=far))
        )
        await client.text_document_code_action_async(
            types.CodeActionParams(
                text_document=identifier,
                range=types.Range(start=far, end=far),
                context=types.CodeActionContext(diagnostics=[]),
            )
        )
    for arguments in ([], [None], ["file:///nowhere/derivatives.yaml", 3], [{"uri": doc, "line": "x"}], [doc, 10_000]):
        await client.workspace_execute_command_async(
            types.ExecuteCommandParams(command="derivls.showGeneratedCode", arguments=arguments)
        )
    assert client.error is None


async def test_odd_notifications_show_no_errors(client: LanguageClient):
    await initialize(client, CHECKOUT)
    unknown = "file:///nowhere/derivatives.yaml"
    client.text_document_did_close(
        types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=unknown))
    )
    client.text_document_did_change(
        types.DidChangeTextDocumentParams(
            text_document=types.VersionedTextDocumentIdentifier(uri=unknown, version=3),
            content_changes=[types.TextDocumentContentChangeWholeDocument(text="- name: x")],
        )
    )
    docs = Documents(client)
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "odd" / "derivatives.yaml", "\x00\ufeff- name: [\n\t:")
    found = await diagnostics(client, doc)
    assert codes(found) == ["yaml-syntax"]
    await status(client)
    assert not [m for m in client.messages if m.type == types.MessageType.Error]
    assert client.error is None


async def test_plaintext_hover(client: LanguageClient):
    caps = capabilities()
    caps.text_document.hover.content_format = [types.MarkupKind.PlainText]
    await initialize(client, CHECKOUT, caps=caps)
    doc = Documents(client).open(CHECKOUT_DERIVATIVES)
    await diagnostics(client, doc)
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(TEXT, "add.Tensor"))
    )
    assert result.contents.kind == types.MarkupKind.PlainText
    assert "```" not in result.contents.value and "AddBackward0" in result.contents.value


async def test_utf16_columns(client: LanguageClient):
    await initialize(client, CHECKOUT)
    docs = Documents(client)
    text = "- name: abs(Tensor self) -> Tensor\n  self: /* \U0001f600 é */ grad * self.sizes()[0]\n"
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "utf16" / "derivatives.yaml", text)
    found = await diagnostics(client, doc)
    assert codes(found) == ["sizes-not-supported"]
    code_points = text.splitlines()[1].index(".sizes()")
    assert found[0].range.start.character == code_points + 1  # the emoji is two UTF-16 units


# -- the process ---------------------------------------------------------------------------------------------------


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def test_stdout_carries_only_json_rpc():
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "processId": None, "rootUri": None},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {
                "textDocument": {"uri": uri(CHECKOUT_DERIVATIVES), "languageId": "yaml", "version": 1, "text": TEXT}
            },
        },
        {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    proc = subprocess.run(
        SERVER, input=b"".join(_frame(m) for m in messages), capture_output=True, timeout=60, check=False
    )
    out = proc.stdout
    frames = []
    while out:
        header, _, rest = out.partition(b"\r\n\r\n")
        fields = dict(line.split(b": ", 1) for line in header.split(b"\r\n"))
        assert set(fields) <= {b"Content-Length", b"Content-Type"}, out[:200]
        length = int(fields[b"Content-Length"])
        frames.append(json.loads(rest[:length]))
        out = rest[length:]
    assert frames[0]["id"] == 1 and "capabilities" in frames[0]["result"]
    assert frames[0]["result"]["serverInfo"]["name"] == "derivls"


def test_version_flag():
    proc = subprocess.run([*SERVER, "--version"], capture_output=True, text=True, timeout=30, check=False)
    assert proc.returncode == 0 and proc.stdout.startswith("derivls ")


async def tcp_server() -> tuple[int, asyncio.subprocess.Process]:
    """`derivls --tcp` on a free port of localhost: (port, process)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    proc = await asyncio.create_subprocess_exec(
        sys.executable, "-m", "derivls", "--tcp", "--port", str(port), stderr=asyncio.subprocess.PIPE
    )
    return port, proc


async def test_tcp_transport():
    port, proc = await tcp_server()
    try:
        client = make_client()
        for _ in range(100):
            try:
                await client.start_tcp("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)
        await initialize(client, CHECKOUT)
        doc = Documents(client).open(CHECKOUT_DERIVATIVES)
        assert await diagnostics(client, doc) == []
        await client.shutdown_async(None)
        client.exit(None)
        await client.stop()
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()


async def test_over_tcp_bad_framing_gets_an_error_for_its_id_and_the_next_request_is_answered():
    port, proc = await tcp_server()
    try:
        for _ in range(100):
            try:
                reader, writer = await asyncio.open_connection("127.0.0.1", port)
                break
            except OSError:
                await asyncio.sleep(0.1)

        def framed(message: dict) -> bytes:
            body = json.dumps(message).encode()
            return b"Content-Length: %d\r\n\r\n" % len(body) + body

        bad = json.dumps({"jsonrpc": "2.0", "id": 7, "method": "initialize", "params": {}}).encode()
        writer.write(b"Content-Length: abc\r\n\r\n" + bad)  # an unreadable length: a parse error for id 7
        init = {"processId": None, "rootUri": None, "capabilities": {}}
        writer.write(framed({"jsonrpc": "2.0", "id": 8, "method": "initialize", "params": init}))
        await writer.drain()
        answers = {}
        while 8 not in answers:
            header = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 30)
            length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
            answer = json.loads(await reader.readexactly(length))
            answers[answer.get("id")] = answer
        assert answers[7]["error"]["code"] == -32700
        assert "capabilities" in answers[8]["result"]
        writer.write(framed({"jsonrpc": "2.0", "id": 9, "method": "shutdown"}))
        writer.write(framed({"jsonrpc": "2.0", "method": "exit"}))
        await writer.drain()
        assert await asyncio.wait_for(proc.wait(), 30) == 0
        writer.close()
    finally:
        if proc.returncode is None:
            proc.terminate()
        await proc.wait()
