"""The server runs the entry cache's background saves on its event loop (derivls/server/documents/saving.py):
not before SAVE_DELAY, only once no document changed for QUIET seconds, in slices of at most SLICE."""

from __future__ import annotations

import asyncio
import time
from collections.abc import Iterator

import pytest

from derivls.derivatives import entrycache
from derivls.server.documents import saving


class FakeCache:
    """An EntryCache's `saving()`: `steps` steps of `seconds` each, recording when each ran."""

    def __init__(self, steps: int, seconds: float = 0.0) -> None:
        self.left = steps
        self.seconds = seconds
        self.ran: list[float] = []

    def saving(self) -> Iterator[None]:
        while self.left:
            self.left -= 1
            self.ran.append(time.monotonic())
            end = time.perf_counter() + self.seconds
            while time.perf_counter() < end:
                pass
            yield


@pytest.fixture(autouse=True)
def short_delays(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entrycache, "SAVE_DELAY", 0.05)
    monkeypatch.setattr(saving, "QUIET", 0.1)
    monkeypatch.setattr(saving, "_saves", None)


def test_a_save_waits_for_its_delay_and_runs_in_slices() -> None:
    async def main() -> tuple[float, FakeCache, list[float]]:
        cache = FakeCache(40, 0.001)
        start = time.monotonic()
        assert saving._take(cache)  # type: ignore[arg-type]
        ticks: list[float] = []  # the loop keeps turning while it saves
        while cache.left and time.monotonic() - start < 10:
            ticks.append(time.monotonic())
            await asyncio.sleep(0)
        return start, cache, ticks

    start, cache, ticks = asyncio.run(main())
    assert cache.left == 0
    assert cache.ran[0] - start >= 0.05
    gaps = [b - a for a, b in zip(ticks, ticks[1:])]
    assert max(gaps) < saving.SLICE + 0.05  # a slice is ~SLICE (+ one step); generous for a loaded machine


def test_changes_postpone_a_save_until_they_pause() -> None:
    async def main() -> tuple[list[float], FakeCache]:
        cache = FakeCache(3)
        assert saving._take(cache)  # type: ignore[arg-type]
        changes = []
        for _ in range(10):  # a change every 30 ms for 0.3 s: no step meanwhile
            saving.document_changed()
            changes.append(time.monotonic())
            await asyncio.sleep(0.03)
        deadline = time.monotonic() + 10
        while cache.left and time.monotonic() < deadline:
            await asyncio.sleep(0.01)
        return changes, cache

    changes, cache = asyncio.run(main())
    assert cache.left == 0
    assert cache.ran[0] - changes[-1] >= 0.1


def test_outside_an_event_loop_the_runner_declines() -> None:
    assert not saving._take(FakeCache(1))  # type: ignore[arg-type]


def test_typing_without_a_pause_postpones_a_save_only_so_long(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(saving, "MAX_WAIT", 0.2)

    async def main() -> tuple[float, FakeCache, float]:
        cache = FakeCache(3)
        start = time.monotonic()
        assert saving._take(cache)  # type: ignore[arg-type]
        while cache.left and time.monotonic() - start < 5:  # a change every 20 ms, never a pause
            saving.document_changed()
            await asyncio.sleep(0.02)
        return start, cache, time.monotonic()

    start, cache, end = asyncio.run(main())
    assert cache.left == 0  # saved while typing went on
    assert cache.ran[0] - start >= 0.05 + 0.2  # after SAVE_DELAY + MAX_WAIT
    assert end - start < 2
