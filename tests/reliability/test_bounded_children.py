"""Issue 34: every compiler and child derivls starts is bounded (time, memory, stdin, TMPDIR), and nothing it
started outlives the server, not even after `kill -9` of the server.

The processes here are stand-ins (shell scripts, `python -c`) so the tests need no C++ toolchain: a stand-in
compiler behaves as g++ does, a driver whose work is done by a child of its own (cc1plus), which killing the
driver alone leaves running under PID 1. The same bounds on the real g++ are in
tests/compile/test_hostile_formulas.py (the compile-limit code on a formula that keeps g++ busy)."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from derivls.base import bounded, children
from derivls.base.bounded import GB, MEMORY, TIME, Limits
from derivls.base.children import set_exit_on_term
from derivls.codes.compile import COMPILE_LIMIT
from derivls.compile.engine import compile_units
from derivls.compile.file_templates import Templates
from derivls.compile.toolchain import REQUIRED_HEADERS, Toolchain
from derivls.compile.units import collect_units
from tests.reliability.conftest import CXX_PREAMBLE, stand_in_torch
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES
from tests.reliability.test_compile_children import FAKE_PYTHON, alive, compiler_pids, wait_until, work_folders


def test_a_process_past_its_wall_clock_bound_is_killed_with_what_it_started(tmp_path: Path):
    pidfile = tmp_path / "grandchild"
    started = time.monotonic()
    done = bounded.run(["sh", "-c", f"sleep 300 & echo $! > {pidfile}; wait"], Limits(1.5, GB), cwd=tmp_path)
    assert done.limit == TIME
    assert time.monotonic() - started < 15
    grandchild = int(pidfile.read_text())
    assert wait_until(lambda: not alive(grandchild), 5)  # (the driver's child: cc1plus for g++)


def test_a_process_past_its_memory_bound_fails_and_the_bound_is_named(tmp_path: Path):
    grow = "x = bytearray(2 * 1024**3)"
    done = bounded.run([sys.executable, "-c", grow], Limits(60, 512 * 2**20), cwd=tmp_path)
    assert done.returncode != 0
    assert done.limit == MEMORY


def test_a_process_spinning_past_its_cpu_bound_dies_even_when_nobody_waits_for_it(tmp_path: Path):
    # the kernel's RLIMIT_CPU: what ends a compiler whose parent was killed -9 before it could kill it
    process = bounded.spawn([sys.executable, "-c", "while True: pass"], Limits(1, GB), cwd=tmp_path)
    assert wait_until(lambda: process.popen.poll() is not None, 20)
    assert process.popen.returncode in (-signal.SIGXCPU, -signal.SIGKILL)
    assert process.limit_hit() == TIME


def test_stdin_is_empty_so_a_read_of_it_cannot_wait_on_an_open_pipe(tmp_path: Path):
    # `#include </proc/self/fd/0>` read the CLI's stdin: while it was an open pipe, the compiler waited for ever
    code = (
        "from derivls.base import bounded; "
        "r = bounded.run(['cat', '/proc/self/fd/0'], bounded.Limits(30, bounded.GB), cwd='/'); "
        "print(r.limit, repr(r.stdout))"
    )
    parent = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    try:
        assert parent.wait(timeout=20) == 0  # (its stdin is still open)
        assert parent.stdout is not None and parent.stdout.read().strip() == "None ''"
    finally:
        parent.kill()
        assert parent.stdin is not None
        parent.stdin.close()


def test_a_childs_temporary_files_land_in_a_scratch_folder_removed_at_the_end(tmp_path: Path):
    script = 'echo "$TMPDIR"; echo x > "$TMPDIR/ccFAKE.s"; mkdir "$TMPDIR/torchinductor_root"'
    done = bounded.run(["sh", "-c", script], Limits(10, GB), cwd=tmp_path)
    folder = Path(done.stdout.strip())
    assert folder == bounded.scratch_folder()
    assert folder.name.startswith(f"derivls-{os.getpid()}-")
    assert (folder / "ccFAKE.s").is_file()
    bounded.remove_scratch()
    assert not folder.exists()


def test_the_scratch_folder_of_a_process_that_is_gone_is_removed_by_the_next_one(tmp_path: Path):
    gone = subprocess.run([sys.executable, "-c", "import os; print(os.getpid())"], capture_output=True, text=True)
    stale = tmp_path / f"derivls-{int(gone.stdout)}-abc123"
    stale.mkdir()
    (stale / "cc1.s").write_text("left by a compiler killed -9")
    mine = tmp_path / f"derivls-{os.getpid()}-live"
    mine.mkdir()
    bounded.remove_stale_scratch(str(tmp_path))
    assert not stale.exists()
    assert mine.exists()


@pytest.mark.parametrize("guarded", [True, False])
def test_a_guarded_process_killed_9_has_its_scratch_folder_removed_at_once(tmp_path: Path, guarded: bool):
    # the server's (bounded.guard_scratch): no atexit runs on a kill -9; an unguarded process's folder waits for
    # the next derivls process (remove_stale_scratch)
    code = (
        "import sys, time\n"
        "from derivls.base import bounded\n"
        f"{'bounded.guard_scratch()' if guarded else 'pass'}\n"
        "print(bounded.scratch_folder(), flush=True)\n"
        "time.sleep(300)\n"
    )
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env)
    folder = Path(process.stdout.readline().strip())  # type: ignore[union-attr]
    assert folder.is_dir() and folder.parent == tmp_path
    process.kill()
    process.wait()
    process.stdout.close()  # type: ignore[union-attr]
    assert wait_until(lambda: not folder.exists(), 10) is guarded


def test_the_scratch_guard_runs_isolated_from_the_root_in_a_session_of_its_own_and_ends_with_its_work(tmp_path: Path):
    code = (
        "import time\n"
        "from derivls.base import bounded\n"
        "bounded.guard_scratch()\n"
        "print(bounded.scratch_folder(), bounded._scratch_guards[0].pid, flush=True)\n"
        "time.sleep(300)\n"
    )
    workspace = tmp_path / "workspace"
    workspace.mkdir()
    env = {**os.environ, "TMPDIR": str(tmp_path)}
    process = subprocess.Popen([sys.executable, "-c", code], stdout=subprocess.PIPE, text=True, env=env, cwd=workspace)
    try:
        folder, pid = process.stdout.readline().split()  # type: ignore[union-attr]
        guard = int(pid)
        assert os.readlink(f"/proc/{guard}/cwd") == "/"
        assert os.getsid(guard) == guard != os.getsid(process.pid)  # not in the server's group: it outlives a kill -9
        argv = Path(f"/proc/{guard}/cmdline").read_bytes().split(b"\0")
        assert argv[1:3] == [b"-I", b"-c"]  # (no workspace, user site or PYTHON* variable reaches it)
    finally:
        process.kill()
        process.wait()
        process.stdout.close()  # type: ignore[union-attr]
    assert wait_until(lambda: not Path(folder).exists(), 10)
    assert wait_until(lambda: not alive(guard), 10)


def test_a_sigterm_while_a_process_is_started_exits_only_once_it_is_registered_so_the_exit_kills_it(monkeypatch):
    # the workers' SIGTERM (set_exit_on_term) raised inside Popen left a compiler in its own group that no
    # kill_all found: after a kill -9 of the server under load, its cc1plus ran on (seen in CI)
    started: list[int] = []

    class SignalledWhileStarting(subprocess.Popen):  # type: ignore[type-arg]
        def __init__(self, *args, **kwargs) -> None:
            super().__init__(*args, **kwargs)
            started.append(self.pid)
            os.kill(os.getpid(), signal.SIGTERM)
            time.sleep(0.2)  # (the handler runs here, before spawn registers the process)

    previous = signal.getsignal(signal.SIGTERM)
    monkeypatch.setattr(bounded.subprocess, "Popen", SignalledWhileStarting)
    set_exit_on_term()
    try:
        with pytest.raises(SystemExit) as exited:
            bounded.spawn(["sleep", "300"], Limits(60, GB), cwd="/")
        assert exited.value.code == 128 + signal.SIGTERM
        assert [p.pid for p in bounded.live()] == started  # registered: the exit's kill_all ends it
    finally:
        monkeypatch.undo()
        signal.signal(signal.SIGTERM, previous)
        bounded.kill_all()
    assert wait_until(lambda: not alive(started[0]), 5)
    bounded.spawn(["true"], Limits(60, GB), cwd="/").wait()  # no exit is left pending for the next start


def test_a_worker_whose_parent_is_gone_exits_when_it_next_polls_even_without_the_signal(monkeypatch):
    monkeypatch.setattr(children, "_watched", os.getppid())
    children.exit_if_orphaned()  # (the parent it watches is alive)
    monkeypatch.setattr(children, "_watched", os.getppid() + 1)
    with pytest.raises(SystemExit) as exited:
        children.exit_if_orphaned()
    assert exited.value.code == 128 + signal.SIGTERM
    monkeypatch.setattr(children, "_watched", None)
    children.exit_if_orphaned()  # (a process die_with_parent was never asked for: the CLI)


def test_a_gradcheck_run_waiting_for_its_child_exits_when_its_own_parent_is_gone(monkeypatch):
    import queue
    import threading

    from derivls.gradcheck import events
    from derivls.gradcheck.session import Connection

    reader = events.EventReader.__new__(events.EventReader)  # (no child: its queue stays empty)
    reader._queue = queue.Queue()
    session = type("Stand", (), {"_events": queue.Queue(), "_kill_for_run": lambda self: None})()
    monkeypatch.setattr(events, "POLL_SECONDS", 0.05)
    monkeypatch.setattr(children, "_watched", os.getppid() + 1)
    for waiting in (lambda: next(iter(reader)), lambda: next(Connection(session).events(30, threading.Event()))):
        with pytest.raises(SystemExit) as exited:
            waiting()
        assert exited.value.code == 128 + signal.SIGTERM


# -- the compile engine: a batch that reaches a bound -----------------------------------------------------

HANGS_ON_MARKER = """#!/bin/sh
if [ "$1" = "--version" ]; then echo "fakecxx 1.0"; exit 0; fi
out=""; prev=""; header=no; src=""
for a in "$@"; do
  if [ "$prev" = "-o" ]; then out="$a"; fi
  if [ "$a" = "c++-header" ]; then header=yes; fi
  case "$a" in *.cpp) src="$a";; esac
  prev="$a"
done
if [ "$header" = yes ]; then echo pch > "$out"; exit 0; fi
if grep -q 4.0625 "$src"; then exec sleep 300; fi
exit 0
"""


def test_a_batch_that_reaches_its_bound_is_compiled_unit_by_unit_and_the_bound_lands_on_its_entry(
    tmp_path: Path, monkeypatch
):
    from derivls.project.opener import open_project
    from tests.reliability.realfiles import REAL_NATIVE

    monkeypatch.setenv("DERIVLS_COMPILE_SECONDS", "3")
    cxx = tmp_path / "fakecxx"
    cxx.write_text(HANGS_ON_MARKER)
    cxx.chmod(0o755)
    include = tmp_path / "include"
    for header in REQUIRED_HEADERS:
        (include / header).parent.mkdir(parents=True, exist_ok=True)
        (include / header).touch()
    text = REAL_DERIVATIVES.read_text(encoding="utf-8")
    text = text.replace("  self: grad * -((-self * self + 1).rsqrt()).conj()", "  self: grad * -4.0625", 1)
    analysis = open_project(REAL_DERIVATIVES, REAL_NATIVE, None, "auto").analyzer.analyse(text)
    units = [u for u in collect_units(analysis) if u.name in ("AcosBackward0", "AsinBackward0", "AcoshBackward0")]
    assert len(units) == 3
    toolchain = Toolchain.find(REAL_DERIVATIVES, str(cxx), str(include))
    started = time.monotonic()
    result = compile_units(units, toolchain, Templates(REAL_DERIVATIVES), cache=tmp_path / "cache", nice=False)
    assert time.monotonic() - started < 60
    limited = [d for d in result.diagnostics if d.code == COMPILE_LIMIT]
    # acos's backward formula, and its forward one (auto_element_wise: the same text): both on acos's entry
    assert {d.message.split(":")[0] for d in limited} == {"AcosBackward0"}
    assert sorted("backward code" in d.message for d in limited) == [False, True]
    assert all("ran out of time" in d.message for d in limited)
    assert not bounded.live()


# -- kill -9 of the server: the compiler's own child and the torch child die too ----------------------------

# like g++: a driver whose work is done by a child process of its own (cc1plus), writing into $TMPDIR
DRIVER_CXX = (
    CXX_PREAMBLE
    + """if [ "$header" = yes ] && [ "$STAGE" != pch ]; then echo pch > "$out"; exit 0; fi
echo x > "$TMPDIR/ccFAKE.s"
sleep 300 &
echo $! >> "$PIDS"
echo $$ >> "$PIDS"
wait
"""
)


def _save_an_edit(server: RawServer, ws: dict[str, Path], options: dict) -> str:
    server.initialize(ws["root"], options=options)
    text = REAL_DERIVATIVES.read_text(encoding="utf-8")
    doc = server.open(ws["path"], text)
    assert server.diagnostics(doc, timeout=120) is not None
    return doc


@pytest.mark.parametrize("stage", ["pch", "units"])
def test_kill_9_of_the_server_mid_compile_leaves_no_compiler_nor_its_child_nor_its_files(workspace, monkeypatch, stage):
    monkeypatch.setenv("STAGE", stage)
    workspace["cxx"].write_text(DRIVER_CXX)
    before = work_folders()
    with RawServer(cwd=workspace["root"]) as server:
        options = {
            "compileOnSave": True,
            "compileCxx": str(workspace["cxx"]),
            "compileTorchInclude": str(workspace["include"]),
        }
        doc = _save_an_edit(server, workspace, options)
        edited = REAL_DERIVATIVES.read_text(encoding="utf-8").replace("  self: grad.neg()\n", "  self: -grad\n", 1)
        server.notify(
            "textDocument/didChange", {"textDocument": {"uri": doc, "version": 2}, "contentChanges": [{"text": edited}]}
        )
        server.notify("textDocument/didSave", {"textDocument": {"uri": doc}})
        assert wait_until(lambda: len(compiler_pids(workspace)) >= 2, 120), server.stderr_text()[-2000:]
        server.proc.kill()  # SIGKILL: no exit handler of the server runs
        server.proc.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in compiler_pids(workspace)), 15), survivors(workspace)
    assert wait_until(lambda: work_folders() - before == set(), 10)
    assert list(workspace["cache"].rglob("*.gch.*.tmp")) == []


def survivors(ws: dict[str, Path]) -> list[str]:
    """The stand-ins still alive, each with its parent and process group (which one was missed, and by whom)."""
    found = []
    for pid in compiler_pids(ws):
        try:
            with open(f"/proc/{pid}/stat", encoding="ascii") as f:
                fields = f.read().split(") ", 1)[1].split()
            found.append(f"{pid}: state {fields[0]}, parent {fields[1]}, group {fields[2]}")
        except OSError:
            continue
    return found


TORCH_CHILD = FAKE_PYTHON.replace('echo $$ >> "$PIDS"', 'echo $$ >> "$PIDS"; mkdir -p "$TMPDIR/torchinductor_root"')


def test_kill_9_of_the_server_mid_gradcheck_leaves_no_compiler_no_torch_child_and_no_files(workspace, monkeypatch):
    monkeypatch.setenv("STAGE", "units")
    workspace["cxx"].write_text(DRIVER_CXX)
    python = stand_in_torch(workspace, monkeypatch, TORCH_CHILD)
    (workspace["include"].parent / "lib").mkdir()
    (workspace["include"].parent / "lib" / "libtorch_cpu.so").touch()  # (what the extension links: torch/lib)
    before = work_folders()
    with RawServer(cwd=workspace["root"]) as server:
        options = {
            "trustedWorkspace": True,
            "gradcheckPython": str(python),
            "compileCxx": str(workspace["cxx"]),
            "compileTorchInclude": str(workspace["include"]),
        }
        doc = _save_an_edit(server, workspace, options)
        line = REAL_DERIVATIVES.read_text(encoding="utf-8").splitlines().index("- name: acos(Tensor self) -> Tensor")
        answer = server.call("workspace/executeCommand", {"command": "derivls.runGradcheck", "arguments": [doc, line]})
        assert answer.get("result", {}).get("started") is True, answer
        # the torch child, the compiler driver and its child
        assert wait_until(lambda: len(compiler_pids(workspace)) >= 3, 120), server.stderr_text()[-2000:]
        server.proc.kill()
        server.proc.wait()
    assert wait_until(lambda: not any(alive(pid) for pid in compiler_pids(workspace)), 15), compiler_pids(workspace)
    assert wait_until(lambda: work_folders() - before == set(), 10)  # the torch child's TMPDIR is inside


def test_the_compile_limit_code_is_what_a_bound_reports():
    # (the registry names this file as the test that makes derivls emit it: the engine test above does)
    assert str(COMPILE_LIMIT) == "compile-limit"
