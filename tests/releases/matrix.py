"""What the release matrix runs: a release's own torchgen (reference) and derivls's CLI, on that release's files."""

from __future__ import annotations

import hashlib
import importlib.util
import json
import os
import re
import subprocess
import sys
from functools import cache
from pathlib import Path
from typing import Any

from tests.releases import fetch

REPO = Path(__file__).resolve().parents[2]
_REFERENCE_SOURCES = (REPO / "tests" / "releases" / "reference.py", REPO / "tests" / "parity" / "torchgen_reference.py")


def installed_site() -> Path | None:
    """site-packages of the installed torch (found without importing it)."""
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        return None
    return Path(list(spec.submodule_search_locations)[0]).parent


def installed_version() -> str | None:
    site = installed_site()
    if site is None:
        return None
    try:
        text = (site / "torch" / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"""__version__\s*=\s*['"]([\d.]+)""", text)
    return m.group(1) if m else None


def release_root(version: str) -> Path:
    """A folder holding that release's torchgen/ and torch/ (version.py, the headers): the installed
    torch's site-packages when it is that release, else the release cache (fetched if missing)."""
    if installed_version() == version:
        site = installed_site()
        assert site is not None
        return site
    return fetch.ensure(version)


class Release:
    def __init__(self, version: str) -> None:
        self.version = version
        self.root = release_root(version)
        packaged = self.root / "torchgen" / "packaged"
        self.derivatives = packaged / "autograd" / "derivatives.yaml"
        self.native = packaged / "ATen" / "native" / "native_functions.yaml"
        self.tags = packaged / "ATen" / "native" / "tags.yaml"
        self.functions_h = self.root / "torch" / "include" / "torch" / "csrc" / "autograd" / "generated" / "Functions.h"


def _reference_key(release: Release) -> str:
    h = hashlib.sha256()
    for path in (*_REFERENCE_SOURCES, release.derivatives, release.native, release.tags):
        h.update(path.read_bytes())
    for path in sorted((release.root / "torchgen").rglob("*.py")):
        h.update(path.name.encode())
        h.update(str(path.stat().st_size).encode())
    return h.hexdigest()[:16]


@cache
def reference(version: str) -> dict[str, Any]:
    """That release's own load_derivatives + process_function output (cached by content in the release cache)."""
    release = Release(version)
    cached = fetch.cache_dir() / "references" / f"{version}-{_reference_key(release)}.json"
    if cached.is_file():
        return json.loads(cached.read_text(encoding="utf-8"))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([str(release.root), str(REPO)]))
    run = subprocess.run(
        [sys.executable, "-m", "tests.releases.reference"], capture_output=True, text=True, env=env, cwd=REPO
    )
    assert run.returncode == 0, f"torchgen {version} failed:\n{run.stderr[-3000:]}"
    result = json.loads(run.stdout)
    assert Path(result["torchgen"]).resolve() == (release.root / "torchgen").resolve(), result["torchgen"]
    cached.parent.mkdir(parents=True, exist_ok=True)
    cached.write_text(run.stdout, encoding="utf-8")
    return result


def derivls(*args: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO))
    return subprocess.run([sys.executable, "-m", "derivls", *args], capture_output=True, text=True, env=env)
