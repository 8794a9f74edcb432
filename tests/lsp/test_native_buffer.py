"""An open native_functions.yaml / tags.yaml gets its own diagnostics: what torchgen rejects there, on the
token, errors where the release is known (a checkout's version.txt), a warning where it is not; also when no
derivatives.yaml is open; and derivatives.yaml's diagnostics follow the edit."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CHECKOUT, CONFIG, Documents, diagnostics, initialize, position_of


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def _checkout(tmp_path: Path, version: str | None) -> Path:
    root = tmp_path / "pytorch"
    shutil.copytree(CHECKOUT, root)
    if version is not None:
        (root / "version.txt").write_text(version + "\n")
    return root


def _found(published: list[types.Diagnostic]) -> list[tuple[int, int, str, types.DiagnosticSeverity | None]]:
    return [(d.range.start.line, d.range.start.character, str(d.code), d.severity) for d in published]


async def _next(client: LanguageClient, doc: str, want: int) -> list[types.Diagnostic]:
    """Published diagnostics of `doc` until `want` of them arrive (the first publication may be the old text's)."""
    for _ in range(40):
        found = await diagnostics(client, doc, timeout=30)
        if len(found) == want:
            return found
        client.diagnostics.pop(doc, None)
        await asyncio.sleep(0.05)
    return found


async def test_an_open_native_file_alone_shows_each_rejection_on_its_token(client: LanguageClient, tmp_path: Path):
    root = _checkout(tmp_path, "2.13.0")
    await initialize(client, root)
    docs = Documents(client)
    native_path = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    text = native_path.read_text()
    bad = text.replace("- func: abs(Tensor self)", "- func: abs(Tensr self)").replace(
        "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  variants: function, method",
        "- func: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  variants: function, methd",
    )
    native = docs.open(native_path, bad)
    found = _found(await _next(client, native, 2))
    type_at = position_of(bad, "Tensr")
    variant_at = position_of(bad, "methd")
    error = types.DiagnosticSeverity.Error
    assert found == [
        (type_at.line, type_at.character, "native-unknown-type", error),
        (variant_at.line, variant_at.character, "native-unknown-variant", error),
    ]
    # fixing the buffer clears them
    client.diagnostics.pop(native, None)
    docs.replace_all(native, text)
    assert await _next(client, native, 0) == []


async def test_without_a_known_release_an_unknown_type_is_a_warning_and_derivatives_follow(
    client: LanguageClient, tmp_path: Path
):
    root = _checkout(tmp_path, None)
    await initialize(client, root)
    docs = Documents(client)
    derivatives = docs.open(root / "tools" / "autograd" / "derivatives.yaml")
    assert await diagnostics(client, derivatives) == []
    native_path = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native = docs.open(native_path)
    await asyncio.sleep(0.2)
    client.diagnostics.pop(derivatives, None)
    bad = native_path.read_text().replace("- func: mul.Tensor(Tensor self", "- func: mul.Tensor(Tensr self")
    docs.replace_all(native, bad)
    found = _found(await _next(client, native, 1))
    at = position_of(bad, "Tensr")
    assert found == [(at.line, at.character, "native-left-out", types.DiagnosticSeverity.Warning)]
    followed = await diagnostics(client, derivatives, timeout=30)
    assert [str(d.code) for d in followed] == ["native-functions-left-out", "native-function-left-out"]


async def test_hover_on_func_shows_the_cpp_signature_and_the_entry_and_node_that_cover_it(
    client: LanguageClient, tmp_path: Path
):
    root = _checkout(tmp_path, "2.13.0")
    await initialize(client, root)
    docs = Documents(client)
    derivatives_path = root / "tools" / "autograd" / "derivatives.yaml"
    derivatives = docs.open(derivatives_path)
    await diagnostics(client, derivatives)
    native_path = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    text = native_path.read_text()
    native = docs.open(native_path)
    await asyncio.sleep(0.3)
    at = position_of(text, "mul.Tensor(Tensor self")
    identifier = types.TextDocumentIdentifier(uri=native)
    shown = await client.text_document_hover_async(types.HoverParams(text_document=identifier, position=at))
    assert shown is not None
    value = shown.contents.value  # type: ignore[union-attr]
    entry_line = (
        derivatives_path.read_text().split("\n").index("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor")
    )
    assert "at::Tensor mul(const at::Tensor & self, const at::Tensor & other)" in value
    assert f"derivatives.yaml:{entry_line + 1}" in value and "MulBackward0" in value
    # go to the entry
    found = await client.text_document_definition_async(types.DefinitionParams(text_document=identifier, position=at))
    assert isinstance(found, list) and found[0].uri == derivatives and found[0].range.start.line == entry_line
    # a function without an entry says what autograd does
    at = position_of(text, "cos(Tensor self")
    shown = await client.text_document_hover_async(types.HoverParams(text_document=identifier, position=at))
    assert shown is not None and "No derivatives.yaml entry" in shown.contents.value  # type: ignore[union-attr]


async def test_completion_in_native_functions_offers_keys_tags_dispatch_keys_and_types(
    client: LanguageClient, tmp_path: Path
):
    root = _checkout(tmp_path, "2.13.0")
    await initialize(client, root)
    docs = Documents(client)
    native_path = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    text = (
        native_path.read_text()
        + "\n- func: newop(Tensor self, Sca) -> Tensor\n  dispatch:\n    CP\n  tags: [co\n  device_\n"
    )
    native = docs.open(native_path)
    assert await _next(client, native, 0) == []  # indexed
    docs.replace_all(native, text)  # half-typed lines (not YAML yet): completion uses the last good index
    await asyncio.sleep(0.5)
    identifier = types.TextDocumentIdentifier(uri=native)
    lines = text.split("\n")

    async def labels(line_text: str) -> list[str]:
        """At the end of `line_text`, the start of a line of the text."""
        line = next(i for i, t in enumerate(lines) if t.startswith(line_text))
        position = types.Position(line=line, character=len(line_text))
        found = await client.text_document_completion_async(
            types.CompletionParams(text_document=identifier, position=position)
        )
        assert found is not None
        items = found.items if isinstance(found, types.CompletionList) else found
        return [i.label for i in items]

    assert "Scalar" in await labels("- func: newop(Tensor self, Sca")
    assert "CPU" in await labels("    CP") and "Vulkan" not in await labels("    CP")
    assert "core" in await labels("  tags: [co")
    assert "device_check" in await labels("  device_")


async def test_a_misspelled_type_has_a_quick_fix(client: LanguageClient, tmp_path: Path):
    root = _checkout(tmp_path, "2.13.0")
    await initialize(client, root)
    docs = Documents(client)
    native_path = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    bad = native_path.read_text().replace("- func: abs(Tensor self)", "- func: abs(Tensr self)")
    native = docs.open(native_path, bad)
    (found,) = await _next(client, native, 1)
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=native),
            range=found.range,
            context=types.CodeActionContext(diagnostics=[found]),
        )
    )
    assert actions is not None
    (action,) = actions
    assert isinstance(action, types.CodeAction) and action.title == "Change to 'Tensor'"
    assert action.edit is not None and action.edit.changes is not None
    (edit,) = action.edit.changes[native]
    assert edit.new_text == "Tensor" and edit.range == found.range
