"""A tiny LSP server standing in for derivls in the editor-plugin tests.

It checks the plugin's side of the contract, independently of the real server: which documents the
client sends, the settings it passes (initializationOptions and workspace/configuration section
`derivls`), and the `derivls.showGeneratedCode` round trip. Everything it receives is written as
JSON to the file named by argv[1].

Usage: python stub_server.py LOG.json
"""

from __future__ import annotations

import json
import re
import sys
from typing import Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer

LOG_PATH = sys.argv[1]
log: dict[str, Any] = {"opened": [], "commands": [], "saved": []}
server = LanguageServer("derivls-stub", "0.0.0")


def flush() -> None:
    with open(LOG_PATH, "w", encoding="utf-8") as f:
        json.dump(log, f)


@server.feature(types.INITIALIZE)
def initialize(params: types.InitializeParams) -> None:
    log["initializationOptions"] = params.initialization_options
    log["rootUri"] = params.root_uri
    flush()


@server.feature(types.INITIALIZED)
async def initialized(ls: LanguageServer, _params: types.InitializedParams) -> None:
    config = await ls.workspace_configuration_async(
        types.ConfigurationParams(items=[types.ConfigurationItem(section="derivls")])
    )
    log["configuration"] = config[0] if config else None
    flush()


def _entries(text: str) -> list[tuple[int, str]]:
    return [(i, m.group(1)) for i, line in enumerate(text.splitlines()) if (m := re.match(r"^- name:\s*(\w+)", line))]


@server.feature(types.TEXT_DOCUMENT_DID_OPEN)
def did_open(ls: LanguageServer, params: types.DidOpenTextDocumentParams) -> None:
    doc = params.text_document
    log["opened"].append({"uri": doc.uri, "languageId": doc.language_id})
    flush()
    diagnostics = [
        types.Diagnostic(
            range=types.Range(
                start=types.Position(line=i, character=0), end=types.Position(line=i, character=len(line))
            ),
            message=".sizes() is not supported in derivative formulas",
            source="derivls",
            severity=types.DiagnosticSeverity.Error,
        )
        for i, line in enumerate(doc.text.splitlines())
        if ".sizes()" in line
    ]
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=diagnostics))


@server.feature(types.TEXT_DOCUMENT_DID_SAVE)
def did_save(ls: LanguageServer, params: types.DidSaveTextDocumentParams) -> None:
    log["saved"].append(params.text_document.uri)
    flush()


def _backward(name: str) -> str:
    return "".join(part.capitalize() for part in name.split("_")) + "Backward0"


@server.feature(types.TEXT_DOCUMENT_HOVER)
def hover(ls: LanguageServer, params: types.HoverParams) -> types.Hover | None:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    for line, name in _entries(doc.source):
        if line == params.position.line:
            return types.Hover(
                contents=types.MarkupContent(kind=types.MarkupKind.Markdown, value=f"`{_backward(name)}`")
            )
    return None


@server.feature(types.TEXT_DOCUMENT_INLAY_HINT)
def inlay_hints(ls: LanguageServer, params: types.InlayHintParams) -> list[types.InlayHint]:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    return [
        types.InlayHint(
            position=types.Position(line=line, character=len(doc.lines[line].rstrip("\r\n"))),
            label=f" {_backward(name)}",
        )
        for line, name in _entries(doc.source)
        if params.range.start.line <= line <= params.range.end.line
    ]


@server.feature(types.TEXT_DOCUMENT_CODE_LENS)
def code_lens(ls: LanguageServer, params: types.CodeLensParams) -> list[types.CodeLens]:
    doc = ls.workspace.get_text_document(params.text_document.uri)
    return [
        types.CodeLens(
            range=types.Range(start=types.Position(line=line, character=0), end=types.Position(line=line, character=1)),
            command=types.Command(
                title="generated code", command="derivls.showGeneratedCode", arguments=[doc.uri, line]
            ),
        )
        for line, _name in _entries(doc.source)
    ]


shown: dict[str, tuple[str, int]] = {}  # generated uri -> (document uri, entry line)


def _generated(uri: str, entry_line: int) -> tuple[str, str]:
    doc = server.workspace.get_text_document(uri)
    name = dict(_entries(doc.source)).get(entry_line, "Unknown")
    op = _backward(name)
    formula = doc.lines[entry_line + 1].strip() if entry_line + 1 < len(doc.lines) else ""
    # A query like the real server's, so clients must not assume a bare path.
    return f"derivls-generated:/{op}.cpp?source=stub", f"struct {op} : public TraceableFunction {{\n}};\n// {formula}\n"


@server.command("derivls.showGeneratedCode")
def show_generated_code(ls: LanguageServer, uri: str, entry_line: int) -> dict[str, str]:
    log["commands"].append({"uri": uri, "entryLine": entry_line})
    flush()
    target, content = _generated(uri, entry_line)
    shown[target] = (uri, entry_line)
    return {"uri": target, "content": content}


@server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
def did_change(ls: LanguageServer, params: types.DidChangeTextDocumentParams) -> None:
    for target, (uri, entry_line) in shown.items():
        if uri == params.text_document.uri:
            ls.protocol.notify(
                "derivls/generatedCodeChanged", {"uri": target, "content": _generated(uri, entry_line)[1]}
            )


if __name__ == "__main__":
    flush()
    server.start_io()
