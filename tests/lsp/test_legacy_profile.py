"""The server picks the loader profile per workspace; in a legacy (2021) workspace hovers show 2021 C++ types.

Workspaces are built in tmp_path from the 2021 fixture files:

- `checkout`: a 2021 pytorch checkout layout (tools/autograd/derivatives.yaml, tools/codegen/, no
  torchgen/, aten/src/ATen/native/native_functions.yaml): `auto` picks legacy from the layout;
- `plain`: the two files in one folder, found through the `nativeFunctions` setting: `auto` picks
  legacy from what native_functions.yaml holds (no tags.yaml, no SymInt), and `profile` overrides.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import (
    CONFIG,
    Documents,
    diagnostics,
    hover_text,
    initialize,
    position_of,
    status,
)

LEGACY = Path(__file__).resolve().parent.parent / "fixtures" / "legacy-2021"
TEXT = (LEGACY / "derivatives.yaml").read_text(encoding="utf-8")


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "pytorch-2021"
    (root / "tools" / "autograd").mkdir(parents=True)
    (root / "tools" / "codegen").mkdir()
    (root / "tools" / "codegen" / "model.py").write_text("# the 2021 codegen lived here\n", encoding="utf-8")
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    shutil.copy(LEGACY / "derivatives.yaml", root / "tools" / "autograd" / "derivatives.yaml")
    shutil.copy(LEGACY / "native_functions.yaml", native / "native_functions.yaml")
    return root


@pytest.fixture
def plain(tmp_path: Path) -> Path:
    folder = tmp_path / "legacy-files"
    folder.mkdir()
    shutil.copy(LEGACY / "derivatives.yaml", folder / "derivatives.yaml")
    shutil.copy(LEGACY / "native_functions.yaml", folder / "native_functions.yaml")
    return folder


def at(needle: str, offset: int = 0) -> types.Position:
    return position_of(TEXT, needle, 0, offset)


async def hover(client: LanguageClient, doc: str, position: types.Position) -> str:
    return hover_text(
        await client.text_document_hover_async(
            types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position)
        )
    )


async def open_and_wait(client: LanguageClient, path: Path) -> tuple[str, list[types.Diagnostic]]:
    doc = Documents(client).open(path)
    return doc, await diagnostics(client, doc)


def errors(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.severity == types.DiagnosticSeverity.Error]


async def assert_legacy_hovers(client: LanguageClient, doc: str) -> None:
    name = await hover(client, doc, at("- name: abs(Tensor self)", offset=9))
    assert "Tensor abs(const Tensor & self)" in name  # the 2021 C++ declaration
    assert "`AbsBackward`" in name  # 2021 node names: no suffix on a unique name
    assert "`self: Tensor`" in name
    assert "at::Tensor" not in name

    key = await hover(client, doc, at("  other: handle_r_to_c(other.scalar_type()", offset=3))
    assert "C++ `const Tensor &`" in key

    saved = await hover(client, doc, at("at::sum_to(grad, self.sizes())", offset=18))
    assert "saved as `self_sizes: IntArrayRef`" in saved

    scalar = await hover(client, doc, at("maybe_multiply(grad, alpha.conj())", offset=22))
    assert "C++ `Scalar`" in scalar  # passed by value in 2021 (2.x: const at::Scalar &)

    add = await hover(client, doc, at("- name: add.Tensor", offset=9))
    assert "`AddBackward0`" in add

    # completion of a formula word: argument details in 2021 types, no forward-mode words
    completion = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            position=at("maybe_multiply(grad, alpha.conj())", offset=21),
        )
    )
    items = {i.label: i for i in (completion.items if isinstance(completion, types.CompletionList) else completion)}
    assert items["alpha"].detail == "Scalar (Scalar)"
    assert items["other"].detail == "Tensor (const Tensor &)"
    assert "other_t" not in items and "auto_linear" not in items


async def test_auto_picks_legacy_from_a_2021_checkout(client: LanguageClient, checkout: Path):
    await initialize(client, checkout)
    doc, found = await open_and_wait(client, checkout / "tools" / "autograd" / "derivatives.yaml")
    assert errors(found) == []
    assert {str(d.code) for d in found} == {"unknown-name"}  # the 2021 file's four stray 'self:' keys
    await assert_legacy_hovers(client, doc)
    info = await status(client)
    assert info.settings.profile == "auto"


async def test_auto_picks_legacy_from_the_native_functions(client: LanguageClient, plain: Path):
    await initialize(client, plain, options={"nativeFunctions": str(plain / "native_functions.yaml")})
    doc, found = await open_and_wait(client, plain / "derivatives.yaml")
    assert errors(found) == []
    await assert_legacy_hovers(client, doc)


async def test_profile_setting_overrides_auto(client: LanguageClient, checkout: Path):
    """`profile: torchgen` in a 2021 checkout: torchgen 2.x's rules, which leave out the 2021 functions one by one."""
    await initialize(client, checkout, options={"derivls": {"profile": "torchgen"}})
    _, found = await open_and_wait(client, checkout / "tools" / "autograd" / "derivatives.yaml")
    left_out = [d for d in found if str(d.code) == "native-function-left-out"]
    assert left_out and "use_c10_dispatcher" in left_out[0].message  # a 2021-only key
    info = await status(client)
    assert info.settings.profile == "torchgen"


async def test_profile_setting_legacy(client: LanguageClient, plain: Path):
    options = {"nativeFunctions": str(plain / "native_functions.yaml"), "profile": "legacy"}
    await initialize(client, plain, options=options)
    doc, found = await open_and_wait(client, plain / "derivatives.yaml")
    assert errors(found) == []
    await assert_legacy_hovers(client, doc)
    info = await status(client)
    assert info.settings.profile == "legacy"
