"""Formulas as code over LSP, on the real 2.13 files: hover on helpers and methods, signature help,
semantic tokens (legend, delta encoding, ranges, UTF-16 columns)."""

from __future__ import annotations

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    CHECKOUT,
    CHECKOUT_DERIVATIVES,
    CONFIG,
    Documents,
    capabilities,
    diagnostics,
    hover_text,
    initialize,
    open_real_file,
    position_of,
)

pytestmark = pytest.mark.asyncio(loop_scope="module")


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


def decode(data: list[int], legend: types.SemanticTokensLegend) -> list[tuple[int, int, int, str, set[str]]]:
    """LSP's relative encoding back to (line, start, length, type, modifiers)."""
    out = []
    line = start = 0
    for i in range(0, len(data), 5):
        delta_line, delta_start, length, token_type, bits = data[i : i + 5]
        line += delta_line
        start = start + delta_start if delta_line == 0 else delta_start
        modifiers = {m for k, m in enumerate(legend.token_modifiers) if bits & (1 << k)}
        out.append((line, start, length, legend.token_types[token_type], modifiers))
    return out


def legend_of(client: LanguageClient) -> types.SemanticTokensLegend:
    provider = client.server_capabilities.semantic_tokens_provider  # type: ignore[attr-defined]
    assert provider is not None and provider.full and provider.range
    return provider.legend


async def test_the_server_offers_signature_help_and_semantic_tokens(client: LanguageClient):
    caps = client.server_capabilities  # type: ignore[attr-defined]
    assert list(caps.signature_help_provider.trigger_characters) == ["(", ","]
    legend = legend_of(client)
    assert {"parameter", "variable", "function", "method", "namespace", "number", "string", "keyword"} <= set(
        legend.token_types
    )
    assert {"tangent", "primal", "output", "grad"} <= set(legend.token_modifiers)


async def test_hover_on_a_helper_shows_its_functions_manual_declaration(client: LanguageClient, doc, text):
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=position_of(text, "handle_r_to_c(result.scalar_type()", offset=4))
    )
    value = hover_text(result)
    assert "```cpp\nat::Tensor handle_r_to_c(ScalarType self_st, Tensor gradient_result);\n```" in value
    assert "FunctionsManual.h:" in value
    assert result is not None and result.range is not None
    start = position_of(text, "handle_r_to_c(result.scalar_type()")
    assert (result.range.start, result.range.end.character) == (start, start.character + len("handle_r_to_c"))


async def test_hover_on_a_method_shows_its_schema(client: LanguageClient, doc, text):
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=doc, position=position_of(text, "self_p.sgn()", offset=len("self_p.s")))
    )
    value = hover_text(result)
    assert "**Tensor method** `sgn`" in value and "sgn(Tensor self) -> Tensor" in value


async def test_completion_after_a_tensor_and_a_dot_offers_its_methods(client: LanguageClient, doc, text):
    result = await client.text_document_completion_async(
        types.CompletionParams(text_document=doc, position=position_of(text, "self_p.sgn()", offset=len("self_p.sg")))
    )
    assert isinstance(result, types.CompletionList)
    sgn = next(item for item in result.items if item.label == "sgn")
    assert sgn.kind == types.CompletionItemKind.Method and sgn.detail == "sgn(Tensor self) -> Tensor"
    assert all(item.label.startswith("sg") for item in result.items)
    assert ">" in client.server_capabilities.completion_provider.trigger_characters  # type: ignore[attr-defined]


async def test_signature_help_inside_a_helper_call_gives_the_active_parameter(client: LanguageClient, doc, text):
    needle = "norm_backward(grad, self, p, result)"
    result = await client.text_document_signature_help_async(
        types.SignatureHelpParams(
            text_document=doc, position=position_of(text, needle, offset=len("norm_backward(grad, se"))
        )
    )
    assert result is not None and len(result.signatures) == 2
    assert result.active_parameter == 1
    active = result.signatures[result.active_signature or 0]
    assert active.label.startswith("at::Tensor norm_backward(")
    assert active.parameters is not None
    start, end = active.parameters[1].label  # VS Code's capabilities: label offsets
    assert active.label[start:end] == "const at::Tensor& self"


async def test_no_signature_help_outside_calls(client: LanguageClient, doc, text):
    result = await client.text_document_signature_help_async(
        types.SignatureHelpParams(text_document=doc, position=position_of(text, "- name: abs(", offset=3))
    )
    assert result is None


async def test_semantic_tokens_for_a_range_decode_to_the_expected_kinds(client: LanguageClient, doc, text):
    line = position_of(text, "  result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())").line
    result = await client.text_document_semantic_tokens_range_async(
        types.SemanticTokensRangeParams(
            text_document=doc,
            range=types.Range(
                start=types.Position(line=line - 1, character=0), end=types.Position(line=line + 1, character=0)
            ),
        )
    )
    assert result is not None
    found = decode(result.data, legend_of(client))
    lines = text.splitlines()
    named = [(lines[ln][s : s + n], t, m) for ln, s, n, t, m in found]
    assert named == [
        ("grad", "variable", {"grad"}), ("self", "parameter", set()), ("sgn", "method", set()),
        ("handle_r_to_c", "function", set()), ("result", "variable", {"output"}), ("scalar_type", "method", set()),
        ("self_t", "parameter", {"tangent"}), ("conj", "method", set()), ("self_p", "parameter", {"primal"}),
        ("sgn", "method", set()),
    ]  # fmt: skip


async def test_semantic_tokens_of_the_whole_file_are_ordered_and_resolved(client: LanguageClient, doc, text):
    result = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc))
    assert result is not None
    found = decode(result.data, legend_of(client))
    assert len(found) > 5000
    assert all(length > 0 for _, _, length, _, _ in found)
    assert [(ln, s) for ln, s, *_ in found] == sorted({(ln, s) for ln, s, *_ in found})  # ordered, no overlap
    lines = text.splitlines()
    assert all(s + n <= len(lines[ln]) for ln, s, n, _, _ in found)
    assert not [t for t in found if "unresolved" in t[4]]  # the real file resolves


async def test_semantic_tokens_delta_sends_one_edit_that_rebuilds_the_full_answer(client: LanguageClient, doc, text):
    provider = client.server_capabilities.semantic_tokens_provider  # type: ignore[attr-defined]
    assert provider.full == types.SemanticTokensFullDelta(delta=True)
    first = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc))
    assert first is not None and first.result_id
    unchanged = await client.text_document_semantic_tokens_full_delta_async(
        types.SemanticTokensDeltaParams(text_document=doc, previous_result_id=first.result_id)
    )
    assert isinstance(unchanged, types.SemanticTokensDelta) and not unchanged.edits
    assert unchanged.result_id and unchanged.result_id != first.result_id

    docs = Documents(client)
    docs.texts[doc.uri], docs.versions[doc.uri] = text, 1
    at = position_of(text, "self_t.conj() * self_p.sgn()")
    docs.edit(doc.uri, at.line, at.character, at.line, at.character + len("self_t"), "self_t.conj().conj")
    await diagnostics(client, doc.uri)
    changed = await client.text_document_semantic_tokens_full_delta_async(
        types.SemanticTokensDeltaParams(text_document=doc, previous_result_id=unchanged.result_id)
    )
    assert isinstance(changed, types.SemanticTokensDelta) and len(changed.edits) == 1
    edit = changed.edits[0]
    assert 0 < len(edit.data or []) < 50  # the changed formula's tokens, not the file's
    rebuilt = list(first.data)
    rebuilt[edit.start : edit.start + edit.delete_count] = edit.data or []
    fresh = await client.text_document_semantic_tokens_full_async(types.SemanticTokensParams(text_document=doc))
    assert fresh is not None and rebuilt == list(fresh.data)
    stale = await client.text_document_semantic_tokens_full_delta_async(
        types.SemanticTokensDeltaParams(text_document=doc, previous_result_id=first.result_id)
    )
    assert isinstance(stale, types.SemanticTokens) and stale.data == fresh.data  # an old id: the whole data
    docs.replace_all(doc.uri, text)
    await diagnostics(client, doc.uri)


async def first_quick_fix(
    client: LanguageClient, doc: types.TextDocumentIdentifier, line: int, code: str
) -> tuple[types.CodeAction, types.TextEdit]:
    """The diagnostics on `line` must be exactly one of `code`: its first code action and that action's one edit."""
    found = [d for d in await diagnostics(client, doc.uri) if d.range.start.line == line]
    assert [d.code for d in found] == [code]
    result = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=doc,
            range=types.Range(start=found[0].range.start, end=found[0].range.end),
            context=types.CodeActionContext(diagnostics=found),
        )
    )
    assert result is not None and isinstance(result[0], types.CodeAction)
    [change] = result[0].edit.document_changes  # type: ignore[union-attr]
    [edit] = change.edits  # type: ignore[union-attr]
    return result[0], edit  # type: ignore[return-value]


async def test_a_method_on_the_wrong_receiver_gets_a_quick_fix_that_edits_the_formula(
    client: LanguageClient, doc, text
):
    docs = Documents(client)
    docs.texts[doc.uri], docs.versions[doc.uri] = text, 100
    needle = "native_batch_norm_backward(grad, input, weight, running_mean"
    at = position_of(text, needle, offset=len("native_batch_norm_backward(grad, input, weight"))
    docs.edit(doc.uri, at.line, at.character, at.line, at.character, ".value()")
    action, edit = await first_quick_fix(client, doc, at.line, "formula-unknown-method")
    assert action.title == "Remove '.value()' ('weight' is a Tensor here)" and action.is_preferred
    assert edit.new_text == "" and (edit.range.start, edit.range.end.character) == (at, at.character + len(".value()"))
    docs.replace_all(doc.uri, text)
    await diagnostics(client, doc.uri)


async def test_a_symint_list_given_to_an_int_array_ref_name_gets_the_symint_name_as_quick_fix(
    client: LanguageClient, doc, text
):
    docs = Documents(client)
    docs.texts[doc.uri], docs.versions[doc.uri] = text, 200
    at = position_of(text, "self: grad.expand_symint(self.sym_sizes())", offset=len("self: grad."))
    docs.edit(doc.uri, at.line, at.character, at.line, at.character + len("expand_symint"), "expand")
    action, edit = await first_quick_fix(client, doc, at.line, "formula-symint-to-int")
    assert action.title == "Call 'expand_symint'"
    assert edit.new_text == "expand_symint" and (edit.range.start, edit.range.end.character) == (at, at.character + 6)
    docs.replace_all(doc.uri, text)
    await diagnostics(client, doc.uri)


async def test_python_power_in_a_formula_gets_pow_as_quick_fix(client: LanguageClient, doc, text):
    docs = Documents(client)
    docs.texts[doc.uri], docs.versions[doc.uri] = text, 300
    line = "  self: grad * self.sgn()\n"
    at = position_of(text, line, offset=len(line) - 1)
    docs.edit(doc.uri, at.line, at.character, at.line, at.character, " ** 2")
    action, edit = await first_quick_fix(client, doc, at.line, "formula-python-syntax")
    assert action.title == "Use 'self.sgn().pow(2)'"
    start = at.character - len("self.sgn()")
    assert edit.new_text == "self.sgn().pow(2)"
    assert (edit.range.start.character, edit.range.end.character) == (start, at.character + len(" ** 2"))
    docs.replace_all(doc.uri, text)
    await diagnostics(client, doc.uri)


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def toy(lsp_client: LanguageClient):
    result = await initialize(lsp_client, CHECKOUT, caps=capabilities())
    lsp_client.server_capabilities = result.capabilities  # type: ignore[attr-defined]
    yield
    await lsp_client.shutdown_session()


async def test_semantic_token_columns_are_utf16_units(toy: LanguageClient):
    lsp_client = toy
    text = (
        "- name: abs(Tensor self) -> Tensor\n"
        + '  self: grad * handle_r_to_c(self.scalar_type(), "\U0001f600") * self.sgn()\n'
    )
    docs = Documents(lsp_client)
    doc = docs.open(CHECKOUT_DERIVATIVES, text)
    await diagnostics(lsp_client, doc)
    result = await lsp_client.text_document_semantic_tokens_full_async(
        types.SemanticTokensParams(text_document=types.TextDocumentIdentifier(uri=doc))
    )
    assert result is not None
    found = decode(result.data, legend_of(lsp_client))
    line = text.splitlines()[1]
    utf16 = line.encode("utf-16-le")
    named = [(utf16[2 * s : 2 * (s + n)].decode("utf-16-le"), t) for _, s, n, t, _ in found]
    assert named[-3:] == [('"\U0001f600"', "string"), ("self", "parameter"), ("sgn", "method")]
    string = found[-3]
    assert string[2] == 4  # the quotes and a surrogate pair
