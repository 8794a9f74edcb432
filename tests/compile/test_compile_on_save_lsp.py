"""compileOnSave against the real server (`python -m derivls` over stdio, pytest-lsp).

A copy of the installed torch's files laid out like the wheel (site-packages/torchgen/packaged/…,
torch/version.py); the copy is not beside the installed torch's headers, so `compileTorchInclude`
names them. A save with a seeded mistake that only a compiler sees (a FunctionsManual helper called
with too few arguments) gets the compiler's error on that formula, with the source "derivls-compile";
edits elsewhere get their diagnostics at once while the compile runs; editing the entry drops it.

Slow the first time (the precompiled header is built once into the user cache directory): run with
`python -m pytest -m compile`.
"""

from __future__ import annotations

import asyncio
import shutil
import time
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize, position_of

pytestmark = pytest.mark.compile

SOURCE = "derivls-compile"
SHIPPED = "  self: mul_tensor_backward(grad, other, self.scalar_type())\n"
MISTAKEN = "  self: mul_tensor_backward(grad, other)\n"  # one argument short: only a compiler sees it
ELSEWHERE = "- name: neg(Tensor self) -> Tensor\n  self: grad.neg()\n"  # an entry below mul.Tensor
MISTYPED = "- name: neg(Tensor self) -> Tensor\n  selff: grad.neg()\n"  # a key that is no argument: unknown-name
COMPILE_TIMEOUT = 1800.0  # seconds: a cold cache builds the precompiled header first (minutes)
EDIT_LATENCY = 5.0  # seconds: an edit's diagnostics while the compiler runs (the analysis takes ~10 ms)


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def wheel(real_files, tmp_path: Path) -> Path:
    """site-packages of a torch 2.13 wheel, copied: torch/version.py and torchgen/packaged/'s yaml and templates."""
    site = tmp_path / "site-packages"
    packaged = site / "torchgen" / "packaged"
    (packaged / "ATen" / "native").mkdir(parents=True)
    shutil.copytree(real_files.derivatives.parent / "templates", packaged / "autograd" / "templates")
    shutil.copyfile(real_files.derivatives, packaged / "autograd" / "derivatives.yaml")
    shutil.copyfile(real_files.native, packaged / "ATen" / "native" / "native_functions.yaml")
    shutil.copyfile(real_files.tags, packaged / "ATen" / "native" / "tags.yaml")
    (site / "torch").mkdir()
    shutil.copyfile(real_files.packaged.parent.parent / "torch" / "version.py", site / "torch" / "version.py")
    return site


def problems(found):
    """Errors and warnings (not notes)."""
    return [d for d in found if d.severity in (types.DiagnosticSeverity.Error, types.DiagnosticSeverity.Warning)]


def compile_diagnostics(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.source == SOURCE]


def compile_progress_ended(client: LanguageClient) -> bool:
    return any(
        isinstance(value, types.WorkDoneProgressEnd)
        for token, values in client.progress_reports.items()
        if str(token).startswith("derivls-compile-")
        for value in values
    )


async def replace_text(docs: Documents, doc: str, old: str, new: str) -> None:
    """Edit the buffer as an editor does: one incremental change of `old`'s (first) place."""
    start = position_of(docs.texts[doc], old)
    end = position_of(docs.texts[doc], old, offset=len(old))
    docs.edit(doc, start.line, start.character, end.line, end.character, new)


async def test_a_saved_compile_error_lands_on_its_formula_and_edits_are_not_delayed(
    client: LanguageClient, real_files, wheel: Path
):
    torch_include = real_files.packaged.parent.parent / "torch" / "include"
    assert (torch_include / "torch" / "csrc" / "autograd" / "FunctionsManual.h").is_file()
    options = {"derivls": {"compileOnSave": True, "compileTorchInclude": str(torch_include)}}
    await initialize(client, wheel, options=options)
    path = wheel / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"
    docs = Documents(client)
    doc = docs.open(path)
    # (the copied wheel has no C++ headers: a formula-sources-missing note, no problem)
    assert problems(await diagnostics(client, doc, timeout=120)) == []

    # the mistake, typed and saved: the analysis cannot see it
    await replace_text(docs, doc, SHIPPED, MISTAKEN)
    assert problems(await diagnostics(client, doc, timeout=30)) == []
    seeded = docs.texts[doc]
    path.write_text(seeded, encoding="utf-8")
    client.text_document_did_save(types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=doc)))
    await asyncio.sleep(0.5)  # the compile has started (its worker process and compiler take seconds)

    # an edit elsewhere while the compiler runs: its diagnostics come at once, without the compile's
    sent = time.monotonic()
    await replace_text(docs, doc, ELSEWHERE, MISTYPED)
    found = await diagnostics(client, doc, timeout=60)
    latency = time.monotonic() - sent
    assert not compile_progress_ended(client), "the compile ended before the edit: nothing shows edits are not delayed"
    mistyped_line = position_of(docs.texts[doc], MISTYPED).line + 1
    assert ("unknown-name", mistyped_line) in [(str(d.code), d.range.start.line) for d in found]
    assert compile_diagnostics(found) == []
    print(f"edit latency while compiling: {latency * 1000:.0f} ms")
    assert latency < EDIT_LATENCY

    # the compiler's error arrives on the mistaken formula (the edit elsewhere does not move or drop it)
    deadline = time.monotonic() + COMPILE_TIMEOUT
    while not compile_diagnostics(client.diagnostics.get(doc, [])):
        assert time.monotonic() < deadline, f"no {SOURCE} diagnostic within {COMPILE_TIMEOUT} s"
        await asyncio.sleep(0.25)
    print(f"compile diagnostics after {time.monotonic() - sent:.1f} s")
    published = client.diagnostics[doc]
    where = position_of(docs.texts[doc], MISTAKEN.strip(), offset=len("self: "))
    compiled = compile_diagnostics(published)
    assert [(d.range.start.line, d.range.start.character) for d in compiled] == [(where.line, where.character)]
    assert compiled[0].severity == types.DiagnosticSeverity.Error
    assert "mul_tensor_backward" in compiled[0].message
    assert [d for d in published if d.source != SOURCE] == [d for d in found if d.source != SOURCE]
    assert compile_progress_ended(client)

    # the entry edited: the compile diagnostic is dropped with the next publish
    await replace_text(docs, doc, MISTAKEN, SHIPPED)
    found = await diagnostics(client, doc, timeout=30)
    assert compile_diagnostics(found) == []
    assert ("unknown-name", mistyped_line) in [(str(d.code), d.range.start.line) for d in found]
