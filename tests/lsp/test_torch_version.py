"""The server follows the PyTorch release of the workspace's files, or the one the `torchVersion` setting names.

The workspace is an older release's wheel laid out as it is installed (site-packages/torch/version.py
beside site-packages/torchgen/packaged/), copied from the release cache (tests/releases/fetch.py fetches
the release when the cache lacks it). Under the newest rules (2.13+) these files are not usable at all
(native_functions.yaml uses `Dimname`, which 2.13 dropped); under their own release's rules they check clean.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CONFIG, Documents, diagnostics, hover_text, initialize, position_of, status
from tests.releases import fetch

# the release's wheel is fetched (0.5-0.9 GB) when the release cache lacks it: not in the default run
pytestmark = pytest.mark.releases

RELEASE = "2.4.1"
PACKAGED_FILES = ("autograd/derivatives.yaml", "ATen/native/native_functions.yaml", "ATen/native/tags.yaml")
ENTRY = "- name: abs(Tensor self) -> Tensor"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


@pytest.fixture(scope="module")
def release() -> Path:
    return fetch.ensure(RELEASE)


@pytest.fixture
def wheel(tmp_path: Path, release: Path) -> Path:
    """site-packages of an installed torch 2.4.1: torch/version.py and torchgen/packaged/'s three yaml files."""
    site = tmp_path / "site-packages"
    for name in PACKAGED_FILES:
        target = site / "torchgen" / "packaged" / name
        target.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(release / "torchgen" / "packaged" / name, target)
    (site / "torch").mkdir()
    shutil.copyfile(release / "torch" / "version.py", site / "torch" / "version.py")
    return site


def derivatives(site: Path) -> Path:
    return site / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"


def errors(found: list[types.Diagnostic]) -> list[types.Diagnostic]:
    return [d for d in found if d.severity == types.DiagnosticSeverity.Error]


async def name_hover(client: LanguageClient, doc: str, text: str) -> str:
    result = await client.text_document_hover_async(
        types.HoverParams(text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(text, ENTRY, 0, 9))
    )
    return hover_text(result)


def rules_line(hover: str) -> str:
    [line] = [line for line in hover.splitlines() if line.startswith("**Rules:**")]
    return line


async def reconfigure(client: LanguageClient, doc: str, settings: dict[str, object]) -> list[types.Diagnostic]:
    """New `derivls` settings, pulled by the server on didChangeConfiguration; the diagnostics that follow."""
    client.set_configuration(settings, section="derivls")
    client.diagnostics.pop(doc, None)
    client.workspace_did_change_configuration(types.DidChangeConfigurationParams(settings=None))
    return await diagnostics(client, doc, timeout=120)


async def test_an_older_wheel_is_checked_by_its_own_release_rules(client: LanguageClient, wheel: Path):
    await initialize(client, wheel)
    path = derivatives(wheel)
    text = path.read_text(encoding="utf-8")
    doc = Documents(client).open(path)
    found = await diagnostics(client, doc, timeout=120)
    assert errors(found) == []
    version = (wheel / "torch" / "version.py").read_text(encoding="utf-8")
    assert "__version__ = '2.4.1" in version  # what the hover must quote
    hover = await name_hover(client, doc, text)
    assert "`AbsBackward0`" in hover
    assert rules_line(hover).startswith("**Rules:** torchgen 2.4 rules (torch/version.py says 2.4.1")
    info = await status(client)
    assert info.settings.torchVersion is None


async def test_the_torch_version_setting_overrides_detection_and_changes_the_hover(client: LanguageClient, wheel: Path):
    await initialize(client, wheel, options={"derivls": {"torchVersion": "2.5"}})
    path = derivatives(wheel)
    text = path.read_text(encoding="utf-8")
    doc = Documents(client).open(path)
    assert errors(await diagnostics(client, doc, timeout=120)) == []
    assert rules_line(await name_hover(client, doc, text)) == "**Rules:** torchgen 2.5 rules (set to 2.5)"

    # the newest rules re-index the files, which they do not accept as they are (2.13's torchgen refuses
    # what 2.4 allowed: `use_const_ref_for_mutable_tensors` on out= functions, `Dimname`)
    found = await reconfigure(client, doc, {"torchVersion": "2.13"})
    assert rules_line(await name_hover(client, doc, text)) == "**Rules:** torchgen 2.13+ rules (set to 2.13)"
    assert {str(d.code) for d in found} & {"native-unreadable", "native-functions-left-out"}
    assert (await status(client)).settings.torchVersion == "2.13"

    # a value that is not a version is ignored (a warning in the log): the one from initialization stays
    await reconfigure(client, doc, {"torchVersion": "newest"})
    assert rules_line(await name_hover(client, doc, text)) == "**Rules:** torchgen 2.5 rules (set to 2.5)"

    # auto: found from the files again
    found = await reconfigure(client, doc, {"torchVersion": "auto"})
    assert errors(found) == []
    assert "(torch/version.py says 2.4.1" in rules_line(await name_hover(client, doc, text))
    assert (await status(client)).settings.torchVersion is None
