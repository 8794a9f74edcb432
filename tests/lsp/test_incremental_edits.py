"""The server's incremental analysis on the real derivatives.yaml: what it publishes after told edits
is what a from-scratch analysis of the same text gives (issue 49)."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer
from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize

pytestmark = pytest.mark.asyncio(loop_scope="module")


@pytest_lsp.fixture(config=CONFIG, scope="module")
async def client(lsp_client: LanguageClient, real_files):
    await initialize(lsp_client, real_files.packaged)
    yield
    await lsp_client.shutdown_session()


async def test_enter_before_a_wrong_name_line_publishes_the_diagnostic_on_the_name(client, real_files):
    """A `name:` line replaced by one naming no function, then Enter at its start: the
    `schema-not-found` moves down with the name (it stayed as a range on the blank line)."""
    docs = Documents(client)
    doc = docs.open(real_files.derivatives)
    assert await diagnostics(client, doc, timeout=120) == []
    text = docs.texts[doc]
    line = text[: text.index("- name: acos(Tensor self) -> Tensor")].count("\n")
    docs.edit(doc, line, 8, line, 12, "acoz")
    [wrong] = await diagnostics(client, doc)
    assert (wrong.code, wrong.range.start.line, wrong.range.start.character) == ("schema-not-found", line, 8)
    docs.edit(doc, line, 0, line, 0, "\n")
    [moved] = await diagnostics(client, doc)
    assert moved.code == "schema-not-found"
    start, end = moved.range.start, moved.range.end
    assert (start.line, start.character, end.line, end.character) == (line + 1, 8, line + 1, 35)
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    [scratch] = DocumentAnalyzer(index).analyse(docs.texts[doc]).diagnostics  # the same, from scratch
    assert (scratch.span.line, scratch.span.column, scratch.span.end_line, scratch.span.end_column) == (
        line + 1,
        8,
        line + 1,
        35,
    )
