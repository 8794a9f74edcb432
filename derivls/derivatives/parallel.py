"""A cold full pass on both cores: a forked child analyses the last part of the entries.

`derivls check` with nothing cached spends a third of its time analysing entries one by one after
the native index is built. With a second core free, `analyse_chunks` forks once the index exists
(the child shares it, copy-on-write), the child analyses the last part of the chunks and sends its
results back pickled, while the parent analyses the first part.

Results must keep their identity with the index (the loader and the formula checks compare
`canonical` functions with `is`): the index's NativeFunctions and their schemas are pickled as their
position in the index, and read back as the parent's own objects. Everything else the child made is
new data, copied by value.

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
from itertools import chain

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.schema import FunctionSchema

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from derivls.derivatives.document import Chunk

    R = TypeVar("R")

MIN_CHUNKS = 128  # below this, forking and pickling cost more than half the analysis saves
# The child's share of the text: it also pickles its results and the parent unpickles them.
CHILD_SHARE = 0.45

# While the parent unpickles the child's results: the objects the child referred to by position.
_known: list[Any] = []
_profile: Any = None


def _function(i: int) -> NativeFunction:
    return _known[i]


def _schema(i: int) -> FunctionSchema:
    return _known[i].func


def _the_profile() -> Any:
    return _profile


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
    profile: object,
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
    known = list(chain(index.functions, index.loader_functions))
    read_end, write_end = os.pipe()
    try:
        pid = os.fork()
    except OSError:
        os.close(read_end)
        os.close(write_end)
        return {}
    if pid == 0:  # the child: never returns
        _child(write_end, read_end, theirs, analyse, known, profile)
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
    theirs_results = _load(data, known, profile) if status == 0 and data else None
    if theirs_results is None or len(theirs_results) != len(theirs):
        theirs_results = [analyse(c) for c in theirs]  # the child failed: do its part here
    for c, r in zip(theirs, theirs_results):
        results[c.text] = r
    return results


def _reap(pid: int, kill: bool) -> int:
    """Wait for the child; its exit status (0 when unknown: with SIGCHLD ignored the system reaps it, and
    only a complete answer unpickles)."""
    import signal

    try:
        if kill:
            os.kill(pid, signal.SIGKILL)
        return os.waitpid(pid, 0)[1]
    except (ChildProcessError, ProcessLookupError):
        return 0


def _child(
    write_end: int, read_end: int, chunks: list[Chunk], analyse: Callable[[Chunk], Any], known: list[Any], profile: Any
) -> None:
    code = 1
    try:
        os.close(read_end)
        data = _dump([analyse(c) for c in chunks], known, profile)
        view = memoryview(data)
        while view:
            view = view[os.write(write_end, view) :]
        code = 0
    except BaseException:  # noqa: BLE001 - any failure: the parent does this part itself
        pass
    finally:
        os._exit(code)  # no atexit handlers, no flushing of the parent's buffers


def _dump(results: list[Any], known: list[Any], profile: Any) -> bytes:
    import copyreg
    import io
    import pickle

    positions: dict[int, int] = {}
    for i, f in enumerate(known):
        positions.setdefault(id(f), i)
    schemas = {id(f.func): i for i, f in reversed(list(enumerate(known)))}

    def function(f: NativeFunction) -> Any:
        i = positions.get(id(f))
        return (_function, (i,)) if i is not None else f.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

    def schema(s: FunctionSchema) -> Any:
        i = schemas.get(id(s))
        return (_schema, (i,)) if i is not None else s.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

    def the_profile(p: Any) -> Any:
        return (_the_profile, ()) if p is profile else p.__reduce_ex__(pickle.HIGHEST_PROTOCOL)

    table = copyreg.dispatch_table.copy()
    table[NativeFunction] = function
    table[FunctionSchema] = schema
    table[type(profile)] = the_profile
    out = io.BytesIO()
    pickler = pickle.Pickler(out, protocol=pickle.HIGHEST_PROTOCOL)
    pickler.dispatch_table = table  # consulted in C, per object type: no Python call per object
    pickler.dump(results)
    return out.getvalue()


def _load(data: bytes, known: list[Any], profile: Any) -> list[Any] | None:
    import pickle

    global _known, _profile
    _known, _profile = known, profile
    try:
        loaded = pickle.loads(data)
    except Exception:  # noqa: BLE001 - a damaged answer: the parent does the child's part
        return None
    finally:
        _known, _profile = [], None
    return loaded if isinstance(loaded, list) else None


def _read_all(fd: int) -> bytes:
    parts: list[bytes] = []
    while True:
        part = os.read(fd, 1 << 20)
        if not part:
            return b"".join(parts)
        parts.append(part)
