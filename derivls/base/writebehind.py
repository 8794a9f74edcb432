"""Cache writes a one-shot command leaves until after its answer, done by a detached child.

`derivls check` with nothing cached spends a fifth of its time pickling what it computed into the
persistent cache (the native index, the per-entry results, the result). None of that changes the
answer. Inside `deferring()` those writes are queued instead (`defer`); `finish()`, called once the
answer is written and flushed, hands them to a forked child that detaches from the caller (its own
session; stdin, stdout and stderr on /dev/null, so a caller reading the command's output sees it end
with the parent) and writes them, while the parent exits at once.

Readers are never surprised: before forking, the parent takes an exclusive `flock` on the cache
folder's `.writing` file, which the child inherits and holds until its last write. A process that
misses an entry while such a writer is at work waits for it (`wait_for_writer`, bounded) and reads
again, so `check` run twice in a row still answers the second time from the cache.

Only where fork is safe (Linux, no other thread in the process, `DERIVLS_NO_FORK` unset) and the
lock is free (another writer at work: the writes are done inline, they are atomic anyway); else
`finish()` runs the writes itself, as before. A failing write costs only itself.
"""

from __future__ import annotations

import contextlib
import os
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

from derivls.base.lazylog import info

LOCK_NAME = ".writing"
WAIT_LIMIT = 10.0  # seconds a reader waits at most for a writer making progress
STALL_LIMIT = 0.5  # seconds a reader waits for a writer that shows no progress (a held or stopped lock)

_queue: list[tuple[Path, Callable[[], object]]] | None = None  # None: not deferring, writes happen at once


@contextlib.contextmanager
def deferring() -> Iterator[None]:
    """Queue the cache writes made inside; the caller calls `finish()` once its answer is out (writes
    still queued when the block is left, e.g. on an error, are done inline then; not after Ctrl-C)."""
    global _queue
    previous, _queue = _queue, []
    interrupted = False
    try:
        yield
    except (KeyboardInterrupt, SystemExit):
        interrupted = True  # the user wants out: nothing more is written
        raise
    finally:
        queued, _queue = _queue, previous
        if not interrupted:
            _run_all(queued or [])


def defer(directory: Path, write: Callable[[], object]) -> bool:
    """Queue `write` (a write into the cache folder `directory`) when deferring; False: do it now."""
    if _queue is None:
        return False
    _queue.append((directory, write))
    return True


def finish() -> None:
    """Do the queued writes: in a detached child when possible (see the module's doc), else here."""
    global _queue
    if not _queue:
        return
    queued, _queue = _queue, []
    locks = _lock_all({directory for directory, _ in queued}) if _may_fork() else None
    if locks is None:
        _run_all(queued)
        return
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()  # nothing buffered is written twice (the child never flushes)
    try:
        pid = os.fork()
    except OSError:
        _close(locks)
        _run_all(queued)
        return
    if pid == 0:  # the child: never returns
        code = 1
        try:
            os.setsid()  # not in the caller's process group: a Ctrl-C meant for the next command spares it
            with contextlib.suppress(OSError):
                os.chdir(directory_of(queued))  # a neutral folder (the cache's), not the caller's workspace
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):
                os.dup2(null, fd)
            _close_inherited(keep=locks)  # e.g. a pipe a caller waits on: only the locks stay open
            _run_all(queued)
            code = 0
        finally:
            os._exit(code)  # holds the locks until here
    _close(locks)  # the child's copies keep them


def directory_of(queued: list[tuple[Path, Callable[[], object]]]) -> Path:
    return queued[0][0] if queued and queued[0][0].is_absolute() else Path("/")


_stuck: set[Path] = set()  # folders whose writer outlasted WAIT_LIMIT once: not waited for again
_waits = True  # False in the server (never_wait)


def never_wait() -> None:
    """For a long-running process (the server): a miss while a command's detached writer is at work is
    a miss (computed again), never a wait that would stall its event loop."""
    global _waits
    _waits = False


def wait_for_writer(directory: Path, limit: float = WAIT_LIMIT, stall: float = STALL_LIMIT) -> bool:
    """Wait while a detached writer holds the lock of `directory` and makes progress (a file written
    in the folder within the last `stall` seconds), at most `limit` seconds, once per folder and
    process if that runs out; True if one was at work (the caller reads again). A lock held by a
    process that writes nothing (stopped, or holding it on purpose) costs `stall` seconds at most."""
    if directory in _stuck or not _waits:
        return False
    try:
        import fcntl
    except ImportError:
        return False
    try:
        fd = os.open(directory / LOCK_NAME, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK)
    except OSError:
        return False  # no writer ever wrote here (or not a file a writer made)
    try:
        waited = False
        started = time.monotonic()
        last_progress = started
        seen = _progress(directory)
        while True:
            try:
                fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
                return waited
            except BlockingIOError:
                now = time.monotonic()
                now_seen = _progress(directory)
                if now_seen != seen:
                    seen, last_progress = now_seen, now
                if now - started > limit or now - last_progress > stall:
                    _stuck.add(directory)  # a writer that hangs costs this process one wait, not one per read
                    return waited
                waited = True
                time.sleep(0.005)
            except OSError:
                return waited
    finally:
        os.close(fd)


def _progress(directory: Path) -> tuple[int, ...]:
    """What changes while a writer writes: the folder's mtime (files created, renamed) and the sizes of
    the temporary files being written."""
    try:
        sizes = [directory.stat().st_mtime_ns]
        with os.scandir(directory) as entries:
            for entry in entries:
                if entry.name.endswith(".tmp"):
                    sizes.append(entry.stat(follow_symlinks=False).st_size)
        return tuple(sizes)
    except OSError:
        return ()


def _close_inherited(keep: list[int]) -> None:
    """Close every descriptor above stderr but `keep` (the cache writes open their own files)."""
    low = 3
    for fd in sorted(keep):
        if fd >= low:
            os.closerange(low, fd)
            low = fd + 1
    os.closerange(low, 1 << 20)


def _may_fork() -> bool:
    if not sys.platform.startswith("linux") or not hasattr(os, "fork") or os.environ.get("DERIVLS_NO_FORK"):
        return False
    threading = sys.modules.get("threading")
    return threading is None or threading.active_count() <= 1  # forking with threads can deadlock the child


def _lock_all(directories: set[Path]) -> list[int] | None:
    locks: list[int] = []
    for directory in directories:
        fd = _lock_for_writing(directory)
        if fd is None:
            _close(locks)
            return None
        locks.append(fd)
    return locks


def _close(fds: list[int]) -> None:
    for fd in fds:
        with contextlib.suppress(OSError):
            os.close(fd)


def _lock_for_writing(directory: Path) -> int | None:
    """An fd holding the exclusive lock of `directory`, or None (not lockable, or another writer has it)."""
    from derivls.base.cachedir import CacheFolderRefused, check_folder

    try:
        import fcntl

        check_folder(directory, create=True)
        fd = os.open(directory / LOCK_NAME, os.O_RDWR | os.O_CREAT | os.O_NOFOLLOW | os.O_NONBLOCK, 0o600)
    except (ImportError, OSError, CacheFolderRefused):
        return None
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except OSError:
        os.close(fd)
        return None
    return fd


def _run_all(queued: list[tuple[Path, Callable[[], object]]]) -> None:
    global _queue
    previous, _queue = _queue, None  # what these writes write is written now
    try:
        for _, write in queued:
            try:
                write()
            except Exception as e:  # noqa: BLE001 - a cache write that fails costs only itself
                info(__name__, "cache: a deferred write failed: %r", e)
    finally:
        _queue = previous


__all__ = ["deferring", "defer", "finish", "never_wait", "wait_for_writer"]
