"""A cold full pass on both cores: a forked child analyses the last part of the entries.

`derivls check` with nothing cached spends a third of its time analysing entries one by one after
the native index is built. With a second core free, `analyse_chunks` forks once the index exists
(the child shares it, copy-on-write), the child analyses the last part of the chunks and sends its
results back pickled, while the parent analyses the first part.

Results must keep their identity with the index (the loader and the formula checks compare
`canonical` functions with `is`): they are pickled with derivatives/indexrefs.py, as the entry cache
pickles them, so the index's functions, schemas and arguments are read back as the parent's own
objects. Everything else the child made is new data, copied by value. A result that cannot be
pickled so (Uncacheable) is analysed again by the parent.

Only where fork is safe and pays: Linux, no other thread in the process (the server runs threads: it
never forks), two CPUs for this process and no other task ready to run on them right now (on a busy
machine the child would only take turns with its parent: 1.2-1.4x slower, measured), at least
MIN_CHUNKS entries not cached, not turned off with `DERIVLS_NO_FORK=1`. Any failure of the child (an exception, a signal, an unpicklable result) costs
only the time it took: the parent analyses the child's part itself. The child is always reaped.
"""

from __future__ import annotations

import os
import sys
from collections.abc import Callable, Container, Sequence

from derivls.aten.native import NativeIndex
from derivls.derivatives.indexrefs import IndexRefs

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from derivls.derivatives.document import Chunk
    from derivls.derivatives.profiles.base import Profile

    R = TypeVar("R")

MIN_CHUNKS = 128  # below this, forking and pickling cost more than half the analysis saves
# The child's share of the text: it also pickles its results and the parent unpickles them.
CHILD_SHARE = 0.45


def forks_here(pending: int) -> bool:
    """Whether a full pass with (at most) `pending` chunks to analyse should fork (see the module's doc)."""
    if pending < MIN_CHUNKS or not sys.platform.startswith("linux") or not hasattr(os, "fork"):
        return False
    if os.environ.get("DERIVLS_NO_FORK"):
        return False
    threading = sys.modules.get("threading")
    if threading is not None and threading.active_count() > 1:
        return False  # forking a process with threads can deadlock the child
    try:
        cpus = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        cpus = os.cpu_count() or 1
    return cpus >= 2 and runnable_elsewhere() < cpus - 1


def runnable_elsewhere() -> int:
    """How many other tasks are running or ready to run now (Linux: /proc/loadavg's 4th field, less this
    process). With every other CPU busy, a child would only take turns with this process."""
    try:
        with open("/proc/loadavg", "rb") as f:
            running = int(f.read().split()[3].split(b"/")[0])
    except (OSError, ValueError, IndexError):
        return 0
    return max(running - 1, 0)


def analyse_chunks(
    chunks: Sequence[Chunk],
    analyse: Callable[[Chunk], R],
    cached: Container[str],
    index: NativeIndex | None,
    profile: Profile,
) -> dict[str, R]:
    """chunk text → analyse(chunk) for the chunks whose text is not `cached`, computed by this process
    and a forked child; empty when it does not fork (see `forks_here`): the caller analyses them."""
    if index is None or not forks_here(len(chunks)):  # (the server, with its threads, stops here at once)
        return {}
    unique = list({c.text: c for c in chunks if c.text not in cached}.values())
    if len(unique) < MIN_CHUNKS:  # most are cached: nothing worth a second process
        return {}
    total = sum(len(c.text) for c in unique)
    cut, acc = len(unique), 0
    while cut > 0 and acc + len(unique[cut - 1].text) <= total * CHILD_SHARE:
        cut -= 1
        acc += len(unique[cut].text)
    mine, theirs = unique[:cut], unique[cut:]
    refs = IndexRefs(index, profile)
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return {}
    if pid == 0:  # the child: never returns
        _child(write_end, read_end, theirs, analyse, refs)
    os.close(write_end)
    results: dict[str, R] = {}
    data = b""
    finished = False
    try:
        for c in mine:
            results[c.text] = analyse(c)
        data = _read_all(read_end)
        finished = True
    finally:
        os.close(read_end)  # a child still writing gets EPIPE and exits
        status = _reap(pid, kill=not finished)  # kill: this part raised, the child's work is not wanted
    answers = _load(data, refs) if status == 0 and data else None
    if answers is None or len(answers) != len(theirs):
        answers = [None] * len(theirs)  # the child failed: do its part here
    for c, r in zip(theirs, answers):
        results[c.text] = analyse(c) if r is None else r  # None: the child's result could not be sent
    return results


def _reap(pid: int, kill: bool) -> int:
    """Wait for the child; its exit status (0 when unknown: with SIGCHLD ignored the system reaps it, and
    only a complete answer unpickles)."""
    try:
        if kill:
            import signal  # only then (its import costs `check` ~1 ms)

            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):
        return 0


def _child(
    write_end: int, read_end: int, chunks: list[Chunk], analyse: Callable[[Chunk], Any], refs: IndexRefs
) -> None:
    code = 1
    try:
        os.close(read_end)
        data = _dump([analyse(c) for c in chunks], refs)
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent does this part itself
        pass
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers


def _dump(results: list[Any], refs: IndexRefs) -> bytes:
    """Each result pickled against the index (None for one that cannot be: the parent redoes it)."""
    import pickle

    from derivls.derivatives.indexrefs import PROTOCOL, Uncacheable

    parts: list[bytes | None] = []
    for result in results:
        try:
            parts.append(refs.dumps(result))
        except Uncacheable:
            parts.append(None)
    return pickle.dumps(parts, protocol=PROTOCOL)


def _load(data: bytes, refs: IndexRefs) -> list[Any] | None:
    """The child's results, read against the parent's index; None when the answer is damaged."""
    from derivls.base.safepickle import loads

    try:
        parts = loads(data)
        if not isinstance(parts, list):
            return None
        return [None if part is None else refs.loads(part) for part in parts]
    except Exception:  # noqa: BLE001 - a damaged answer: the parent does the child's part
        return None


def _read_all(fd: int) -> bytes:
    parts: list[bytes] = []
    while True:
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(parts)
        parts.append(part)
