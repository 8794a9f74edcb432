"""The .vsix carries its server (issue 27): a Python with nothing installed (`python -m venv
--without-pip`) plus the files of the built .vsix serves LSP, started as the extension starts it
(`<python> -I bundled/derivls_server.py serve` in the extension's folder)."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.vsix import built_vsix, manifest_version, unpack
from tests.reliability.rawlsp import RawServer

pytestmark = pytest.mark.editors

ABS = "- name: abs(Tensor self) -> Tensor"
SEEDED = "  self: grads[0] * self.sgn()"  # abs has one output: only grads[0] may be named, and it is `grad`
PYTHONS = {"3.10": "/root/.pyenv/versions/3.10.13/bin/python3.10"}  # the oldest Python derivls supports


def bare_python(folder: Path, base: str = sys.executable) -> Path:
    subprocess.run([base, "-m", "venv", "--without-pip", str(folder)], check=True, timeout=120)
    python = folder / ("Scripts/python.exe" if sys.platform == "win32" else "bin/python")
    for module in ("derivls", "pygls", "lsprotocol", "yaml", "attrs", "cattrs"):
        run = subprocess.run([str(python), "-I", "-c", f"import {module}"], capture_output=True, cwd=folder)
        assert run.returncode != 0, f"{python} has {module}: the test needs a Python without it"
    return python


def wheel_workspace(root: Path, real_files) -> Path:
    packaged = root / "torchgen" / "packaged"
    (packaged / "ATen" / "native").mkdir(parents=True)
    (packaged / "autograd").mkdir(parents=True)
    (packaged / "ATen" / "native" / "native_functions.yaml").write_bytes(real_files.native.read_bytes())
    (packaged / "ATen" / "native" / "tags.yaml").write_bytes(real_files.tags.read_bytes())
    lines = real_files.derivatives.read_text(encoding="utf-8").splitlines(keepends=True)
    at = next(i for i, line in enumerate(lines) if line.startswith(ABS))
    assert lines[at + 1] == "  self: grad * self.sgn()\n"
    lines[at + 1] = SEEDED + "\n"
    derivatives = packaged / "autograd" / "derivatives.yaml"
    derivatives.write_text("".join(lines), encoding="utf-8")
    return derivatives


@pytest.fixture(scope="module")
def extension(tmp_path_factory) -> Path:
    return unpack(built_vsix(), tmp_path_factory.mktemp("vsix"))


def serve_seeded_file(python: Path, extension: Path, tmp_path: Path, real_files) -> tuple[dict, dict, str]:
    derivatives = wheel_workspace(tmp_path / "ws", real_files)
    launcher = extension / "bundled" / "derivls_server.py"
    with RawServer(cwd=extension, command=(str(python), "-I", str(launcher)), args=("serve",)) as server:
        init = server.initialize(tmp_path / "ws")
        doc = server.open(derivatives)
        published = server.diagnostics(doc, timeout=180)
        stderr = server.stderr_text()
    assert published is not None, stderr
    return init, published, derivatives.read_text(encoding="utf-8")


def seeded_diagnostic(published: dict, text: str) -> dict:
    line = text.splitlines().index(SEEDED)
    found = [d for d in published["diagnostics"] if d["range"]["start"]["line"] == line]
    assert found, published["diagnostics"][:5]
    return found[0]


def test_vsix_holds_the_server_and_pure_python_libraries(extension: Path):
    libs = extension / "bundled" / "libs"
    for package in ("derivls", "pygls", "lsprotocol", "yaml", "attrs", "cattrs", "exceptiongroup"):
        assert (libs / package).is_dir(), package
    assert (libs / "typing_extensions.py").is_file()
    native = [p.name for p in libs.rglob("*") if p.suffix in (".so", ".pyd", ".dylib")]
    assert native == [], "pure Python only: one .vsix for every platform"
    assert not list(libs.rglob("__pycache__")), "no byte code in the .vsix"


def test_a_python_with_nothing_installed_serves_the_seeded_grads0_diagnostic(extension, tmp_path, real_files):
    python = bare_python(tmp_path / "venv")
    init, published, text = serve_seeded_file(python, extension, tmp_path, real_files)
    assert init["result"]["serverInfo"] == {"name": "derivls", "version": manifest_version()}
    diagnostic = seeded_diagnostic(published, text)
    assert "grads[0]" in diagnostic["message"], diagnostic
    assert diagnostic["severity"] == 1, diagnostic


@pytest.mark.skipif(not Path(PYTHONS["3.10"]).exists(), reason="Python 3.10 is not on this machine")
def test_python_3_10_with_nothing_installed_serves_it_too(extension, tmp_path, real_files):
    """cattrs needs exceptiongroup on 3.10: the .vsix carries it."""
    python = bare_python(tmp_path / "venv", PYTHONS["3.10"])
    _, published, text = serve_seeded_file(python, extension, tmp_path, real_files)
    assert "grads[0]" in seeded_diagnostic(published, text)["message"]


def test_the_bundled_copy_wins_over_a_derivls_installed_in_that_python(extension):
    """This test's own Python has derivls installed (editable): the launcher imports the bundled one."""
    launcher = extension / "bundled" / "derivls_server.py"
    run = subprocess.run(
        [sys.executable, "-I", "-v", str(launcher), "--version"], cwd=extension, capture_output=True, text=True
    )
    assert run.stdout.strip() == f"derivls {manifest_version()}", run.stderr[-2000:]
    loaded = re.findall(r"^# code object from '?(.+?/derivls/[^']+\.py)'?$", run.stderr, re.M)
    loaded += re.findall(r"^# (?:\S+\.pyc) matches (.+?/derivls/\S+\.py)$", run.stderr, re.M)
    assert loaded, run.stderr[-2000:]
    libs = str(launcher.parent / "libs")
    assert all(path.startswith(libs) for path in loaded), [p for p in loaded if not p.startswith(libs)][:3]


def test_an_old_python_gets_a_clear_message(extension, tmp_path):
    old = Path("/root/.pyenv/versions/3.9.18/bin/python3.9")
    if not old.exists():
        pytest.skip("no Python 3.9 on this machine")
    run = subprocess.run(
        [str(old), "-I", str(extension / "bundled" / "derivls_server.py"), "serve"],
        cwd=extension,
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 3
    assert run.stderr.startswith("derivls needs Python 3.10 or newer;"), run.stderr


def test_the_workspace_never_enters_sys_path(extension, tmp_path):
    """Run from the workspace folder itself (the extension uses its own folder), `-I` and the launcher keep it off."""
    launcher = extension / "bundled" / "derivls_server.py"
    workspace = tmp_path / "ws"
    (workspace / "derivls").mkdir(parents=True)
    (workspace / "derivls" / "__init__.py").write_text("raise SystemExit('workspace code ran')\n")
    (workspace / "yaml.py").write_text("raise SystemExit('workspace code ran')\n")
    run = subprocess.run(
        [sys.executable, "-I", str(launcher), "--version"], cwd=workspace, capture_output=True, text=True, check=False
    )
    assert run.returncode == 0 and "workspace code ran" not in run.stderr, run.stderr
    # The same folder on sys.path does run it: the test can fail.
    shadowed = subprocess.run([sys.executable, "-c", "import yaml"], cwd=workspace, capture_output=True, text=True)
    assert "workspace code ran" in shadowed.stderr
