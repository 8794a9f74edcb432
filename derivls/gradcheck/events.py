"""The torch child's events as a gradcheck run reads them: in a thread from the child's start, in order, with the
unit being checked killed when it passes its bound and the build's compilers stopped at a set-up error."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Iterator
from typing import Any

from derivls.base import bounded
from derivls.gradcheck import runner
from derivls.gradcheck.runner import Child

POLL_SECONDS = 0.5  # how often a run waiting for its child's events looks whether its own parent is gone


class EventReader:
    """The child's events, read in a thread from its start: iterate to get them in order. A `setup-error`
    event (torch without numpy / expecttest) kills the build's compilers at once (derivls.base.bounded: every
    bounded process but the child), so a cold run says so in seconds, not after a 40 s compile."""

    timed_out: str | None = None  # the unit whose checks passed unit_seconds (its child was killed)
    _running: tuple[str, float] | None = None  # the unit being checked (its `unit-start`), since when

    def __init__(self, child: Child, unit_seconds: float | None = None) -> None:
        self.child = child
        self.unit_seconds = runner.unit_seconds() if unit_seconds is None else unit_seconds
        self.setup_error: str | None = None
        self.build_over = threading.Event()  # set by the engine once the build returned or raised
        self._queue: queue.Queue[dict[str, Any] | None] = queue.Queue()
        threading.Thread(target=self._read, daemon=True).start()

    def _read(self) -> None:
        try:
            for event in self.child.events():
                if event.get("event") == "setup-error" and self.setup_error is None:
                    self.setup_error = str(event.get("message"))
                    self._queue.put(event)
                    self._stop_build()
                    continue
                self._queue.put(event)
        finally:
            self._queue.put(None)

    def _stop_build(self) -> None:
        """Kill the build's compilers until the build is over: one may start after the child's message came."""
        while not self.build_over.is_set():
            for process in bounded.live():
                if process is not self.child.bounded:
                    process.kill()
            self.build_over.wait(0.05)

    def __iter__(self) -> Iterator[dict[str, Any]]:
        from derivls.base.children import exit_if_orphaned

        while True:
            self._watch()
            try:
                event = self._queue.get(timeout=POLL_SECONDS)
            except queue.Empty:
                exit_if_orphaned()  # (the gradcheck worker whose server is gone: its SIGTERM lost or late)
                continue
            if event is None:
                return
            if event.get("event") == "unit-start":
                self._running = (str(event.get("id")), time.monotonic())
            elif event.get("event") == "unit":
                self._running = None
            yield event

    def pending(self) -> list[dict[str, Any]]:
        """The events read and not yet taken (the child's end not awaited)."""
        found: list[dict[str, Any]] = []
        while True:
            try:
                event = self._queue.get_nowait()
            except queue.Empty:
                return found
            if event is not None:
                found.append(event)

    def _watch(self) -> None:
        """Kill the child when the unit it checks has passed its bound (its events then end: see timed_out)."""
        running = self._running
        if running is not None and self.timed_out is None and time.monotonic() - running[1] > self.unit_seconds:
            self.timed_out = running[0]
            self.child.bounded.kill(bounded.TIME)
