"""Shared measures of the reliability suite: the real file's cost (the yardstick every bound is a
ratio of), CLI runs with their peak RSS, and servers opened on a generated input."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from derivls.compile.toolchain import REQUIRED_HEADERS
from tests.reliability import rawlsp
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE, packaged_layout

MAX_RSS_MB = 300
NOISE = 3.0  # seconds of slack on every time bound: CI machines are shared (a bomb took > 60 s before)


@dataclass(frozen=True)
class Run:
    returncode: int
    stdout: str
    stderr: str
    seconds: float
    peak_mb: float


def _high_water_kb(pid: int) -> int:
    """VmHWM: the process's peak RSS so far (wait4's ru_maxrss would count the forking pytest's too)."""
    try:
        with open(f"/proc/{pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmHWM:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def run_cli(*args: str, cwd: Path | None = None, timeout: float = 600) -> Run:
    """`python -m derivls ARGS` with its wall time and peak RSS (sampled every 10 ms until it exits)."""
    started = time.monotonic()
    out_path = Path(os.environ.get("TMPDIR", "/tmp")) / f"derivls-cli-{os.getpid()}.out"
    with open(out_path, "w+b") as out, open(str(out_path) + ".err", "w+b") as err:
        proc = subprocess.Popen([sys.executable, "-m", "derivls", *args], stdout=out, stderr=err, cwd=cwd)
        deadline = started + timeout
        peak_kb = 0
        while True:
            peak_kb = max(peak_kb, _high_water_kb(proc.pid))
            pid, status, _ = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            if time.monotonic() > deadline:
                proc.kill()
                pid, status, _ = os.wait4(proc.pid, 0)
                break
            time.sleep(0.01)
        seconds = time.monotonic() - started
        proc.returncode = os.waitstatus_to_exitcode(status)
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read().decode(errors="replace"), err.read().decode(errors="replace")
    os.unlink(out_path)
    os.unlink(str(out_path) + ".err")
    return Run(proc.returncode, stdout, stderr, seconds, peak_kb / 1024)


@dataclass(frozen=True)
class Yardstick:
    """The real derivatives.yaml's cost: CLI check and server open -> diagnostics, in seconds and per MB."""

    cli_seconds: float
    server_seconds: float
    megabytes: float

    def cli_budget(self, size_bytes: int) -> float:
        """2x the real file's check time per MB of input; for inputs smaller than the real file, 2x
        checking the real file plus NOISE seconds (start-up dominates; the machine is shared)."""
        return 2 * max(self.cli_seconds, self.cli_seconds / self.megabytes * size_bytes / 1e6) + NOISE

    def server_budget(self, size_bytes: int) -> float:
        return 2 * max(self.server_seconds, self.server_seconds / self.megabytes * size_bytes / 1e6) + NOISE


@pytest.fixture(scope="session")
def yardstick(tmp_path_factory: pytest.TempPathFactory) -> Yardstick:
    cli = run_cli("check", str(REAL_DERIVATIVES), "--native", str(REAL_NATIVE))
    assert cli.returncode == 0, cli.stdout + cli.stderr
    root = tmp_path_factory.mktemp("yardstick")
    path = packaged_layout(root)
    with RawServer(cwd=root) as server:
        server.initialize(root)
        started = time.monotonic()
        doc = server.open(path, REAL_DERIVATIVES.read_text(encoding="utf-8"))
        assert server.diagnostics(doc, timeout=120) is not None
        server_seconds = time.monotonic() - started
        server.close()
    stick = Yardstick(cli.seconds, server_seconds, REAL_DERIVATIVES.stat().st_size / 1e6)
    print(
        f"\nyardstick: real file {stick.megabytes:.2f} MB: check {stick.cli_seconds:.2f} s, "
        f"server open->diagnostics {stick.server_seconds:.2f} s"
    )
    return stick


REQUESTS = ("textDocument/documentSymbol", "textDocument/inlayHint", "textDocument/codeLens")


def request_params(method: str, doc: str) -> dict[str, object]:
    params: dict[str, object] = {"textDocument": {"uri": doc}}
    if method == "textDocument/inlayHint":
        params["range"] = {"start": {"line": 0, "character": 0}, "end": {"line": 10**6, "character": 0}}
    return params


def open_and_query(root: Path, text: str, budget: float) -> tuple[dict[str, object], RawServer]:
    """Open `text` as a packaged-layout derivatives.yaml: its diagnostics within `budget` seconds, then
    each of REQUESTS answered within `budget`. Returns the published params and the (open) server."""
    path = packaged_layout(root)
    server = RawServer(cwd=root)
    server.initialize(root)
    started = time.monotonic()
    doc = server.open(path, text)
    published = server.diagnostics(doc, timeout=budget)
    assert published is not None, f"no diagnostics within {budget:.0f} s"
    assert time.monotonic() - started <= budget
    for method in REQUESTS:
        started = time.monotonic()
        answer = server.response(server.request(method, request_params(method, doc)), timeout=budget)
        assert answer is not None and "result" in answer, f"{method}: no answer within {budget:.0f} s"
        assert len(answer["result"] or []) <= 5_000
    return published, server


# -- a workspace whose compiler is a stand-in (tests of the processes derivls starts) -------------------

# a stand-in compiler's start: `--version`, then its arguments read (`-o OUT`, a precompiled header or not)
CXX_PREAMBLE = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fakecxx 1.0"; exit 0; fi
out=""; prev=""; header=no
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  if [ "$a" = "c++-header" ]; then header=yes; fi
  prev="$a"
done
"""

FAKE_CXX = (
    CXX_PREAMBLE
    + """if [ "$header" = yes ]; then
  echo partial > "$out"
  if [ "$STAGE" = pch ]; then echo $$ >> "$PIDS"; exec sleep 300; fi
  exit 0
fi
echo $$ >> "$PIDS"
exec sleep 300
"""
)


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch) -> dict[str, Path]:
    root = tmp_path / "ws"
    root.mkdir()
    path = packaged_layout(root)
    (path.parent / "templates").symlink_to(REAL_DERIVATIVES.parent / "templates", target_is_directory=True)
    marker = tmp_path / "WORKSPACE-CODE-RAN"
    (root / "derivls").mkdir()
    (root / "derivls" / "__init__.py").write_text(f"open({str(marker)!r}, 'w').close()\n")
    include = tmp_path / "include"
    for header in REQUIRED_HEADERS:
        (include / header).parent.mkdir(parents=True, exist_ok=True)
        (include / header).touch()
    cxx = tmp_path / "bin" / "fakecxx"
    cxx.parent.mkdir()
    cxx.write_text(FAKE_CXX)
    cxx.chmod(0o755)
    cache = tmp_path / "cache"
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(cache))
    # a temporary folder of its own: the scratch folders (derivls-<pid>-*) counted are this test's alone
    (tmp_path / "tmp").mkdir()
    monkeypatch.setenv("TMPDIR", str(tmp_path / "tmp"))
    monkeypatch.setenv("PIDS", str(tmp_path / "pids"))
    # started as an editor starts it: the executable, the workspace as its working folder
    monkeypatch.setattr(rawlsp, "SERVER", [str(Path(sys.executable).parent / "derivls")])
    return {
        "root": root,
        "path": path,
        "marker": marker,
        "include": include,
        "cxx": cxx,
        "cache": cache,
        "pids": tmp_path / "pids",
    }


def stand_in_torch(workspace: dict[str, Path], monkeypatch: pytest.MonkeyPatch, script: str) -> Path:
    """A stand-in Python with torch 2.13 (`script`: what its torch child does) beside the workspace; returns it."""
    torch_folder = workspace["root"].parent / "site" / "torch"
    torch_folder.mkdir(parents=True)
    (torch_folder / "version.py").write_text("__version__ = '2.13.0'\n")
    monkeypatch.setenv("TORCH_FOLDER", str(torch_folder))
    python = workspace["root"].parent / "bin" / "fakepython"
    python.write_text(script)
    python.chmod(0o755)
    return python
