"""Puts the derivls server into the extension: `bundled/libs` gets this repository's `derivls` package
and its runtime dependencies as pure Python, so one .vsix serves every platform with any Python >= 3.10
(the layout of the Python-tools extension template: `bundled/libs`, started by `bundled/derivls_server.py`).

- derivls: copied from the repository (no byte code);
- pygls, lsprotocol, attrs, cattrs, typing_extensions, exceptiongroup (cattrs needs it on 3.10): their
  `py3-none-any` wheels at the versions of `bundled/requirements.txt`, unpacked with their licenses;
- PyYAML: its package without the C extension (derivls reads the hot path with its own YAML reader;
  PyYAML falls back to its pure-Python loader when `_yaml` is absent).

The versions are pinned in bundled/requirements.txt; the wheels come through `pip download` (its cache
first). Fails when package.json's version is not derivls's `__version__` (the one version source).

    python3 bundle_server.py            # from editors/vscode (npm run bundle does this)
"""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import zipfile
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
BUNDLED = HERE / "bundled"
LIBS = BUNDLED / "libs"
REQUIREMENTS = BUNDLED / "requirements.txt"
LAUNCHER = BUNDLED / "derivls_server.py"
PURE_PYTHON_VERSION = "3.10"  # the oldest Python derivls supports: its markers pick the wheels (exceptiongroup)


def derivls_version() -> str:
    text = (REPO / "derivls" / "__init__.py").read_text(encoding="utf-8")
    found = re.search(r'^__version__ = "([^"]+)"', text, re.M)
    if found is None:
        raise SystemExit("bundle_server: no __version__ in derivls/__init__.py")
    return found.group(1)


def check_versions() -> str:
    version = derivls_version()
    manifest = json.loads((HERE / "package.json").read_text(encoding="utf-8"))["version"]
    if manifest != version:
        raise SystemExit(
            f"bundle_server: editors/vscode/package.json has version {manifest}, derivls/__init__.py {version}:"
            " set package.json's to derivls's (one version for the package, the extension and its bundled server)"
        )
    return version


def requirements() -> tuple[list[str], list[str]]:
    """(pure wheels, PyYAML) pins from bundled/requirements.txt."""
    pure, yaml = [], []
    for line in REQUIREMENTS.read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            (yaml if line.lower().startswith("pyyaml") else pure).append(line)
    return pure, yaml


def pip_download(dest: Path, pins: list[str], *options: str) -> None:
    argv = [sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--dest", str(dest), *options, *pins]
    print(f"bundle_server: pip download {' '.join(pins)}", flush=True)
    subprocess.run(argv, check=True)


def unpack(wheel: Path, target: Path, *, skip: re.Pattern[str] | None = None) -> None:
    with zipfile.ZipFile(wheel) as archive:
        for name in archive.namelist():
            if skip is not None and skip.search(name):
                continue
            if name.endswith("/RECORD"):  # its hashes would not match what was left out
                continue
            archive.extract(name, target)


def copy_derivls(target: Path) -> None:
    shutil.copytree(REPO / "derivls", target / "derivls", ignore=shutil.ignore_patterns("__pycache__", "*.pyc"))


# PyYAML's C extension and its shim package; yaml/__init__.py falls back to the pure loader without them.
YAML_NATIVE = re.compile(r"(^_yaml/|\.so$|\.pyd$|\.dylib$)")


def bundle() -> Path:
    version = check_versions()
    pure, yaml = requirements()
    shutil.rmtree(LIBS, ignore_errors=True)
    LIBS.mkdir(parents=True)
    with tempfile.TemporaryDirectory(prefix="derivls-bundle-") as tmp:
        wheels = Path(tmp)
        pip_download(
            wheels,
            pure,
            "--only-binary=:all:",
            "--platform",
            "any",
            "--implementation",
            "py",
            "--abi",
            "none",
            "--python-version",
            PURE_PYTHON_VERSION,
        )
        # Any platform's PyYAML wheel holds the same pure-Python package beside its extension.
        pip_download(wheels, yaml, "--only-binary=:all:")
        for wheel in sorted(wheels.glob("*.whl")):
            is_yaml = wheel.name.lower().startswith("pyyaml-")
            if not is_yaml and not wheel.name.endswith("-none-any.whl"):
                raise SystemExit(f"bundle_server: {wheel.name} is not pure Python")
            unpack(wheel, LIBS, skip=YAML_NATIVE if is_yaml else None)
    copy_derivls(LIBS)
    leftovers = [p for p in LIBS.rglob("*") if p.suffix in (".so", ".pyd", ".dylib", ".pyc")]
    if leftovers:
        raise SystemExit(f"bundle_server: not pure Python: {leftovers[:5]}")
    check = subprocess.run(
        [sys.executable, "-I", "-B", str(LAUNCHER), "--version"], capture_output=True, text=True, cwd=HERE, check=False
    )
    if check.returncode != 0 or check.stdout.strip() != f"derivls {version}":
        raise SystemExit(f"bundle_server: the bundled server says {check.stdout!r} {check.stderr[-2000:]!r}")
    for cache in list(LIBS.rglob("__pycache__")):  # no byte code in the .vsix (the user's Python writes its own)
        shutil.rmtree(cache)
    files = sum(1 for p in LIBS.rglob("*") if p.is_file())
    print(f"bundle_server: {LIBS.relative_to(HERE)}: derivls {version} and {len(pure) + len(yaml)} libraries, {files} files")
    return LIBS


if __name__ == "__main__":
    bundle()
