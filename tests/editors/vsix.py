"""The extension's .vsix as the tests use it: built (editors/vscode: npm ci, npm run package, which
bundles the server with bundle_server.py) when a source is newer, and unpacked."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "editors" / "vscode"
VSIX = EXTENSION_DIR / "derivls.vsix"


def sources() -> list[Path]:
    """What goes into the .vsix: the extension's code and manifest, the launcher, the bundler, derivls."""
    return [
        *(EXTENSION_DIR / "src").rglob("*.ts"),
        EXTENSION_DIR / "package.json",
        EXTENSION_DIR / "bundle_server.py",
        *(EXTENSION_DIR / "bundled").glob("*.*"),
        *(REPO / "derivls").rglob("*.py"),
    ]


def is_fresh() -> bool:
    if not VSIX.exists():
        return False
    built = VSIX.stat().st_mtime
    return all(s.stat().st_mtime <= built for s in sources())


def _run(argv: list[str], log: Path | None) -> None:
    env = {**os.environ, "PYTHON": sys.executable}  # the bundler's pip
    proc = subprocess.run(
        argv, cwd=EXTENSION_DIR, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=1800
    )
    if log is not None:
        with open(log, "a", encoding="utf-8") as out:
            out.write(f"$ {' '.join(argv)}\n{proc.stdout}")
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({proc.returncode}) in {EXTENSION_DIR}:\n{proc.stdout[-4000:]}")


def built_vsix(log: Path | None = None) -> Path:
    """editors/vscode/derivls.vsix, rebuilt when a source is newer (node 20 and npm needed)."""
    if not is_fresh():
        if shutil.which("node") is None or shutil.which("npm") is None:
            pytest.fail("node 20 and npm are needed to build the extension (editors/vscode/ci.sh)")
        if not (EXTENSION_DIR / "node_modules").is_dir():
            _run(["npm", "ci", "--no-audit", "--no-fund"], log)
        _run(["npm", "run", "package"], log)
    return VSIX


def unpack(vsix: Path, target: Path) -> Path:
    """The extension's folder (the .vsix's `extension/`), as VS Code installs it."""
    with zipfile.ZipFile(vsix) as archive:
        archive.extractall(target)
    return target / "extension"


def manifest_version() -> str:
    return json.loads((EXTENSION_DIR / "package.json").read_text(encoding="utf-8"))["version"]
