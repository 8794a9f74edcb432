"""Every feature, end to end over stdio, on the small pytorch-checkout fixture."""

from __future__ import annotations

import asyncio

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    CHECKOUT,
    CHECKOUT_DERIVATIVES,
    CHECKOUT_NATIVE,
    CONFIG,
    Documents,
    diagnostics,
    hover_text,
    initialize,
    position_of,
    status,
    uri,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")

TEXT = CHECKOUT_DERIVATIVES.read_text(encoding="utf-8")
DOC = uri(CHECKOUT_DERIVATIVES)
ID = types.TextDocumentIdentifier(uri=DOC)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient):
    await initialize(lsp_client, CHECKOUT)
    docs = Documents(lsp_client)
    docs.open(CHECKOUT_DERIVATIVES)
    await diagnostics(lsp_client, DOC)
    yield
    await lsp_client.shutdown_session()


def at(needle: str, occurrence: int = 0, offset: int = 0) -> types.Position:
    return position_of(TEXT, needle, occurrence, offset)


async def hover(client: LanguageClient, position: types.Position, doc: str = DOC) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position)
    )
    return hover_text(result)


# -- serving ----------------------------------------------------------------------------------------


async def test_capabilities_and_clean_diagnostics(client: LanguageClient):
    assert client.diagnostics[DOC] == [] or len(client.diagnostics[DOC]) == 0
    info = await status(client)
    assert info.documents[0].entries == 7


async def test_progress_while_indexing(client: LanguageClient):
    reports = [r for token, rs in client.progress_reports.items() if str(token).startswith("derivls-index") for r in rs]
    assert isinstance(reports[0], types.WorkDoneProgressBegin)
    assert "native_functions.yaml" in reports[0].title
    assert isinstance(reports[-1], types.WorkDoneProgressEnd)
    assert "12 functions" in reports[-1].message


async def test_registers_file_watchers(client: LanguageClient):
    methods = [r.method for r in client.registrations]  # type: ignore[attr-defined]
    assert types.WORKSPACE_DID_CHANGE_WATCHED_FILES in methods


# -- hover --------------------------------------------------------------------------------------------


async def test_hover_name(client: LanguageClient):
    text = await hover(client, at("add.Tensor", offset=3))
    assert "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor" in text
    assert "at::Tensor add(const at::Tensor & self, const at::Tensor & other, const at::Scalar & alpha=1)" in text
    assert "**Variants:** function, method" in text
    assert "inplace: `add_.Tensor(Tensor(a!) self" in text
    assert "out: `add.out(" in text
    assert "`AddBackward0`" in text
    assert "`self_scalar_type: at::ScalarType`" in text and "`alpha: at::Scalar`" in text
    assert "**Differentiable:** `self`, `other`" in text
    assert "native_functions.yaml:11" in text and "#L11" in text


async def test_hover_name_with_dispatch(client: LanguageClient):
    text = await hover(client, at("- name: sum", offset=9))
    assert "`SumBackward0` (Default)" in text
    assert "`SumBackwardAutogradNestedTensor0` (AutogradNestedTensor)" in text


async def test_hover_dispatch_key(client: LanguageClient):
    text = await hover(client, at("AutogradNestedTensor:", offset=2))
    assert "SumBackwardAutogradNestedTensor0" in text


async def test_hover_key(client: LanguageClient):
    text = await hover(client, at("  other: handle_r_to_c", offset=3))
    assert "`other`: `Tensor`" in text and "const at::Tensor &" in text
    assert "differentiable" in text
    assert "`other_scalar_type: at::ScalarType`" in text


async def test_hover_output_key(client: LanguageClient):
    text = await hover(client, at("  values: gather", offset=3))
    assert "output `values`: `Tensor`" in text
    assert "forward-mode" in text


async def test_hover_grad(client: LanguageClient):
    text = await hover(client, at("grad * self.sgn()", offset=1))
    assert "`grad`" in text and "`result`: `Tensor`" in text


async def test_hover_saved_pattern(client: LanguageClient):
    text = await hover(client, at("self.scalar_type(), grad)", offset=7))
    assert "`self.scalar_type()`" in text and "`self_scalar_type: at::ScalarType`" in text
    text = await hover(client, at("self.sym_sizes(), keepdim", offset=2))
    assert "`self_sym_sizes: c10::SymIntArrayRef`" in text


async def test_hover_tangent_and_primal(client: LanguageClient):
    text = await hover(client, at("self_t + maybe", offset=2))
    assert "tangent" in text and "`self`" in text
    text = await hover(client, at("other_t * self_p", offset=14))
    assert "primal" in text


async def test_hover_result_and_argument(client: LanguageClient):
    text = await hover(client, at("result.scalar_type()", offset=2))
    assert "`result.scalar_type()`" in text and "result_scalar_type" in text
    text = await hover(client, at("alpha.conj()", offset=1))
    assert "`alpha`: `Scalar`" in text and "at::Scalar" in text
    text = await hover(client, at("indices, self.sym_sizes()", offset=1))
    assert "output 1 `indices`" in text


async def test_hover_auto_linear(client: LanguageClient):
    text = await hover(client, at("result: auto_linear", offset=10))
    assert "expands to" in text and "self_t.expand_symint(size, implicit)" in text
    text = await hover(client, at("result: auto_element_wise", offset=10))
    assert "(grad * self.cos().conj())" not in text and "self_t.conj()" in text


async def test_hover_nothing(client: LanguageClient):
    assert await hover(client, types.Position(line=0, character=3)) == ""
    assert await hover(client, types.Position(line=10_000, character=3)) == ""


async def test_hover_on_a_helper_shows_its_declaration(client: LanguageClient):
    text = await hover(client, at("maybe_multiply", offset=2))
    assert "```cpp\nat::Tensor maybe_multiply(const at::Tensor& t, const at::Scalar& s);\n```" in text


# -- inlay hints ---------------------------------------------------------------------------------------


async def test_inlay_hints(client: LanguageClient):
    hints = await client.text_document_inlay_hint_async(
        types.InlayHintParams(
            text_document=ID,
            range=types.Range(start=types.Position(line=0, character=0), end=types.Position(line=10, character=0)),
        )
    )
    labels = {h.position.line: h.label for h in hints}
    add_line = at("add.Tensor").line
    assert labels[add_line] == "AddBackward0"
    assert hints[[h.position.line for h in hints].index(add_line)].position.character == len(
        TEXT.splitlines()[add_line]
    )
    assert labels[add_line + 1] == "saves self_scalar_type: at::ScalarType"
    assert labels[add_line + 2] == "saves other_scalar_type: at::ScalarType, alpha: at::Scalar"
    assert all(h.position.line <= 10 for h in hints)
    assert at("mul.Tensor").line not in labels


# -- definition and references ---------------------------------------------------------------------------


async def test_definition_of_name(client: LanguageClient):
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=ID, position=at("mul.Tensor", offset=2))
    )
    assert result[0].uri == uri(CHECKOUT_NATIVE)
    native_lines = CHECKOUT_NATIVE.read_text().splitlines()
    assert native_lines[result[0].range.start.line] == "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor"
    assert result[0].range.start.character == len("- func: ")


async def test_definition_of_manual_function(client: LanguageClient):
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=ID, position=at("mul_tensor_backward", offset=3))
    )
    manual = CHECKOUT / "torch" / "csrc" / "autograd" / "FunctionsManual.cpp"
    assert [r.uri for r in result] == [uri(manual)]
    line = manual.read_text().splitlines()[result[0].range.start.line]
    assert line.startswith("Tensor mul_tensor_backward(")
    # only declared in the header: the header
    result = await client.text_document_definition_async(
        types.DefinitionParams(text_document=ID, position=at("gather_with_keepdimed_indices", offset=3))
    )
    assert result[0].uri.endswith("FunctionsManual.h")


async def test_references_from_native(client: LanguageClient):
    docs = Documents(client)
    native = docs.open(CHECKOUT_NATIVE)
    native_text = CHECKOUT_NATIVE.read_text()
    result = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=native),
            position=position_of(native_text, "add_.Tensor", offset=2),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert [(r.uri, r.range.start.line) for r in result] == [(DOC, at("add.Tensor").line)]
    result = await client.text_document_references_async(
        types.ReferenceParams(
            text_document=types.TextDocumentIdentifier(uri=native),
            position=position_of(native_text, "cos(Tensor", offset=2),
            context=types.ReferenceContext(include_declaration=False),
        )
    )
    assert not result
    docs.close(native)


# -- completion ------------------------------------------------------------------------------------------


async def complete(client: LanguageClient, doc: str, position: types.Position) -> list[types.CompletionItem]:
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position)
    )
    if result is None:
        return []
    return list(result.items if isinstance(result, types.CompletionList) else result)


async def test_completion(client: LanguageClient):
    docs = Documents(client)
    path = CHECKOUT / "tools" / "autograd" / "completion" / "derivatives.yaml"
    text = "- name: co\n\n- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  self: gr\n  \n"
    doc = docs.open(path, text)
    await diagnostics(client, doc)
    items = await complete(client, doc, types.Position(line=0, character=10))
    labels = [i.label for i in items]
    assert labels[0] == "cos(Tensor self) -> Tensor"
    assert items[0].text_edit.range.start.character == len("- name: ")
    # keys: arguments not used yet, outputs, output_differentiability, dispatch
    labels = [i.label for i in await complete(client, doc, types.Position(line=4, character=2))]
    assert "other" in labels and "alpha" in labels and "self" not in labels
    assert "result" in labels and "output_differentiability" in labels and "dispatch" in labels
    # formulas
    items = await complete(client, doc, types.Position(line=3, character=10))
    labels = [i.label for i in items]
    assert "grad" in labels and "grad_input_mask" in labels and "other" not in labels
    assert items[0].text_edit.range.start == types.Position(line=3, character=8)
    docs.close(doc)


# -- symbols ---------------------------------------------------------------------------------------------


async def test_document_symbols(client: LanguageClient):
    result = await client.text_document_document_symbol_async(types.DocumentSymbolParams(text_document=ID))
    assert [s.name for s in result][:2] == [
        "abs(Tensor self) -> Tensor",
        "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor",
    ]
    add = result[1]
    assert add.detail == "AddBackward0"
    assert [c.name for c in add.children] == ["self", "other", "result"]
    total = result[5]
    assert [c.name for c in total.children] == ["Default", "AutogradNestedTensor"]
    assert total.children[1].detail == "SumBackwardAutogradNestedTensor0"


async def test_workspace_symbols(client: LanguageClient):
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="AddBackward0"))
    assert result[0].name == "AddBackward0" and result[0].location.range.start.line == at("add.Tensor").line
    result = await client.workspace_symbol_async(types.WorkspaceSymbolParams(query="add.Tensor"))
    assert result[0].name == "add.Tensor" and result[0].container_name == "AddBackward0"


# -- code actions -------------------------------------------------------------------------------------------


BROKEN = """\
- name: mul.Tensor(Tensor self, Tensor othr) -> Tensor
  self: grad

- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: grads[0] * self.sizes()[0]

- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  slef: grad
"""


async def actions(client: LanguageClient, doc: str, line: int) -> list[types.CodeAction]:
    return await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            range=types.Range(
                start=types.Position(line=line, character=0), end=types.Position(line=line, character=200)
            ),
            context=types.CodeActionContext(diagnostics=[]),
        )
    )


async def test_code_actions(client: LanguageClient):
    docs = Documents(client)
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "broken" / "derivatives.yaml", BROKEN)
    found = await diagnostics(client, doc)
    codes = {d.code for d in found}
    assert {"schema-not-found", "unknown-name"} <= codes
    result = await actions(client, doc, 0)
    assert result[0].title == "Replace with 'mul.Tensor(Tensor self, Tensor other) -> Tensor'"
    assert result[0].is_preferred
    assert result[0].diagnostics[0].code == "schema-not-found"
    result = await actions(client, doc, 7)
    assert result[0].title == "Replace 'slef' with 'self'"
    edit = result[0].edit.document_changes[0].edits[0]
    assert edit.new_text == "self" and edit.range.start == types.Position(line=7, character=2)
    result = await actions(client, doc, 4)
    titles = [a.title for a in result]
    assert "Use '.sym_sizes()'" in titles
    docs.close(doc)


async def test_code_action_grads(client: LanguageClient):
    docs = Documents(client)
    text = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n  self: grads[0] * 2\n"
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "grads" / "derivatives.yaml", text)
    found = await diagnostics(client, doc)
    assert [d.code for d in found] == ["grads-solely-zero"]
    result = await actions(client, doc, 1)
    assert result[0].title == "Replace 'grads[0]' with 'grad'"
    edit = result[0].edit.document_changes[0].edits[0]
    assert (edit.range.start.character, edit.range.end.character, edit.new_text) == (8, 16, "grad")
    docs.close(doc)


# -- generated code --------------------------------------------------------------------------------------------


async def test_generated_code(client: LanguageClient):
    lenses = await client.text_document_code_lens_async(types.CodeLensParams(text_document=ID))
    titles = [lens.command.title for lens in lenses]
    assert "Show generated code (AddBackward0)" in titles
    assert "Show generated code (SumBackward0, SumBackwardAutogradNestedTensor0)" in titles
    lens = lenses[titles.index("Show generated code (AddBackward0)")]
    assert lens.command.command == "derivls.showGeneratedCode"
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    assert result["uri"].startswith("derivls-generated:/add.Tensor.cpp?source=")
    assert "struct TORCH_API AddBackward0 : public TraceableFunction" in result["content"]
    assert "variable_list AddBackward0::apply(variable_list&& grads)" in result["content"]
    content = await client.protocol.send_request_async(
        types.WORKSPACE_TEXT_DOCUMENT_CONTENT, types.TextDocumentContentParams(uri=result["uri"])
    )
    assert content.text == result["content"]


async def test_generated_code_follows_edits(client: LanguageClient):
    docs = Documents(client)
    path = CHECKOUT / "tools" / "autograd" / "generated" / "derivatives.yaml"
    text = "- name: sin(Tensor self) -> Tensor\n  self: grad * self.cos()\n"
    doc = docs.open(path, text)
    await diagnostics(client, doc)
    result = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command="derivls.showGeneratedCode", arguments=[doc, 0])
    )
    assert "grad * self.cos()" in result["content"]
    client.generated_changes.clear()  # type: ignore[attr-defined]
    docs.edit(doc, 1, 25, 1, 25, ".conj()")
    await diagnostics(client, doc)
    changes = client.generated_changes  # type: ignore[attr-defined]
    for _ in range(200):
        if changes:
            break
        await asyncio.sleep(0.01)
    assert changes and changes[-1].uri == result["uri"]
    assert "(grad * self.cos().conj())" in changes[-1].content
    docs.close(doc)


# -- more formulas: named gradients, mixed grads, dispatch-key completion, another language id ---------------

MULTI = """\
- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)
  self: grad_values.expand_symint(self.sym_sizes())

- name: sum(Tensor self, *, ScalarType? dtype=None) -> Tensor
  dispatch:
    Default:
      self: grad.expand_symint(self.sym_sizes())
    
"""


async def test_named_gradient_hover_and_dispatch_completion(client: LanguageClient):
    docs = Documents(client)
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "named" / "derivatives.yaml", MULTI)
    assert await diagnostics(client, doc) == []
    text = await hover(client, position_of(MULTI, "grad_values", offset=3), doc)
    assert "`grad_values`: the gradient of the output `values`: `Tensor`" in text
    items = await complete(client, doc, types.Position(line=7, character=4))
    labels = [i.label for i in items]
    assert "AutogradNestedTensor" in labels and "AutogradCUDA" in labels and "Default" not in labels
    docs.close(doc)


async def test_code_action_mixed_grads(client: LanguageClient):
    docs = Documents(client)
    text = "- name: max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)\n  self: grad + grads[1]\n"
    doc = docs.open(CHECKOUT / "tools" / "autograd" / "mixed" / "derivatives.yaml", text)
    found = await diagnostics(client, doc)
    assert [d.code for d in found] == ["grads-mixed"]
    result = await actions(client, doc, 1)
    assert result[0].title == "Replace 'grad' with 'grads[0]'"
    edit = result[0].edit.document_changes[0].edits[0]
    assert (edit.range.start.character, edit.range.end.character, edit.new_text) == (8, 12, "grads[0]")
    docs.close(doc)


async def test_language_id_derivatives_yaml(client: LanguageClient):
    """A buffer with language id `derivatives-yaml` is analysed whatever its name."""
    docs = Documents(client)
    path = CHECKOUT / "tools" / "autograd" / "scratch.yaml"
    doc = docs.open(
        path, "- name: sin(Tensor self) -> Tensor\n  self: grad * self.sizes()\n", language_id="derivatives-yaml"
    )
    assert [d.code for d in await diagnostics(client, doc)] == ["sizes-not-supported"]
    docs.close(doc)
