"""The server gives empty and broken inputs the build's answer, once (issue 49, item 3), as `check` does
(tests/unit/test_empty_inputs.py)."""

from __future__ import annotations

import pytest
import pytest_lsp
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize

pytestmark = pytest.mark.asyncio(loop_scope="function")


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def test_an_empty_tags_yaml_is_one_native_unreadable(client, real_files, tmp_path):
    """Not one error per function that has tags (117 errors and 375 warnings on the real file)."""
    (tmp_path / "tags.yaml").write_text("")
    options = {"nativeFunctions": str(real_files.native), "tags": str(tmp_path / "tags.yaml")}
    await initialize(client, tmp_path, options=options)
    doc = Documents(client).open(tmp_path / "derivatives.yaml", real_files.derivatives.read_text())
    found = await diagnostics(client, doc, timeout=120)
    assert [(d.code, d.range.start.line) for d in found] == [("native-unreadable", 0)]
    assert "tags.yaml" in found[0].message


async def test_a_derivatives_yaml_of_only_a_comment_is_the_loaders_error(client, real_files, tmp_path):
    options = {"nativeFunctions": str(real_files.native), "tags": str(real_files.tags)}
    await initialize(client, tmp_path, options=options)
    doc = Documents(client).open(tmp_path / "derivatives.yaml", "# nothing yet\n")
    found = await diagnostics(client, doc, timeout=120)
    assert [(d.code, d.range.start.line) for d in found] == [("not-a-list", 0)]
