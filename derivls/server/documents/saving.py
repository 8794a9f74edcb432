"""The entry cache's background saves, run on the server's event loop while no one types.

After a cold open the server writes the entries' results back to the persistent cache
(derivatives/entrycache.py). For the 10x file that is ~2 s of pickling; done in a thread it held the
GIL against the keystrokes that came meanwhile: every write to stdout (the diagnostics) waited for the
GIL to come back, 5-13 ms, for the two seconds the save took (edit -> diagnostics p99 20-40 ms).

Here a save is a series of small steps (`EntryCache.saving()`: one record pickled each, ~0.3 ms),
run on the event loop in slices of at most SLICE seconds, only once QUIET seconds have passed since
the last document change (typing without a pause postpones the save by MAX_WAIT at most), and never
before entrycache.SAVE_DELAY after the analysis asked for it. A keystroke waits for one slice at most.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Iterator

from derivls.base.gcpolicy import release_free_memory
from derivls.derivatives import entrycache
from derivls.derivatives.entrycache import EntryCache

log = logging.getLogger("derivls.server")

QUIET = 0.15  # seconds without a document change before a slice runs
MAX_WAIT = 10.0  # seconds typing may postpone a save; then its slices run between keystrokes anyway
SLICE = 0.003  # seconds of steps per slice
GAP = 0.002  # seconds between slices (messages that came meanwhile are handled first)


class Saves:
    """The queue of caches with a save to do, on one event loop."""

    def __init__(self, loop: asyncio.AbstractEventLoop) -> None:
        self.loop = loop
        self.queue: list[EntryCache] = []
        self.steps: Iterator[None] | None = None  # the save under way
        self.handle: asyncio.TimerHandle | None = None
        self.not_before = 0.0  # loop time
        self.last_change = float("-inf")  # loop time
        self.started = 0.0  # loop time the save under way began
        self.spent = 0.0  # seconds of its steps
        self.longest = 0.0  # seconds of its longest slice

    def add(self, cache: EntryCache) -> None:
        if cache not in self.queue:
            self.queue.append(cache)
        self.not_before = max(self.not_before, self.loop.time() + entrycache.SAVE_DELAY)
        self._arm(self.not_before)

    def changed(self) -> None:
        self.last_change = self.loop.time()

    def _arm(self, when: float) -> None:
        if self.handle is not None:
            self.handle.cancel()
        self.handle = self.loop.call_at(when, self._run)

    def _run(self) -> None:
        self.handle = None
        start = max(self.not_before, self.last_change + QUIET)
        if start > self.not_before + MAX_WAIT:  # no pause for long: a slice delays a keystroke by <= SLICE
            start = self.not_before + MAX_WAIT
        if self.loop.time() < start:
            self._arm(start)
            return
        began = time.perf_counter()
        deadline = began + SLICE
        try:
            while time.perf_counter() < deadline:
                if self.steps is None:
                    if not self.queue:
                        return
                    self.steps = self.queue.pop(0).saving()
                    self.started, self.spent, self.longest = self.loop.time(), 0.0, 0.0
                try:
                    next(self.steps)
                except StopIteration:
                    self.steps = None
                    now = time.perf_counter()
                    log.debug(
                        "entry cache: saved in %.2f s (%.2f s of steps, slices of at most %.1f ms)",
                        self.loop.time() - self.started,
                        self.spent + now - began,
                        max(self.longest, now - began) * 1000,
                    )
                    # the save read the stored records and pickled new ones (~1.2 MB each for the real
                    # file): freed, they stay in the C heap (reuse_large_blocks keeps up to 32 MB at
                    # its top). Given back after each save: 20,000 paced edits +3.1 -> +1.9 MB RSS.
                    release_free_memory()
                    began = time.perf_counter()
                    self.spent = 0.0
                except Exception:  # a failing save costs only itself (the cache is an optimisation)
                    log.exception("entry cache: background save failed")
                    self.steps = None
        finally:
            self.spent += time.perf_counter() - began
            self.longest = max(self.longest, time.perf_counter() - began)
        self._arm(self.loop.time() + GAP)


_saves: Saves | None = None


def _take(cache: EntryCache) -> bool:
    """entrycache's runner: queue `cache`'s save on the running loop (False outside one: a thread saves)."""
    global _saves
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return False
    if _saves is None or _saves.loop is not loop:
        _saves = Saves(loop)
    _saves.add(cache)
    return True


def install() -> None:
    """Background saves of this process's entry caches run here from now on."""
    entrycache.run_background_saves_with(_take)


def document_changed() -> None:
    """A document changed: saves wait until QUIET seconds after the last change."""
    if _saves is not None:
        _saves.changed()


__all__ = ["GAP", "MAX_WAIT", "QUIET", "SLICE", "Saves", "document_changed", "install"]
