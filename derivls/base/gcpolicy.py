"""The one place derivls steers Python's cyclic garbage collector.

derivls builds hundreds of thousands of small, acyclic, long-lived objects (the native index, entry
results). The cyclic GC's full collections walk all of them again and again, for nothing:
- `paused_gc()`: no collection while a cold build runs (10-40% faster); re-entrant and thread-safe;
- `freeze_heap()`: the server moves what exists now out of the GC's reach after a cold load, so a
  full collection in the middle of typing does not pause for 100-400 ms;
- `one_shot()`: a CLI command runs without the cyclic GC and freezes the heap before exit, so
  interpreter shutdown's final collection skips it (objects are freed by reference counting);
- `collect_when_idle()`: the server collects only when the user pauses. Automatic collections ran
  right after each keystroke's analysis (its thousands of new objects fill the young generation),
  ~1-2 ms of every edit at 10x; reference counting frees nearly everything anyway;
- `edit_cycle()`: the three above around one edit's analysis and publication (the server's pipeline).
"""

from __future__ import annotations

import _thread
import contextlib
import gc
import sys
import time
from collections.abc import Iterator

TYPE_CHECKING = False  # asyncio is not imported at run time here (the CLI's start-up)
if TYPE_CHECKING:
    import asyncio

_lock = _thread.allocate_lock()  # (threading itself costs `check` ~2 ms to import)
_pauses = 0
_replaced_frozen = False  # an index that was frozen has been replaced: its objects may be garbage now


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """No cyclic GC while the body runs (nested and concurrent pauses count)."""
    global _pauses, _enable_after
    with _lock:
        _pauses += 1
        if _pauses == 1:
            _enable_after = gc.isenabled()
            gc.disable()
    try:
        yield
    finally:
        with _lock:
            _pauses -= 1
            if _pauses == 0 and _enable_after:
                gc.enable()


_enable_after = False  # whether the GC was enabled when the outermost pause began

IDLE_SECONDS = 0.5  # no edit for this long: collect
CHECK_SECONDS = 30.0  # and at least this often while there are new objects
MAX_YOUNG = 200_000  # objects made since the last collection: collect the young ones anyway (~10 ms)
_idle_handle: asyncio.TimerHandle | None = None


def collect_when_idle(loop: asyncio.AbstractEventLoop) -> None:
    """From now on the cyclic GC runs only from here, on `loop`: IDLE_SECONDS after the last call
    (each call restarts the wait), then every CHECK_SECONDS while objects were made. The server
    calls it once an edit's diagnostics are out."""
    global _idle_handle, _enable_after
    with _lock:
        if _pauses:
            _enable_after = False  # the outermost pause must not turn automatic collection back on
        else:
            gc.disable()
    if _idle_handle is not None:
        _idle_handle.cancel()
    _idle_handle = loop.call_later(IDLE_SECONDS, _idle_collect, loop)
    if gc.get_count()[0] > MAX_YOUNG:  # typing without a pause for minutes: the young objects, now
        gc.collect(1)


def _idle_collect(loop: asyncio.AbstractEventLoop) -> None:
    global _idle_handle
    if gc.get_count() != (0, 0, 0):  # objects were made (or freed) since the last collection
        gc.collect()
    _idle_handle = loop.call_later(CHECK_SECONDS, _idle_collect, loop)


def freeze_heap(collect: bool = True) -> None:
    """Move what exists now (the index, cached entry results) out of the cyclic GC's reach.

    Objects made later are collected as usual. With `collect`, or when `mark_replaced()` said what an
    earlier freeze kept may be garbage now, garbage is collected first (including that). Then the C
    heap's free pages go back to the system.
    """
    global _replaced_frozen
    if collect or _replaced_frozen:
        if _replaced_frozen:
            gc.unfreeze()
            _replaced_frozen = False
        gc.collect()
    release_free_memory()
    gc.freeze()


_malloc_trim = None  # ctypes function, or False where there is none (typing is not imported: CLI start-up)


def _libc_function(name: str):  # type: ignore[no-untyped-def]
    if not sys.platform.startswith("linux"):
        return None
    try:
        import ctypes

        return getattr(ctypes.CDLL(None), name)
    except (OSError, AttributeError):  # not glibc (musl has neither malloc_trim nor these mallopt settings)
        return None


_M_TRIM_THRESHOLD, _M_MMAP_THRESHOLD, _M_ARENA_MAX = -1, -3, -8  # glibc's mallopt parameters
_tuned = False


def reuse_large_blocks(limit: int = 32 << 20) -> None:
    """A long-running server: blocks up to `limit` bytes (a document's text, ~1.7 MB for a 10x file)
    come from the heap and go back to it, not to the system. glibc maps each large block afresh
    otherwise (its threshold starts at 128 kB), and touching a fresh 1.7 MB text costs ~400 page
    faults: re-making the text after a keystroke took ~4 ms instead of ~0.15 ms. Freed memory beyond
    `limit` at the heap's top still goes back; release_free_memory() gives back the rest after a load."""
    global _tuned
    if _tuned:
        return
    _tuned = True
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_MMAP_THRESHOLD, limit)
        mallopt(_M_TRIM_THRESHOLD, limit)


def one_malloc_arena() -> None:
    """A server: every thread allocates from glibc's main heap (call it before any thread starts).

    The server indexes native_functions.yaml in a worker thread, which glibc gives a heap of its own;
    what the index build and its pickling (the disk cache) freed there stayed in the process: with the
    10x file, 28 MB more RSS after a cold open than the same steps on the main thread, 22 MB after a
    warm one (reading the pickle), even after malloc_trim. Python's GIL serialises the threads' work,
    so sharing one heap costs nothing."""
    mallopt = _libc_function("mallopt")
    if mallopt is not None:
        mallopt(_M_ARENA_MAX, 1)


def release_free_memory() -> None:
    """glibc's malloc_trim(0): free pages of the C heap go back to the system (elsewhere: nothing)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = _libc_function("malloc_trim") or False
    if _malloc_trim:
        _malloc_trim(0)  # type: ignore[operator]


def mark_replaced() -> None:
    """Something frozen (an index) was dropped: the next `freeze_heap()` unfreezes and collects first."""
    global _replaced_frozen
    _replaced_frozen = True


class EditCycle:
    """What the body of `edit_cycle` tells it, and what it did."""

    def __init__(self) -> None:
        self.started = time.perf_counter()
        self.analysed_at: float | None = None  # None: nothing was analysed (the GC is left as it was)
        self.froze = False  # the heap was frozen after it

    def analysed(self) -> None:
        """The edit is analysed (its publication may follow in the body)."""
        self.analysed_at = time.perf_counter()


@contextlib.contextmanager
def edit_cycle(loop: asyncio.AbstractEventLoop, *, first: bool, cold_seconds: float) -> Iterator[EditCycle]:
    """One edit's analysis and publication, as the cyclic GC sees them:

    - no GC pass while the body runs: none between a keystroke and its diagnostics;
    - then, if the body called `analysed()`: after a document's `first` analysis (computed, or read
      from the entry cache: fast, but as many long-lived objects) or one longer than `cold_seconds`,
      the heap is frozen: its objects need no more GC passes. Not collected first: a load makes no
      cyclic garbage, and collecting ~1.5M objects blocked requests for 1-2.5 s at 10x;
    - and collections run only once typing pauses (`collect_when_idle`).
    """
    cycle = EditCycle()
    with paused_gc():
        yield cycle
    if cycle.analysed_at is None:
        return
    if cycle.analysed_at - cycle.started > cold_seconds or first:
        freeze_heap(collect=False)
        cycle.froze = True
    collect_when_idle(loop)


@contextlib.contextmanager
def one_shot() -> Iterator[None]:
    """A CLI command: no cyclic GC while it runs; the heap frozen at the end (shutdown skips it)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()


__all__ = [
    "EditCycle",
    "collect_when_idle",
    "edit_cycle",
    "freeze_heap",
    "mark_replaced",
    "one_malloc_arena",
    "one_shot",
    "paused_gc",
    "release_free_memory",
    "reuse_large_blocks",
]
