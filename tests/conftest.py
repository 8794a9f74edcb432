"""Shared test fixtures: where the reference files of the installed torch wheel live."""

from __future__ import annotations

import atexit
import importlib.util
import os
import shutil
import tempfile
from pathlib import Path

import pytest

FIXTURES = Path(__file__).parent / "fixtures"

# The persistent cache (native indexes, entry results) of this test run, and of the CLIs and servers it
# spawns: one fresh folder, so no test reads what another run or the user's derivls wrote, and the
# user's cache folder is left alone.
if "DERIVLS_CACHE_DIR" not in os.environ:
    os.environ["DERIVLS_CACHE_DIR"] = _cache_dir = tempfile.mkdtemp(prefix="derivls-test-cache-")

    def _remove_cache_dir(folder: str = _cache_dir) -> None:
        from derivls.base.writebehind import wait_for_writer

        wait_for_writer(Path(folder))  # a check's detached cache writer may still be at work
        shutil.rmtree(folder, True)

    atexit.register(_remove_cache_dir)


def _packaged_dir() -> Path | None:
    # find_spec does not import torchgen, so collecting tests stays cheap.
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


PACKAGED = _packaged_dir()


class RealFiles:
    """The real derivatives.yaml / native_functions.yaml / tags.yaml shipped in the torch wheel."""

    def __init__(self, packaged: Path) -> None:
        self.packaged = packaged
        self.derivatives = packaged / "autograd" / "derivatives.yaml"
        self.native = packaged / "ATen" / "native" / "native_functions.yaml"
        self.tags = packaged / "ATen" / "native" / "tags.yaml"


@pytest.fixture(scope="session")
def real_files() -> RealFiles:
    if PACKAGED is None:
        pytest.fail("torch==2.13.0 must be installed for the parity tests (pip install -e '.[test]')")
    return RealFiles(PACKAGED)


@pytest.fixture(scope="session")
def legacy_dir() -> Path:
    return FIXTURES / "legacy-2021"


@pytest.fixture(autouse=True)
def _cache_on_for_each_test(monkeypatch: pytest.MonkeyPatch) -> None:
    """`--no-cache` in an in-process `cli.main` turns this process's cache off (project.disable_cache):
    each test starts with it on again, whatever ran before."""
    from derivls.project import opener as project

    monkeypatch.setattr(project, "_default_cache", None)
