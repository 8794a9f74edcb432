"""The one place derivls steers Python's cyclic garbage collector.

derivls builds hundreds of thousands of small, acyclic, long-lived objects (the native index, entry
results). The cyclic GC's full collections walk all of them again and again, for nothing:
- `paused_gc()`: no collection while a cold build runs (10-40% faster); re-entrant and thread-safe;
- `freeze_heap()`: the server moves what exists now out of the GC's reach after a cold load, so a
  full collection in the middle of typing does not pause for 100-400 ms;
- `one_shot()`: a CLI command runs without the cyclic GC and freezes the heap before exit, so
  interpreter shutdown's final collection skips it (objects are freed by reference counting).
"""

from __future__ import annotations

import contextlib
import gc
import sys
import threading
from collections.abc import Iterator

_lock = threading.Lock()
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


def freeze_heap(collect: bool = True) -> None:
    """Move what exists now (the index, cached entry results) out of the cyclic GC's reach.

    Objects made later are collected as usual. With `collect`, garbage is collected first, including
    what an earlier freeze kept and `mark_replaced()` said may be garbage now.
    """
    global _replaced_frozen
    if collect:
        if _replaced_frozen:
            gc.unfreeze()
            _replaced_frozen = False
        gc.collect()
        release_free_memory()
    gc.freeze()


_malloc_trim = None  # ctypes function, or False where there is none (typing is not imported: CLI start-up)


def release_free_memory() -> None:
    """glibc's malloc_trim(0): free pages of the C heap go back to the system (elsewhere: nothing)."""
    global _malloc_trim
    if _malloc_trim is None:
        _malloc_trim = False  # type: ignore[assignment]
        if sys.platform.startswith("linux"):
            try:
                import ctypes

                _malloc_trim = ctypes.CDLL(None).malloc_trim  # type: ignore[assignment]
            except (OSError, AttributeError):  # not glibc (musl has no malloc_trim)
                pass
    if _malloc_trim:
        _malloc_trim(0)  # type: ignore[operator]


def mark_replaced() -> None:
    """Something frozen (an index) was dropped: the next `freeze_heap()` unfreezes and collects first."""
    global _replaced_frozen
    _replaced_frozen = True


@contextlib.contextmanager
def one_shot() -> Iterator[None]:
    """A CLI command: no cyclic GC while it runs; the heap frozen at the end (shutdown skips it)."""
    gc.disable()
    try:
        yield
    finally:
        gc.freeze()


__all__ = ["freeze_heap", "mark_replaced", "one_shot", "paused_gc", "release_free_memory"]
