"""Cache writes left until after a one-shot command's answer (derivls/base/writebehind.py).

Each scenario runs in a fresh interpreter: forking needs a process with no other thread, which a
test process that ran servers may not be.
"""

from __future__ import annotations

import os
import subprocess
import sys
import textwrap
import time
from pathlib import Path

from derivls.base.diskcache import DiskCache

ROOT = Path(__file__).resolve().parents[2]

SLOW_WRITE = textwrap.dedent(
    """
    import sys, time
    from pathlib import Path
    from derivls.base import writebehind
    from derivls.base.diskcache import DiskCache

    class Slow:  # pickling it takes a while: the write outlives the command
        def __reduce__(self):
            time.sleep(float(sys.argv[2]) / 8)
            return (str, ("written late" * 8000,))  # a pickle frame (64 KiB) each: the file grows as it goes

    cache = DiskCache(Path(sys.argv[1]))
    with writebehind.deferring():
        cache.put("value", [Slow() for _ in range(8)])
        print("answered", flush=True)
        writebehind.finish()
    """
)


def environment(env: dict[str, str] | None = None) -> dict[str, str]:
    """This checkout's derivls, forking on unless `env` turns it off."""
    environment = dict(os.environ, PYTHONPATH=str(ROOT))
    environment.pop("DERIVLS_NO_FORK", None)
    environment.update(env or {})
    return environment


def run(script: str, *args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-c", script, *args],
        capture_output=True,
        text=True,
        env=environment(env),
        timeout=60,
        check=True,
    )


def test_the_command_ends_before_its_deferred_write_and_a_reader_waits_for_the_write(tmp_path: Path) -> None:
    done = run(SLOW_WRITE, str(tmp_path), "2")  # returns when the command's output ends: the writer holds none of it
    assert done.stdout == "answered\n"
    assert not (tmp_path / "value.pickle").exists()  # still being written, by the detached child
    # the miss waited for the writer, which showed progress (its file grew) at least every STALL_LIMIT
    assert DiskCache(tmp_path).get("value") == ["written late" * 8000] * 8


def test_without_fork_the_write_is_done_before_the_command_ends(tmp_path: Path) -> None:
    run(SLOW_WRITE, str(tmp_path), "0.1", env={"DERIVLS_NO_FORK": "1"})
    assert (tmp_path / "value.pickle").exists()


def test_writes_still_queued_when_the_block_ends_are_done_then(tmp_path: Path) -> None:
    from derivls.base import writebehind

    cache = DiskCache(tmp_path)
    with writebehind.deferring():
        cache.put("value", 1)
        assert not (tmp_path / "value.pickle").exists()
    assert cache.get("value") == 1


def test_a_failing_write_costs_only_itself(tmp_path: Path) -> None:
    from derivls.base import writebehind

    def fails() -> None:
        raise OSError("disk full")

    cache = DiskCache(tmp_path)
    with writebehind.deferring():
        writebehind.defer(tmp_path, fails)
        cache.put("value", 2)
    assert cache.get("value") == 2


def test_outside_a_deferring_block_a_put_writes_at_once(tmp_path: Path) -> None:
    DiskCache(tmp_path).put("value", 3)
    assert (tmp_path / "value.pickle").exists()


def test_a_reader_does_not_wait_when_no_writer_holds_the_lock(tmp_path: Path) -> None:
    from derivls.base.writebehind import wait_for_writer

    assert wait_for_writer(tmp_path) is False  # no lock file at all
    (tmp_path / ".writing").touch()
    assert wait_for_writer(tmp_path) is False  # a lock file nobody holds


def test_a_writer_that_outlasts_the_wait_is_waited_for_once(tmp_path: Path) -> None:
    import fcntl

    from derivls.base.writebehind import wait_for_writer

    lock = os.open(tmp_path / ".writing", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)  # a writer that never finishes (another open file: flock conflicts)
    try:
        started = time.monotonic()
        assert wait_for_writer(tmp_path, limit=0.2) is True
        assert time.monotonic() - started >= 0.2  # (it shows no progress either: STALL_LIMIT would end it too)
        started = time.monotonic()
        assert wait_for_writer(tmp_path, limit=5) is False  # not again
        assert time.monotonic() - started < 1
    finally:
        os.close(lock)


def test_the_detached_writer_keeps_no_descriptor_a_caller_may_wait_on(tmp_path: Path) -> None:
    read_end, write_end = os.pipe()  # a pipe the command inherits besides stdout (a caller waits for its EOF)
    started = time.monotonic()
    proc = subprocess.Popen(
        [sys.executable, "-c", SLOW_WRITE, str(tmp_path), "2.4"],
        env=environment(),
        pass_fds=(write_end,),
        stdout=subprocess.DEVNULL,
    )
    os.close(write_end)
    assert proc.wait(timeout=60) == 0
    with os.fdopen(read_end, "rb") as pipe:
        assert pipe.read() == b""  # EOF once the command ended, not once its writer did
    assert time.monotonic() - started < 2.4  # the writer is still at work
    assert DiskCache(tmp_path).get("value") == ["written late" * 8000] * 8


RECORD_WHERE = textwrap.dedent(
    """
    import os, sys
    from pathlib import Path
    from derivls.base import writebehind

    folder = Path(sys.argv[1])

    def record():
        fds = [os.path.realpath(f"/proc/self/fd/{fd}") for fd in (0, 1, 2)]
        seen = {"pid": os.getpid(), "sid": os.getsid(0), "cwd": os.getcwd(), "fds": fds}
        (folder / "seen.tmp").write_text(repr(seen))
        os.replace(folder / "seen.tmp", folder / "seen")

    with writebehind.deferring():
        writebehind.defer(folder, record)
        print(os.getpid(), flush=True)
        writebehind.finish()
    """
)


def test_the_detached_writer_starts_in_the_cache_folder_in_a_session_of_its_own_on_dev_null(tmp_path: Path) -> None:
    import ast

    cache, workspace = tmp_path / "cache", tmp_path / "workspace"
    cache.mkdir()
    workspace.mkdir()
    proc = subprocess.run(
        [sys.executable, "-c", RECORD_WHERE, str(cache)],
        cwd=workspace,
        capture_output=True,
        text=True,
        env=environment(),
        timeout=60,
        check=True,
    )
    deadline = time.monotonic() + 20
    while not (cache / "seen").exists() and time.monotonic() < deadline:
        time.sleep(0.05)
    seen = ast.literal_eval((cache / "seen").read_text())
    assert seen["pid"] != int(proc.stdout)  # (a forked child wrote it, not the command)
    assert seen["sid"] == seen["pid"]  # its own session: a Ctrl-C meant for the next command spares it
    assert seen["cwd"] == str(cache)  # not the command's working folder (the workspace)
    assert seen["fds"] == [os.devnull] * 3


def test_the_server_never_waits_for_a_writer(tmp_path: Path, monkeypatch) -> None:
    import fcntl

    from derivls.base import writebehind

    monkeypatch.setattr(writebehind, "_waits", True)
    lock = os.open(tmp_path / ".writing", os.O_RDWR | os.O_CREAT)
    fcntl.flock(lock, fcntl.LOCK_EX)
    try:
        writebehind.never_wait()
        started = time.monotonic()
        assert writebehind.wait_for_writer(tmp_path, limit=5) is False
        assert time.monotonic() - started < 1
    finally:
        os.close(lock)


def test_after_an_interrupt_nothing_queued_is_written(tmp_path: Path) -> None:
    import pytest

    from derivls.base import writebehind

    cache = DiskCache(tmp_path)
    with pytest.raises(KeyboardInterrupt), writebehind.deferring():
        cache.put("value", 4)
        raise KeyboardInterrupt
    assert not (tmp_path / "value.pickle").exists()
