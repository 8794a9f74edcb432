"""End-to-end LSP tests: a real `python -m derivls` over stdio, driven by pytest-lsp."""

from __future__ import annotations

import asyncio
import sys
import time
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types
from pygls.uris import from_fs_path
from pytest_lsp import ClientServerConfig, LanguageClient, client_capabilities
from pytest_lsp.client import make_test_lsp_client

from derivls.server.documents.positions import LineIndex, apply_change
from tests.lsp import doclinks

FIXTURES = Path(__file__).resolve().parent.parent / "fixtures" / "lsp"
CHECKOUT = FIXTURES / "checkout"
CHECKOUT_DERIVATIVES = CHECKOUT / "tools" / "autograd" / "derivatives.yaml"
CHECKOUT_NATIVE = CHECKOUT / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
PACKAGED = FIXTURES / "packaged" / "torchgen" / "packaged"
PACKAGED_DERIVATIVES = PACKAGED / "autograd" / "derivatives.yaml"
PACKAGED_NATIVE = PACKAGED / "ATen" / "native" / "native_functions.yaml"

SERVER = [sys.executable, "-m", "derivls"]


def make_client() -> LanguageClient:
    """pytest-lsp's client, plus what derivls asks of clients (registrations, generated-code pushes)."""
    client = make_test_lsp_client()
    client.registrations = []  # type: ignore[attr-defined]
    client.generated_changes = []  # type: ignore[attr-defined]
    client.content_refreshes = []  # type: ignore[attr-defined]
    client.view_refreshes = []  # type: ignore[attr-defined]  # (method, time.monotonic()) of */refresh requests

    @client.feature(types.CLIENT_REGISTER_CAPABILITY)
    def register(params: types.RegistrationParams) -> None:
        client.registrations.extend(params.registrations)  # type: ignore[attr-defined]

    @client.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT_REFRESH)
    def refresh(params: types.TextDocumentContentRefreshParams) -> None:
        client.content_refreshes.append(params.uri)  # type: ignore[attr-defined]

    def view_refresh(method: str) -> None:
        @client.feature(method)
        def refreshed(params: None) -> None:
            client.view_refreshes.append((method, time.monotonic()))  # type: ignore[attr-defined]

    for method in (
        types.WORKSPACE_INLAY_HINT_REFRESH,
        types.WORKSPACE_CODE_LENS_REFRESH,
        types.WORKSPACE_SEMANTIC_TOKENS_REFRESH,
    ):
        view_refresh(method)

    @client.feature("derivls/generatedCodeChanged")
    def generated_changed(params: Any) -> None:
        client.generated_changes.append(params)  # type: ignore[attr-defined]

    _check_code_links(client)
    return client


def _check_code_links(client: LanguageClient) -> None:
    features = client.protocol.fm.features
    published = features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS]  # pytest-lsp's: it keeps client.diagnostics

    def checked(params: types.PublishDiagnosticsParams) -> Any:
        doclinks.check(params)
        return published(params)

    features[types.TEXT_DOCUMENT_PUBLISH_DIAGNOSTICS] = checked


@pytest.fixture(autouse=True)
def _every_published_diagnostic_links_to_its_doc():
    doclinks.UNDOCUMENTED.clear()
    yield
    assert not doclinks.UNDOCUMENTED, "diagnostics without a doc link:\n" + "\n".join(doclinks.UNDOCUMENTED[:10])


CONFIG = ClientServerConfig(server_command=SERVER, client_factory=make_client)


def uri(path: Path | str) -> str:
    return from_fs_path(str(path)) or f"file://{path}"


def capabilities(spec: str = "visual-studio-code") -> types.ClientCapabilities:
    return client_capabilities(spec)


async def initialize(
    client: LanguageClient,
    root: Path | None = None,
    options: Any = None,
    spec: str = "visual-studio-code",
    caps: types.ClientCapabilities | None = None,
) -> types.InitializeResult:
    return await client.initialize_session(
        types.InitializeParams(
            capabilities=caps or capabilities(spec),
            root_uri=uri(root) if root is not None else None,
            workspace_folders=[types.WorkspaceFolder(uri=uri(root), name=root.name)] if root is not None else None,
            initialization_options=options,
        )
    )


class Documents:
    """Open documents and keep their text and version, for edits."""

    def __init__(self, client: LanguageClient) -> None:
        self.client = client
        self.texts: dict[str, str] = {}
        self.versions: dict[str, int] = {}

    def open(self, path: Path | str, text: str | None = None, language_id: str = "yaml") -> str:
        doc_uri = uri(path) if not str(path).startswith(("file:", "untitled:")) else str(path)
        if text is None:
            text = Path(path).read_text(encoding="utf-8")
        self.texts[doc_uri] = text
        self.versions[doc_uri] = 1
        self.client.diagnostics.pop(doc_uri, None)
        self.client.text_document_did_open(
            types.DidOpenTextDocumentParams(
                text_document=types.TextDocumentItem(uri=doc_uri, language_id=language_id, version=1, text=text)
            )
        )
        return doc_uri

    def close(self, doc_uri: str) -> None:
        self.client.text_document_did_close(
            types.DidCloseTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc_uri))
        )
        self.texts.pop(doc_uri, None)

    def edit(self, doc_uri: str, line: int, column: int, end_line: int, end_column: int, new_text: str) -> None:
        """An incremental change; positions in UTF-16 units, lines broken as LSP breaks them."""
        change = types.TextDocumentContentChangePartial(
            range=types.Range(
                start=types.Position(line=line, character=column),
                end=types.Position(line=end_line, character=end_column),
            ),
            text=new_text,
        )
        self.texts[doc_uri] = apply_change(self.texts[doc_uri], change)
        self.versions[doc_uri] += 1
        self.client.diagnostics.pop(doc_uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=doc_uri, version=self.versions[doc_uri]),
                content_changes=[change],
            )
        )

    def replace_all(self, doc_uri: str, text: str) -> None:
        self.texts[doc_uri] = text
        self.versions[doc_uri] += 1
        self.client.diagnostics.pop(doc_uri, None)
        self.client.text_document_did_change(
            types.DidChangeTextDocumentParams(
                text_document=types.VersionedTextDocumentIdentifier(uri=doc_uri, version=self.versions[doc_uri]),
                content_changes=[types.TextDocumentContentChangeWholeDocument(text=text)],
            )
        )


async def diagnostics(client: LanguageClient, doc_uri: str, timeout: float = 60.0) -> list[types.Diagnostic]:
    """The next diagnostics published for `doc_uri` (callers pop the old ones before the change)."""
    deadline = time.monotonic() + timeout
    while doc_uri not in client.diagnostics:
        if time.monotonic() > deadline:
            raise TimeoutError(f"no diagnostics for {doc_uri} within {timeout} s")
        await asyncio.sleep(0.005)
    return list(client.diagnostics[doc_uri])


async def status(client: LanguageClient) -> Any:
    return await client.protocol.send_request_async("derivls/status", {})


def lsp_lines(text: str) -> list[str]:
    """The lines of `text` as LSP counts them."""
    return LineIndex(text).lines


def position_of(text: str, needle: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    """The position of the `occurrence`-th `needle` in `text` (+ offset characters)."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    column = index - (text.rfind("\n", 0, index) + 1)
    return types.Position(line=line, character=column)


def hover_text(result: types.Hover | None) -> str:
    if result is None:
        return ""
    contents = result.contents
    if isinstance(contents, types.MarkupContent):
        return contents.value
    return str(contents)


async def open_real_file(client: LanguageClient, real_files: Any) -> types.InitializeResult:
    """Initialize on the real files' folder, open the real derivatives.yaml and wait for its diagnostics."""
    result = await initialize(client, real_files.packaged)
    client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    Documents(client).open(real_files.derivatives)
    await diagnostics(client, uri(real_files.derivatives), timeout=120)
    return result


@pytest.fixture(scope="module")
def real_text(real_files: Any) -> str:
    """The real derivatives.yaml's text."""
    return str(real_files.derivatives.read_text(encoding="utf-8"))


@pytest.fixture(scope="module")
def real_doc(real_files: Any) -> types.TextDocumentIdentifier:
    """The real derivatives.yaml, as LSP names it."""
    return types.TextDocumentIdentifier(uri=uri(real_files.derivatives))
