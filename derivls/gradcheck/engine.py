"""Gradcheck some units of a file: render, build (cached), run the torch child, interpret. No printing."""

from __future__ import annotations

import queue
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from derivls import bounded
from derivls.compile.file_templates import Templates
from derivls.compile.toolchain import SetupError, Toolchain, cache_root
from derivls.compile.units import Unit
from derivls.diagnostics import Diagnostic
from derivls.gradcheck import build as building
from derivls.gradcheck import reach
from derivls.gradcheck.results import Summary, interpret
from derivls.gradcheck.runner import Child, torch_folder
from derivls.gradcheck.source import render
from derivls.report import plural


class Cancelled(Exception):
    pass


@dataclass
class Timings:
    build: float = 0.0
    build_reused: bool = False
    pch_built: bool = False
    run: float = 0.0


@dataclass
class GradcheckResult:
    diagnostics: list[Diagnostic]
    summary: Summary
    timings: Timings = field(default_factory=Timings)
    torch_version: str | None = None


def gradcheck_units(
    units: Sequence[Unit],
    derivatives: Path,
    *,
    python: str | None = None,
    cxx: str | None = None,
    torch_include: str | None = None,
    double_backward: bool = False,
    max_samples: int = 4,
    cache: Path | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
) -> GradcheckResult:
    """Raises SetupError (no compiler, headers, torch) and Cancelled."""
    timings = Timings()
    templates = Templates(derivatives)
    toolchain = building.gradcheck_toolchain(Toolchain.find(derivatives, cxx, torch_include))
    rendered = render(units, building.LIBRARY_PLACEHOLDER, templates)
    if not rendered.plans:
        _, summary = interpret([], [], rendered.not_buildable)
        return GradcheckResult([], summary, timings)
    request = {
        "units": [p.to_json() for p in rendered.plans],
        "double_backward": double_backward,
        "max_samples": max_samples,
    }
    index_file = _reach_file(python, cache)
    request["reach"] = reach.load(index_file)  # None: the child makes it and sends it (kept for the next run)
    # the child imports torch and finds its OpInfo samples while g++ compiles (seconds of each, 2 cores); its
    # events are read meanwhile, so a set-up error (numpy or expecttest missing) stops the build at once
    child = Child(python, request)
    reader = _EventReader(child)
    try:
        if progress:
            progress(f"building {plural(len(rendered.plans), 'unit')} (reused when already built)")
        started = time.monotonic()
        built = building.build(rendered.source, toolchain, templates, cache, units=len(rendered.plans))
        timings.build, timings.build_reused = time.monotonic() - started, built.reused
        timings.pch_built = bool(built.pch and built.pch.built)
        if cancel is not None and cancel.is_set():
            raise Cancelled()
    except BaseException as e:
        reader.build_over.set()
        child.close()
        if reader.setup_error is not None:  # (the build was stopped for it)
            raise SetupError(reader.setup_error) from None
        if isinstance(e, building.BuildLimit):  # one diagnostic per entry of the build: a bound reached on them
            return _limited(rendered, str(e), e.which, building.build_limits(len(rendered.plans)), timings)
        raise
    reader.build_over.set()
    if reader.setup_error is not None:
        child.close()
        raise SetupError(reader.setup_error)
    if progress:
        progress(f"running gradcheck on {plural(len(rendered.plans), 'unit')}")
    started = time.monotonic()
    child.send({"library": str(built.library), "namespace": built.namespace})
    child.end_input()
    events: list[dict[str, Any]] = []
    version = None
    if cancel is not None:
        stop = cancel

        def watch() -> None:
            stop.wait()
            child.cancel()

        threading.Thread(target=watch, daemon=True).start()
    done = 0
    for event in reader:
        events.append(event)
        if event.get("event") == "torch":
            version = event.get("version")
        elif event.get("event") == "setup-error":  # (torch without what its OpInfo database imports)
            child.close()
            raise SetupError(str(event.get("message")))
        elif event.get("event") == "reach-index":
            reach.save(index_file, event.get("index"))
        elif event.get("event") == "unit":
            done += 1
            if progress:
                progress(f"checked {done}/{len(rendered.plans)}")
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    timings.run = time.monotonic() - started
    if not any(e.get("event") == "done" for e in events):
        last = child.stderr.strip().splitlines()[-1:] if child.stderr.strip() else []
        limit = child.limit_hit()
        if limit is not None:
            died = f"the torch process ran out of {child.limits.describe(limit)} and was stopped"
        else:
            died = (
                f"the gradcheck process ended early (status {child.process.returncode}){': ' + last[0] if last else ''}"
            )
        if not any(e.get("event") == "unit" for e in events):
            raise SetupError(died)
        events = [
            *events,
            *(
                {"event": "unit", "id": p.id, "status": "not-checkable", "reason": f"harness: {died}"}
                for p in rendered.plans
                if p.id not in {e.get("id") for e in events}
            ),
        ]
    diagnostics, summary = interpret(events, rendered.plans, rendered.not_buildable)
    summary.unreachable_helpers = built.unreachable
    return GradcheckResult(diagnostics, summary, timings, version)


def gradcheck_in_session(
    units: Sequence[Unit],
    derivatives: Path,
    session: Any,
    *,
    cxx: str | None = None,
    torch_include: str | None = None,
    double_backward: bool = False,
    max_samples: int = 4,
    cache: Path | None = None,
    cancel: threading.Event | None = None,
    progress: Callable[[str], None] | None = None,
) -> GradcheckResult:
    """gradcheck_units in a live session (derivls.gradcheck.session): the session finds the samples while g++
    builds the extension (only the selection's entries, pch cached), then loads it (a library of its own
    namespace per build) and checks. Raises SessionUnavailable (not warm: run gradcheck_units), SessionDied (it
    ended during the run: it is restarted), SetupError and Cancelled."""
    from derivls.gradcheck.session import SessionDied, run_seconds

    timings = Timings()
    templates = Templates(derivatives)
    toolchain = building.gradcheck_toolchain(Toolchain.find(derivatives, cxx, torch_include))
    rendered = render(units, building.LIBRARY_PLACEHOLDER, templates)
    if not rendered.plans:
        _, summary = interpret([], [], rendered.not_buildable)
        return GradcheckResult([], summary, timings)
    plans = [p.to_json() for p in rendered.plans]
    index_file = _reach_file(session.python, cache)
    events: list[dict[str, Any]] = []
    with session.use() as conn:
        prepare: dict[str, Any] = {"op": "prepare", "units": plans, "max_samples": max_samples}
        if not getattr(session, "reach_sent", False):  # (once per session process: a restart clears it)
            prepare["reach"] = reach.load(index_file)
            session.reach_sent = True
        conn.send(prepare)  # the session finds the samples while g++ compiles
        if progress:
            progress(f"building {plural(len(plans), 'unit')} (reused when already built)")
        started = time.monotonic()
        try:
            built = building.build(rendered.source, toolchain, templates, cache, units=len(plans))
        except building.BuildLimit as e:
            return _limited(rendered, str(e), e.which, building.build_limits(len(plans)), timings)
        timings.build, timings.build_reused = time.monotonic() - started, built.reused
        timings.pch_built = bool(built.pch and built.pch.built)
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        if progress:
            progress(f"running gradcheck on {plural(len(plans), 'unit')} (session)")
        started = time.monotonic()
        conn.send(
            {
                "op": "check",
                "library": str(built.library),
                "namespace": built.namespace,
                "units": plans,
                "max_samples": max_samples,
                "double_backward": double_backward,
            }
        )
        done = 0
        try:
            for event in conn.events(run_seconds(len(plans)), cancel):
                events.append(event)
                if event.get("event") == "reach-index":
                    reach.save(index_file, event.get("index"))
                elif event.get("event") == "unit":
                    done += 1
                    if progress:
                        progress(f"checked {done}/{len(plans)}")
        except SessionDied:
            if cancel is not None and cancel.is_set():
                raise Cancelled() from None
            raise
    timings.run = time.monotonic() - started
    diagnostics, summary = interpret(events, rendered.plans, rendered.not_buildable)
    summary.unreachable_helpers = built.unreachable
    return GradcheckResult(diagnostics, summary, timings, session.torch_version)


class _EventReader:
    """The child's events, read in a thread from its start: iterate to get them in order. A `setup-error`
    event (torch without numpy / expecttest) kills the build's compilers at once (derivls.bounded: every
    bounded process but the child), so a cold run says so in seconds, not after a 40 s compile."""

    def __init__(self, child: Child) -> None:
        self.child = child
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
        return iter(self._queue.get, None)


def _limited(rendered: Any, message: str, which: str, limits: Any, timings: Timings) -> GradcheckResult:
    """The result of a build stopped at a bound: each unit not checkable, a compile-limit diagnostic on each entry."""
    from derivls.compile.engine import limit_diagnostic

    events = [
        {"event": "unit", "id": p.id, "status": "not-checkable", "reason": f"build: {message}"} for p in rendered.plans
    ]
    _, summary = interpret(events, rendered.plans, rendered.not_buildable)
    seen: set[int] = set()
    diagnostics = []
    for plan in rendered.plans:
        if plan.unit.entry_line not in seen:
            seen.add(plan.unit.entry_line)
            diagnostics.append(limit_diagnostic(plan.unit, which, limits, "gradcheck"))
    return GradcheckResult(diagnostics, summary, timings)


def _reach_file(python: str | None, cache: Path | None) -> Path | None:
    """Where the reach index of `python`'s torch build is kept (None: no cache folder or no torch)."""
    import sys

    try:
        root = cache or cache_root()
    except SetupError:
        return None
    return reach.index_path(root, torch_folder(python or sys.executable))
