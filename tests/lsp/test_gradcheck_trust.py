"""Issue 34: gradcheck compiles and runs an entry's C++, so the server offers it only in a trusted workspace.

Against the real server over stdio (pytest-lsp). Untrusted (no `trustedWorkspace`, or `false` as VS Code's
restricted mode sends): each gradcheck lens only says why and runs nothing, the command refuses and starts no
process; the `derivls/workspaceTrusted` notification (VS Code's onDidGrantWorkspaceTrust) makes them runnable.
Nothing here compiles: the command that is allowed is never sent."""

from __future__ import annotations

from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from derivls.ide.gradcheck import RUN_GRADCHECK, TITLE, UNTRUSTED, UNTRUSTED_TITLE
from derivls.server.runtime.handlers import WORKSPACE_TRUSTED
from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize, position_of, status


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def gradcheck_lenses(client: LanguageClient, doc: str) -> list[types.CodeLens]:
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
    )
    return [lens for lens in lenses if lens.command and lens.command.title in (TITLE, UNTRUSTED_TITLE)]


async def open_real(client: LanguageClient, real_files, options) -> tuple[str, str]:
    await initialize(client, real_files.packaged, options=options)
    docs = Documents(client)
    doc = docs.open(real_files.derivatives)
    await diagnostics(client, doc, timeout=120)
    return doc, docs.texts[doc]


@pytest.mark.parametrize("options", [{}, {"derivls": {"trustedWorkspace": False}}], ids=["unsaid", "restricted"])
async def test_untrusted_the_gradcheck_lens_runs_nothing_and_the_command_refuses(
    client: LanguageClient, real_files, options
):
    doc, text = await open_real(client, real_files, options)
    lenses = await gradcheck_lenses(client, doc)
    assert len(lenses) > 100
    assert {(lens.command.title, lens.command.command) for lens in lenses} == {(UNTRUSTED_TITLE, "")}
    line = position_of(text, "- name: acos(Tensor self) -> Tensor").line
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=RUN_GRADCHECK, arguments=[doc, line])
    )
    assert answer == {"started": False, "reason": UNTRUSTED}
    assert (await status(client)).settings.trustedWorkspace is False


async def test_a_trust_grant_makes_the_lenses_runnable(client: LanguageClient, real_files, tmp_path: Path):
    doc, text = await open_real(client, real_files, {"derivls": {"trustedWorkspace": False}})
    before = await gradcheck_lenses(client, doc)  # (the server keeps each entry's lenses: not these after the grant)
    assert {lens.command.title for lens in before} == {UNTRUSTED_TITLE}
    client.protocol.notify(WORKSPACE_TRUSTED, {})
    for _ in range(100):
        if (await status(client)).settings.trustedWorkspace:
            break
    assert (await status(client)).settings.trustedWorkspace is True
    lenses = await gradcheck_lenses(client, doc)
    line = position_of(text, "- name: acos(Tensor self) -> Tensor").line
    (acos,) = [lens for lens in lenses if lens.range.start.line == line]
    assert (acos.command.title, acos.command.command, tuple(acos.command.arguments or ())) == (
        TITLE,
        RUN_GRADCHECK,
        (doc, line),
    )
    assert {lens.command.title for lens in lenses} == {TITLE}
