"""The server's cold start uses the persistent entry cache: after its first diagnostics it writes the
entries' results (in the background, into the cache folder, never the workspace), and another
process reads every one of them back."""

from __future__ import annotations

import asyncio
import os
import shutil
import time
from pathlib import Path

import pytest
import pytest_lsp
from pytest_lsp import ClientServerConfig, LanguageClient

from derivls.base.diskcache import DiskCache
from derivls.derivatives.entrycache import EntryCache
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.project import opener as project
from derivls.project.workspace import build_index, discover, make_analyzer, resolve_key
from tests.lsp.conftest import SERVER, Documents, diagnostics, initialize, make_client, uri

pytestmark = pytest.mark.asyncio(loop_scope="module")

CACHE = Path(os.environ["DERIVLS_CACHE_DIR"]) / "server-entry-cache"  # the test session's (tests/conftest.py)


@pytest.fixture(scope="module")
def wheel(real_files, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real files in a wheel's layout at a path of their own: a cache key no other test uses."""
    packaged = tmp_path_factory.mktemp("site") / "torchgen" / "packaged"
    for relative in ("autograd/derivatives.yaml", "ATen/native/native_functions.yaml", "ATen/native/tags.yaml"):
        (packaged / relative).parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(real_files.packaged / relative, packaged / relative)
    return packaged


@pytest_lsp.fixture(
    config=ClientServerConfig(
        server_command=SERVER, client_factory=make_client, server_env={**os.environ, "DERIVLS_CACHE_DIR": str(CACHE)}
    ),
    scope="module",
)
async def client(lsp_client: LanguageClient, wheel: Path):
    await initialize(lsp_client, wheel)
    yield
    await lsp_client.shutdown_session()


def _analyzer(wheel: Path) -> DocumentAnalyzer:
    native = wheel / "ATen" / "native"
    disk = DiskCache(CACHE)
    load = project.index_native(
        str(native / "native_functions.yaml"),
        str(native / "tags.yaml"),
        project.preset_profile("auto", wheel / "autograd" / "derivatives.yaml"),
        project.read_texts(str(native / "native_functions.yaml"), str(native / "tags.yaml")),
        None,
        wheel / "autograd" / "derivatives.yaml",
        disk,
    )
    assert load.index is not None and load.cache_key is not None
    return DocumentAnalyzer(
        load.index,
        load.index.path,
        load.profile,
        EntryCache(disk, load.cache_key, load.index, load.index.path, load.profile),
    )


async def test_the_server_writes_the_entries_after_its_first_diagnostics(client: LanguageClient, wheel: Path):
    derivatives = wheel / "autograd" / "derivatives.yaml"
    before = {p.name for p in wheel.rglob("*")}
    Documents(client).open(derivatives)
    published = await diagnostics(client, uri(derivatives), timeout=120)
    assert [d.code for d in published] == ["formula-sources-missing"]  # no C++ sources in this copy
    analyzer = _analyzer(wheel)
    assert analyzer.store is not None
    written = CACHE / f"{analyzer.store.key}.pickle"
    deadline = time.monotonic() + 60
    while not written.exists() and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert written.exists()
    analysis = analyzer.analyse(derivatives.read_text())
    assert analyzer.store.misses == 0 and analyzer.store.hits > 600  # another process reads all of them
    assert analysis.diagnostics == ()
    assert {p.name for p in wheel.rglob("*")} == before  # nothing written in the workspace


async def test_the_servers_analyzers_have_an_entry_cache_saving_in_the_background(wheel: Path) -> None:
    files = discover(wheel / "autograd" / "derivatives.yaml", None, None)
    key = resolve_key(files)
    assert key is not None
    loaded = build_index(key, 1, None, None, False)
    analyzer = make_analyzer(loaded, files)
    assert analyzer.store is not None and analyzer.store.background
