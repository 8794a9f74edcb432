"""The server on the real derivatives.yaml / native_functions.yaml / tags.yaml of torch 2.13."""

from __future__ import annotations

import re

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from derivls.codegen import generate_node
from derivls.ide.gradcheck import UNTRUSTED_TITLE
from derivls.project.analyse import analyse_path
from tests.lsp.conftest import (
    CONFIG,
    Documents,
    hover_text,
    open_real_file,
    position_of,
    uri,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest.fixture(scope="module")
def real(real_files):
    return real_files


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, real_files):
    await open_real_file(lsp_client, real_files)
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def text(real_text: str) -> str:
    return real_text


@pytest.fixture(scope="module")
def doc(real_doc: types.TextDocumentIdentifier) -> types.TextDocumentIdentifier:
    return real_doc


async def test_no_diagnostics_on_the_real_file(client: LanguageClient, doc):
    assert list(client.diagnostics[doc.uri]) == []


async def test_hover_add(client: LanguageClient, doc, text):
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=position_of(text, "- name: add.Tensor", offset=10))
    )
    value = hover_text(result)
    assert "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha=1)" in value
    assert "**Autograd node:** `AddBackward0`" in value
    assert "native_functions.yaml:536" in value


async def test_hover_symint_pattern(client: LanguageClient, doc, text):
    position = position_of(text, "- name: expand(", offset=0)
    line = text.splitlines()[position.line + 1]
    column = line.index("self.sym_sizes()") + 3
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=types.Position(line=position.line + 1, character=column))
    )
    assert "`self_sym_sizes: c10::SymIntArrayRef`" in hover_text(result)


async def test_inlay_hints_for_100_lines(client: LanguageClient, doc, text):
    start = position_of(text, "- name: add.Tensor").line
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=doc,
            range=types.Range(
                start=types.Position(line=start, character=0), end=types.Position(line=start + 100, character=0)
            ),
        )
    )
    assert all(start <= h.position.line <= start + 100 for h in hints)
    labels = [h.label for h in hints]
    assert labels[0] == "AddBackward0"
    assert sum(1 for label in labels if re.fullmatch(r"\w+Backward\w*\d+(, \w+)*", label)) >= 10


async def test_definition_to_native(client: LanguageClient, doc, text, real):
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=position_of(text, "- name: mul.Tensor", offset=10))
    )
    line = real.native.read_text().splitlines()[result[0].range.start.line]
    assert line == "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor"


async def test_definition_to_functions_manual_header(client: LanguageClient, doc, text, real):
    """A torch wheel ships FunctionsManual.h: a function of a formula goes there."""
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=doc, position=position_of(text, "maybe_multiply(grad", offset=3))
    )
    if not result:
        pytest.skip("this torch wheel has no torch/include/torch/csrc/autograd/FunctionsManual.h")
    assert result[0].uri.endswith("FunctionsManual.h")


async def test_completion_in_name(client: LanguageClient, doc, text):
    position = position_of(text, "- name: add.Tensor", offset=len("- name: ad"))
    result = await client.text_document_completion_async(types.CompletionParams(text_document=doc, position=position))
    labels = [i.label for i in result.items]
    assert labels and all("ad" in label.split("(")[0] for label in labels)
    assert result.is_incomplete  # more than fit: typing narrows them down
    # functions that have no entry yet come first
    assert "has an entry" not in (result.items[0].detail or "")
    position = position_of(text, "- name: add.Tensor", offset=len("- name: add.Te"))
    result = await client.text_document_completion_async(types.CompletionParams(text_document=doc, position=position))
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in [i.label for i in result.items]


async def test_symbols(client: LanguageClient, doc, real):
    symbols = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=doc))
    analysis, _ = analyse_path(real.derivatives, None, None)
    assert len(symbols) == len(analysis.entries)
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="AddBackward0"))
    assert found[0].name == "AddBackward0"
    found = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="add.Tensor"))
    assert found[0].name == "add.Tensor" and found[0].container_name == "AddBackward0"


async def test_code_lenses_and_generated_code(client: LanguageClient, doc, text, real):
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=doc))
    analysis, _ = analyse_path(real.derivatives, None, None)
    with_nodes = [e for e in analysis.entries if any(op for _, op in e.ops)]
    by_command: dict[str, int] = {}
    for lens in lenses:
        assert lens.command is not None
        by_command[lens.command.command] = by_command.get(lens.command.command, 0) + 1
    # each entry that makes a node: its generated C++, and (the workspace is not trusted: its C++ is never run)
    # a gradcheck lens that only says why it runs nothing (an empty command)
    assert by_command == {"derivls.showGeneratedCode": len(with_nodes), "": len(with_nodes)}
    assert {lens.command.title for lens in lenses if lens.command and not lens.command.command} == {UNTRUSTED_TITLE}
    line = position_of(text, "- name: add.Tensor").line
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="derivls.showGeneratedCode", arguments=[doc.uri, line])
    )
    entry = analysis.entry_at(line)
    info = dict(entry.infos())["Default"]
    node = generate_node(info)
    assert node.declaration.rstrip() in result["content"]
    assert node.definition.rstrip() in result["content"]


async def test_references_from_the_real_native_file(client: LanguageClient, text, real):
    docs = Documents(client)
    native = docs.open(real.native)
    native_text = real.native.read_text()
    result = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=native),
            position=position_of(native_text, "- func: add_.Tensor", offset=10),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert [(r.uri, r.range.start.line) for r in result][:1] == [
        (uri(real.derivatives), position_of(text, "- name: add.Tensor").line)
    ]
    docs.close(native)
