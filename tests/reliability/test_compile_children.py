"""Issue 28, items 2 and 8: the compile worker never imports the workspace, and nothing it starts
outlives the server or leaves a temporary folder or a partial precompiled header behind.

A stand-in compiler (a shell script: `--version`, then the precompiled header, then the units)
records its pid and sleeps at the stage under test, so the test needs no real C++ toolchain and
runs in seconds; the server is started as editors start it, by its executable, in a workspace
folder that holds a `derivls/__init__.py` writing a marker."""

from __future__ import annotations

import os
import tempfile
import time
from pathlib import Path

import pytest

from tests.reliability.conftest import stand_in_torch
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    try:  # a zombie not yet reaped by init counts as gone
        with open(f"/proc/{pid}/stat", encoding="ascii") as f:
            return f.read().split(") ", 1)[1][0] != "Z"
    except OSError:
        return False


def wait_until(predicate, timeout: float) -> bool:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return True
        time.sleep(0.1)
    return predicate()


def work_folders() -> set[str]:
    """derivls's scratch folders (derivls.base.bounded): `derivls-<pid>-*` in the temporary folder ($TMPDIR: the
    workspace fixture gives each test its own)."""
    folder = os.environ.get("TMPDIR") or tempfile.gettempdir()
    return {p for p in os.listdir(folder) if p.startswith("derivls-") and p.split("-")[1].isdigit()}


def save_an_edit(server: RawServer, ws: dict[str, Path]) -> None:
    server.initialize(
        ws["root"],
        options={"compileOnSave": True, "compileCxx": str(ws["cxx"]), "compileTorchInclude": str(ws["include"])},
    )
    text = REAL_DERIVATIVES.read_text(encoding="utf-8")
    doc = server.open(ws["path"], text)
    assert server.diagnostics(doc, timeout=120) is not None
    edited = text.replace("  self: grad.neg()\n", "  self: -grad\n", 1)
    server.notify(
        "textDocument/didChange",
        {"textDocument": {"uri": doc, "version": 2}, "contentChanges": [{"text": edited}]},
    )
    server.notify("textDocument/didSave", {"textDocument": {"uri": doc}})


def compiler_pids(ws: dict[str, Path]) -> list[int]:
    try:
        return [int(line) for line in ws["pids"].read_text().split()]
    except OSError:
        return []


@pytest.mark.parametrize("stage", ["pch", "units"])
def test_the_compile_worker_runs_no_workspace_code_and_nothing_outlives_the_server(workspace, monkeypatch, stage):
    monkeypatch.setenv("STAGE", stage)
    before = work_folders()
    with RawServer(cwd=workspace["root"]) as server:
        save_an_edit(server, workspace)
        assert wait_until(lambda: compiler_pids(workspace), 120), server.stderr_text()[-2000:]
        if stage == "units":
            assert work_folders() - before  # the worker's temporary folder exists while it compiles
        server.close()
    assert wait_until(lambda: not any(alive(pid) for pid in compiler_pids(workspace)), 10)
    assert not workspace["marker"].exists()
    assert work_folders() - before == set()
    assert list(workspace["cache"].rglob("*.gch.*.tmp")) == []


FAKE_PYTHON = """#!/bin/sh
# a stand-in for a Python with torch 2.13: where its torch is, and a torch child that records its pid
for a in "$@"; do
  if [ "$a" = "-c" ]; then echo "$TORCH_FOLDER"; exit 0; fi
done
echo $$ >> "$PIDS"
exec sleep 300
"""


def test_a_gradcheck_run_its_compiler_and_its_torch_child_do_not_outlive_the_server(workspace, monkeypatch):
    monkeypatch.setenv("STAGE", "pch")
    python = stand_in_torch(workspace, monkeypatch, FAKE_PYTHON)
    with RawServer(cwd=workspace["root"]) as server:
        server.initialize(
            workspace["root"],
            options={
                "trustedWorkspace": True,
                "gradcheckPython": str(python),
                "compileCxx": str(workspace["cxx"]),
                "compileTorchInclude": str(workspace["include"]),
            },
        )
        doc = server.open(workspace["path"], REAL_DERIVATIVES.read_text(encoding="utf-8"))
        assert server.diagnostics(doc, timeout=120) is not None
        line = REAL_DERIVATIVES.read_text(encoding="utf-8").splitlines().index("- name: acos(Tensor self) -> Tensor")
        answer = server.call("workspace/executeCommand", {"command": "derivls.runGradcheck", "arguments": [doc, line]})
        assert answer.get("result", {}).get("started") is True, answer
        # the torch child (started beside the compile) and the compiler of the precompiled header
        assert wait_until(lambda: len(compiler_pids(workspace)) >= 2, 120), server.stderr_text()[-2000:]
        server.close()
    assert wait_until(lambda: not any(alive(pid) for pid in compiler_pids(workspace)), 10)
    assert not workspace["marker"].exists()
    assert list(workspace["cache"].rglob("*.gch.*.tmp")) == []


def test_a_sigterm_to_check_compile_kills_its_compilers_and_removes_its_temporary_folder(workspace, monkeypatch):
    # (a CI job cancelled, a pre-commit hook stopped: the runner sends SIGTERM, not a kill -9)
    import signal
    import subprocess
    import sys

    monkeypatch.setenv("STAGE", "units")
    workspace["path"].write_text(REAL_DERIVATIVES.read_text(encoding="utf-8"), encoding="utf-8")
    before = work_folders()
    args = ["--compile", "--cxx", str(workspace["cxx"]), "--torch-include", str(workspace["include"])]
    proc = subprocess.Popen(
        [sys.executable, "-m", "derivls", "check", str(workspace["path"]), *args],
        cwd=workspace["root"].parent,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    try:
        assert wait_until(lambda: compiler_pids(workspace) or proc.poll() is not None, 120)
        assert proc.poll() is None, proc.stderr.read().decode()[-2000:] if proc.stderr else ""
        assert work_folders() - before  # (its scratch folder, while the compilers run)
        proc.send_signal(signal.SIGTERM)
        assert proc.wait(timeout=30) == 128 + signal.SIGTERM
    finally:
        proc.kill()
        proc.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in compiler_pids(workspace)), 10)
    assert work_folders() - before == set()
    assert list(workspace["cache"].rglob("*.gch.*.tmp")) == []
