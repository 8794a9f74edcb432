"""The "Run gradcheck" code lens against the real server (`python -m derivls` over stdio, pytest-lsp).

A copy of the installed torch 2.13 wheel's files; acos's formula edited in the buffer (its sign
dropped); the lens above the entry runs `derivls.runGradcheck` in a subprocess (with `$/progress`);
the result is a "derivls-gradcheck" diagnostic on the formula, dropped when the entry is edited.
Slow (a compiler, torch's import): `python -m pytest -m gradcheck`.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.gradcheck.conftest import make_wheel_copy
from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize, position_of

pytestmark = pytest.mark.gradcheck

SOURCE = "derivls-gradcheck"
SHIPPED = "self: grad * -((-self * self + 1).rsqrt()).conj()"
SIGN_DROPPED = "self: grad * ((-self * self + 1).rsqrt()).conj()"
TIMEOUT = 1800.0


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


def gradcheck_diagnostics(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.source == SOURCE]


async def test_the_gradcheck_lens_reports_a_wrong_formula_on_its_line(
    client: LanguageClient, real_files, tmp_path: Path
):
    site = tmp_path / "site-packages"
    path = make_wheel_copy(real_files, site)
    await initialize(client, site, options={"derivls": {"trustedWorkspace": True}})  # (it runs the entry's C++)
    docs = Documents(client)
    doc = docs.open(path)
    await diagnostics(client, doc, timeout=120)

    start = position_of(docs.texts[doc], SHIPPED)
    end = position_of(docs.texts[doc], SHIPPED, offset=len(SHIPPED))
    docs.edit(doc, start.line, start.character, end.line, end.character, SIGN_DROPPED)
    await diagnostics(client, doc, timeout=30)

    entry_line = position_of(docs.texts[doc], "- name: acos(Tensor self)").line
    lenses = await client.text_document_code_lens_async(
        types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
    )
    runs = [lens for lens in lenses if lens.command and lens.command.command == "derivls.runGradcheck"]
    assert len(runs) > 100  # one above each entry with a formula
    (lens,) = [lens for lens in runs if lens.range.start.line == entry_line]
    assert lens.command.title == "Run gradcheck"

    started = time.monotonic()
    answer = await client.workspace_execute_command_async(
        types.ExecuteCommandParams(command=lens.command.command, arguments=lens.command.arguments)
    )
    assert answer["started"] is True and answer["line"] == entry_line
    while not gradcheck_diagnostics(client.diagnostics.get(doc, [])):
        assert time.monotonic() - started < TIMEOUT, f"no {SOURCE} diagnostic within {TIMEOUT} s"
        await asyncio.sleep(0.25)
    print(f"gradcheck diagnostics after {time.monotonic() - started:.1f} s")
    found = gradcheck_diagnostics(client.diagnostics[doc])
    where = position_of(docs.texts[doc], SIGN_DROPPED, offset=len("self: "))
    assert (where.line, where.character) in [(d.range.start.line, d.range.start.character) for d in found]
    assert all(d.severity == types.DiagnosticSeverity.Error for d in found)
    ended = [
        value
        for token, values in client.progress_reports.items()
        if str(token).startswith("derivls-gradcheck-")
        for value in values
        if isinstance(value, types.WorkDoneProgressEnd)
    ]
    assert ended

    # the repair that passes: a quick fix on the diagnostic, the formula's text only, not applied by the server
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            range=types.Range(start=where, end=where),
            context=types.CodeActionContext(diagnostics=found),
        )
    )
    repairs = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("Replace with")]
    assert len(repairs) == 1, actions
    (repair,) = repairs
    formula = SHIPPED[len("self: ") :]
    assert repair.title.startswith(f"Replace with `{formula}` (passes gradcheck on ")
    assert repair.title.endswith(" samples)") and repair.kind == types.CodeActionKind.QuickFix
    assert repair.diagnostics and repair.diagnostics[0].code == "gradcheck-mismatch"
    if repair.edit.document_changes:
        (change,) = repair.edit.document_changes
        edits = change.edits
    else:
        edits = repair.edit.changes[doc]
    (edit,) = edits
    assert edit.new_text == formula
    assert (edit.range.start.line, edit.range.start.character) == (where.line, where.character)
    assert edit.range.end == position_of(docs.texts[doc], SIGN_DROPPED, offset=len(SIGN_DROPPED))
    assert SIGN_DROPPED in docs.texts[doc]  # (offered, not applied)

    async def acos_lens_title() -> str:
        lenses = await client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=doc))
        )
        line = position_of(docs.texts[doc], "- name: acos(Tensor self)").line
        (found,) = [
            x
            for x in lenses
            if x.command and x.command.command == "derivls.runGradcheck" and x.range.start.line == line
        ]
        return found.command.title

    # the verdict stays on the entry's lens (with its time) while the entry is unchanged
    title = await acos_lens_title()
    assert title.startswith("Gradcheck failed at ") and title.endswith(" s · run again"), title

    # the entry edited back: its gradcheck diagnostics are dropped with the next publish
    start = position_of(docs.texts[doc], SIGN_DROPPED)
    end = position_of(docs.texts[doc], SIGN_DROPPED, offset=len(SIGN_DROPPED))
    docs.edit(doc, start.line, start.character, end.line, end.character, SHIPPED)
    assert gradcheck_diagnostics(await diagnostics(client, doc, timeout=30)) == []
    assert await acos_lens_title() == "Run gradcheck"  # (and its verdict)
