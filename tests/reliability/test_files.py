"""Files that are not regular files, and symlink loops: one clear line or a diagnostic, never a
traceback, never reading forever."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability.conftest import run_cli
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE, packaged_layout


@pytest.fixture
def fifo(tmp_path: Path) -> Path:
    path = tmp_path / "derivatives.yaml"
    os.mkfifo(path)
    return path


@pytest.mark.parametrize("command", ["check", "dump", "codegen"])
def test_dev_zero_is_refused_in_one_line(command: str) -> None:
    run = run_cli(command, "/dev/zero", "--native", str(REAL_NATIVE), timeout=30)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and "/dev/zero" in run.stderr
    assert run.seconds < 15 and run.peak_mb < 100


@pytest.mark.parametrize("command", ["check", "dump", "codegen"])
def test_a_fifo_is_refused_without_blocking(fifo: Path, command: str) -> None:
    run = run_cli(command, str(fifo), "--native", str(REAL_NATIVE), timeout=30)
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert len(run.stderr.strip().splitlines()) == 1 and str(fifo.name) in run.stderr
    assert run.seconds < 15


@pytest.mark.parametrize("what", ["/dev/zero", "fifo", "loop"])
def test_a_native_functions_that_is_not_a_regular_file_is_a_diagnostic(tmp_path: Path, what: str) -> None:
    if what == "fifo":
        native = tmp_path / "native_functions.yaml"
        os.mkfifo(native)
    elif what == "loop":
        native = tmp_path / "native_functions.yaml"
        native.symlink_to(native)
    else:
        native = Path(what)
    run = run_cli("check", str(REAL_DERIVATIVES), "--native", str(native), timeout=30)
    assert "Traceback" not in run.stderr
    assert run.returncode in (1, 2)
    assert run.seconds < 15


def test_a_derivatives_yaml_that_is_a_symlink_loop_is_one_line(tmp_path: Path) -> None:
    path = tmp_path / "derivatives.yaml"
    path.symlink_to(path)
    run = run_cli("check", str(path), "--native", str(REAL_NATIVE))
    assert run.returncode == 2
    assert "Traceback" not in run.stderr
    assert "symlink loop" in run.stderr


def looping_layout(root: Path) -> Path:
    """torchgen/packaged/ATen -> itself, beside a real derivatives.yaml."""
    autograd = root / "torchgen" / "packaged" / "autograd"
    autograd.mkdir(parents=True)
    (root / "torchgen" / "packaged" / "ATen").symlink_to("ATen")
    path = autograd / "derivatives.yaml"
    path.write_text(REAL_DERIVATIVES.read_text(encoding="utf-8"), encoding="utf-8")
    return path


def test_cli_with_a_symlink_loop_in_the_packaged_layout_warns_native_not_found(tmp_path: Path) -> None:
    path = looping_layout(tmp_path)
    run = run_cli("check", str(path))
    assert "Traceback" not in run.stderr
    assert "[native-not-found]" in run.stdout
    assert "ATen/native/native_functions.yaml" in run.stdout


def test_server_with_a_symlink_loop_in_the_packaged_layout_still_publishes(tmp_path: Path) -> None:
    path = looping_layout(tmp_path)
    with RawServer(cwd=tmp_path) as server:
        server.initialize(tmp_path)
        doc = server.open(path)
        published = server.diagnostics(doc, timeout=60)
        assert published is not None
        assert any(d.get("code") == "native-not-found" for d in published["diagnostics"]), published
        assert "result" in server.call("textDocument/documentSymbol", {"textDocument": {"uri": doc}})
        assert "Traceback" not in server.stderr_text()
        server.close()


def test_server_in_a_working_layout_gets_no_native_warning(tmp_path: Path) -> None:
    path = packaged_layout(tmp_path)
    with RawServer(cwd=tmp_path) as server:
        server.initialize(tmp_path)
        doc = server.open(path, REAL_DERIVATIVES.read_text(encoding="utf-8"))
        published = server.diagnostics(doc, timeout=60)
        assert published is not None and published["diagnostics"] == []
        server.close()
