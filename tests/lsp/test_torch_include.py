"""The `torchInclude` setting: a torch `include` folder where the formula checks find the headers a workspace's
tree lacks (a torchgen/packaged copied without the torch/ a wheel has beside it), as `check --torch-include`."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CONFIG, FIXTURES, PACKAGED, Documents, diagnostics, initialize, status

INCLUDE = FIXTURES / "packaged" / "torch" / "include"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture
def copied(tmp_path: Path) -> Path:
    """torchgen/packaged alone, its `abs` backward formula misspelling `self`."""
    packaged = tmp_path / "torchgen" / "packaged"
    shutil.copytree(PACKAGED, packaged)
    path = packaged / "autograd" / "derivatives.yaml"
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    return path


def codes(found: list[types.Diagnostic]) -> set[str]:
    return {str(d.code) for d in found}


async def test_without_torch_include_the_names_go_unchecked_and_a_note_says_so(client: LanguageClient, copied: Path):
    await initialize(client, copied.parents[3])
    found = await diagnostics(client, Documents(client).open(copied), timeout=120)
    assert "formula-sources-missing" in codes(found) and "formula-unknown-name" not in codes(found)


async def test_the_torch_include_setting_gives_the_name_checks_their_headers(client: LanguageClient, copied: Path):
    await initialize(client, copied.parents[3], options={"derivls": {"torchInclude": str(INCLUDE)}})
    found = await diagnostics(client, Documents(client).open(copied), timeout=120)
    assert [(d.range.start.line, str(d.code)) for d in found if d.severity == types.DiagnosticSeverity.Error] == [
        (3, "formula-unknown-name")
    ]
    assert "formula-sources-missing" not in codes(found)
    assert (await status(client)).settings.torchInclude == str(INCLUDE)
