"""The server's GC policy: no automatic collection between keystrokes, one once typing pauses."""

from __future__ import annotations

import asyncio
import gc
import resource
import subprocess
import sys
import threading
from pathlib import Path

from derivls.base import gcpolicy


def typing_then_a_pause() -> None:
    """The scenario, run in a fresh interpreter: no thread or finalizer of another test collects meanwhile."""
    gcpolicy.IDLE_SECONDS = 0.05
    collections: list[int] = []

    def observe(phase: str, info: dict[str, int]) -> None:
        # only this thread's: a thread an earlier test left (e.g. an entry cache's background save) may collect
        if phase == "start" and threading.current_thread() is threading.main_thread():
            collections.append(info["generation"])

    async def typing() -> None:
        loop = asyncio.get_running_loop()
        for _ in range(5):  # keystrokes closer together than the pause: no collection in between
            gcpolicy.collect_when_idle(loop)
            assert not gc.isenabled()
            garbage = [[] for _ in range(2000)]  # would trigger automatic young collections
            del garbage
            await asyncio.sleep(0.01)
        assert 2 not in collections  # (the test process may run explicit young collections of its own)
        del collections[:]
        await asyncio.sleep(0.2)  # a pause: one full collection
        assert collections == [2]

    was_enabled = gc.isenabled()
    gc.callbacks.append(observe)
    try:
        asyncio.run(typing())
    finally:
        gc.callbacks.remove(observe)
        if gcpolicy._idle_handle is not None:
            gcpolicy._idle_handle.cancel()
            gcpolicy._idle_handle = None
        if was_enabled:
            gc.enable()


def test_after_an_edit_the_gc_waits_for_a_pause_then_collects() -> None:
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", "from tests.unit.test_gcpolicy import typing_then_a_pause as t; t()"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr


def test_typing_without_a_pause_still_collects_the_young_objects_now_and_then(monkeypatch) -> None:
    monkeypatch.setattr(gcpolicy, "MAX_YOUNG", 1000)
    collections: list[int] = []

    def observe(phase: str, info: dict[str, int]) -> None:
        if phase == "start":
            collections.append(info["generation"])

    was_enabled = gc.isenabled()
    loop = asyncio.new_event_loop()
    gc.collect()  # no young objects yet
    gc.callbacks.append(observe)
    try:
        gcpolicy.collect_when_idle(loop)
        assert collections == []
        kept = [[] for _ in range(2000)]  # more young objects than MAX_YOUNG, no pause
        gcpolicy.collect_when_idle(loop)
        assert collections == [1] and len(kept) == 2000
    finally:
        gc.callbacks.remove(observe)
        if gcpolicy._idle_handle is not None:
            gcpolicy._idle_handle.cancel()
            gcpolicy._idle_handle = None
        loop.close()
        if was_enabled:
            gc.enable()


def test_a_pause_inside_the_idle_policy_does_not_turn_automatic_collection_back_on() -> None:
    was_enabled = gc.isenabled()
    gc.enable()
    try:
        loop = asyncio.new_event_loop()
        with gcpolicy.paused_gc():
            gcpolicy.collect_when_idle(loop)
        assert not gc.isenabled()
        with gcpolicy.paused_gc():
            pass
        assert not gc.isenabled()
        if gcpolicy._idle_handle is not None:
            gcpolicy._idle_handle.cancel()
            gcpolicy._idle_handle = None
        loop.close()
    finally:
        if was_enabled:
            gc.enable()


def test_a_text_made_again_after_each_keystroke_reuses_its_memory() -> None:
    """glibc: after reuse_large_blocks, a freed 3 MB text's pages serve the next one (no page faults)."""
    gcpolicy.reuse_large_blocks()
    gcpolicy.reuse_large_blocks()  # once is enough; again is harmless
    text = "x" * 3_000_000
    edited = text[:10] + "y" + text[10:]
    del edited
    before = resource.getrusage(resource.RUSAGE_SELF).ru_minflt
    for i in range(5):
        edited = text[:i] + "y" + text[i:]
        del edited
    faults = resource.getrusage(resource.RUSAGE_SELF).ru_minflt - before
    assert faults < 100  # fresh pages for each copy: ~730 faults per 3 MB
    gcpolicy.release_free_memory()


def edit_cycles() -> None:
    """The scenario of the test below, in a fresh interpreter (it freezes the heap)."""

    async def cycles() -> None:
        loop = asyncio.get_running_loop()
        gc.enable()
        with gcpolicy.edit_cycle(loop, first=False, cold_seconds=60) as cycle:
            assert not gc.isenabled()  # no GC pass between a keystroke and its diagnostics
        assert gc.isenabled() and not cycle.froze  # nothing analysed: the GC is left as it was
        assert gcpolicy._idle_handle is None

        with gcpolicy.edit_cycle(loop, first=False, cold_seconds=60) as cycle:
            cycle.analysed()
        assert not cycle.froze and gc.get_freeze_count() == 0  # a warm edit: nothing frozen
        assert not gc.isenabled() and gcpolicy._idle_handle is not None  # collections wait for a pause

        kept = [[] for _ in range(1000)]
        with gcpolicy.edit_cycle(loop, first=True, cold_seconds=60) as cycle:
            cycle.analysed()
        assert cycle.froze and gc.get_freeze_count() > 1000  # a document's first analysis: frozen
        with gcpolicy.edit_cycle(loop, first=False, cold_seconds=0) as cycle:
            cycle.analysed()
        assert cycle.froze  # a cold one: frozen
        del kept
        gcpolicy._idle_handle.cancel()

    asyncio.run(cycles())


def test_an_edit_cycle_pauses_the_gc_then_freezes_after_a_first_or_cold_analysis() -> None:
    root = Path(__file__).resolve().parents[2]
    run = subprocess.run(
        [sys.executable, "-c", "from tests.unit.test_gcpolicy import edit_cycles as t; t()"],
        cwd=root,
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert run.returncode == 0, run.stderr
