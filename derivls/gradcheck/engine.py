"""Gradcheck some units of a file: render, build (cached), run the torch child, interpret. No printing."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from derivls.base.diagnostics import Diagnostic
from derivls.base.words import plural
from derivls.compile.file_templates import Templates
from derivls.compile.toolchain import SetupError, Toolchain
from derivls.compile.units import Unit
from derivls.gradcheck import build as building
from derivls.gradcheck import edited, reach, runner
from derivls.gradcheck import jit as jitting
from derivls.gradcheck.entrybuild import Cancelled, build_checkable, render_units
from derivls.gradcheck.events import EventReader
from derivls.gradcheck.results import Summary, interpret
from derivls.gradcheck.runner import Child, child_limits
from derivls.gradcheck.source import render
from derivls.gradcheck.trials import Suggestion, with_fixes


@dataclass
class Timings:
    build: float = 0.0
    build_reused: bool = False
    pch_built: bool = False
    run: float = 0.0
    repair: float = 0.0  # the repair phase: candidates made, built, checked (0: none tried)
    repairs_tried: int = 0  # candidates checked
    repair_build: float = 0.0  # of `repair`: building the candidates' extension (every attempt)
    repair_error: str | None = None  # why the repair phase stopped without an answer (None: it did not)
    jit: bool = False  # the formulas were defined in the session by its JIT (no g++ build)
    jit_error: str | None = None  # why the JIT did not serve the run (then g++ built it)
    jit_define: float = 0.0  # of `run` and `repair`: the session's JIT defining the code (Cling), in seconds


@dataclass
class GradcheckResult:
    diagnostics: list[Diagnostic]
    summary: Summary
    timings: Timings = field(default_factory=Timings)
    torch_version: str | None = None
    suggestions: list[Suggestion] = field(default_factory=list)  # (each also a fix of its diagnostic)
    # FunctionsManual.cpp (derivls.gradcheck.edited): its path, the diagnostics on it (a helper that does not
    # compile; a failure of a formula calling an edited helper, on the helper's name) and what was compiled of it
    manual_path: Path | None = None
    manual_diagnostics: list[Diagnostic] = field(default_factory=list)
    manual_summary: dict[str, Any] | None = None


@dataclass(frozen=True)
class RepairSource:
    """What the repair phase needs to make candidates: the document's text and its analysis (the units' own)."""

    text: str
    analysis: Any


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
    repair: RepairSource | None = None,
    manual: Any = None,
) -> GradcheckResult:
    """Raises SetupError (no compiler, headers, torch) and Cancelled. `repair`: after the checks, try the usual
    repairs of each failed formula in the same child (derivls.gradcheck.trials). `manual`: the FunctionsManual.cpp
    whose edited helpers the formulas call (a derivls.gradcheck.edited.EditedManual)."""
    timings = Timings()
    templates = Templates(derivatives)
    toolchain = building.gradcheck_toolchain(Toolchain.find(derivatives, cxx, torch_include))
    code = manual.code(units, toolchain.include_dirs) if manual is not None else None
    rendered = render_units(units, templates, code)
    helper_errors: list[Diagnostic] = []

    def with_manual(result: GradcheckResult) -> GradcheckResult:
        if manual is None:
            return result
        result.manual_path = manual.path
        final = getattr(rendered, "manual", None)
        defined = sorted(final.names) if final is not None else []
        result.manual_summary = {**manual.summary(), "compiled": defined}
        if final is not None:
            result.diagnostics, on_helpers = edited.failure_diagnostics(
                result.diagnostics, units, final.names, manual, derivatives
            )
        else:
            on_helpers = []
        result.manual_diagnostics = sorted([*helper_errors, *on_helpers], key=lambda d: (d.span.line, d.span.column))
        return result

    if not rendered.plans:
        _, summary = interpret([], [], rendered.not_buildable)
        return with_manual(GradcheckResult([], summary, timings))
    request = {
        "units": [p.to_json() for p in rendered.plans],
        "double_backward": double_backward,
        "max_samples": max_samples,
    }
    index_file = _reach_file(python, cache)
    request["reach"] = reach.load(index_file)  # None: the child makes it and sends it (kept for the next run)
    # the child imports torch and finds its OpInfo samples while g++ compiles (seconds of each, 2 cores); its
    # events are read meanwhile, so a set-up error (numpy or expecttest missing) stops the build at once
    # (the repair phase checks its candidates in the same child: a bound for about as many units again)
    child = Child(python, request, child_limits(2 * len(rendered.plans) + 2) if repair is not None else None)
    reader = EventReader(child)
    try:
        if progress:
            progress(f"building {plural(len(rendered.plans), 'unit')} (reused when already built)")
        started = time.monotonic()
        first = rendered
        built, rendered, not_compiled = build_checkable(
            units, rendered, toolchain, templates, cache, cancel, manual, helper_errors
        )
        timings.build = time.monotonic() - started
        if built is not None:
            timings.build_reused = built.reused
            timings.pch_built = bool(built.pch and built.pch.built)
        if cancel is not None and cancel.is_set():
            raise Cancelled()
    except BaseException as e:
        reader.build_over.set()
        child.close()
        if reader.setup_error is not None:  # (the build was stopped for it)
            raise SetupError(reader.setup_error) from None
        if isinstance(e, building.BuildLimit):  # one diagnostic per entry of the build: a bound reached on them
            return with_manual(_limited(rendered, str(e), e.which, building.build_limits(len(rendered.plans)), timings))
        raise
    reader.build_over.set()
    if reader.setup_error is not None:
        child.close()
        raise SetupError(reader.setup_error)
    if built is None:  # no entry's code compiles: their compile errors are the result
        child.close()
        _, summary = interpret([], [], rendered.not_buildable)
        return with_manual(GradcheckResult(not_compiled, summary, timings))
    if rendered is not first:  # entries left out for their compile errors: the others' plans, in a new child
        child.close()
        for event in reader.pending():  # (the reach index the first child made, kept for the new one)
            if event.get("event") == "reach-index":
                reach.save(index_file, event.get("index"))
                request["reach"] = event.get("index")
        request["units"] = [p.to_json() for p in rendered.plans]
        child = Child(python, request, child_limits(2 * len(rendered.plans) + 2) if repair is not None else None)
        reader = EventReader(child)
        reader.build_over.set()
    if progress:
        progress(f"running gradcheck on {plural(len(rendered.plans), 'unit')}")
    started = time.monotonic()
    child.send({"library": str(built.library), "namespace": built.namespace})
    if repair is None:
        child.end_input()
    events: list[dict[str, Any]] = []
    suggestions: list[Suggestion] = []
    version = None
    if cancel is not None:
        stop = cancel

        def watch() -> None:
            stop.wait()
            child.cancel()

        threading.Thread(target=watch, daemon=True).start()
    done = 0
    stream = iter(reader)
    for event in stream:
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
        elif event.get("event") == "done" and repair is not None:
            timings.run = time.monotonic() - started

            def check(built: Any, plans: list[dict[str, Any]]) -> list[dict[str, Any]]:
                child.send(
                    {"repair": True, "library": str(built.library), "namespace": built.namespace, "units": plans}
                )
                child.end_input()
                answers = []
                for answer in stream:
                    answers.append(answer)
                    if answer.get("event") == "done":
                        break
                return answers

            try:
                suggestions = repair_phase(
                    _repairable(events, rendered, manual),
                    rendered,
                    repair,
                    toolchain,
                    templates,
                    cache,
                    check,
                    timings,
                    progress,
                    cancel,
                )
            finally:
                child.end_input()
            break
    if cancel is not None and cancel.is_set():
        raise Cancelled()
    restarts = 0
    while not any(e.get("event") == "done" for e in events):
        if reader.timed_out is not None:  # that unit is not checkable; the ones after it go to a new child
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            events.append(
                {
                    "event": "unit",
                    "id": reader.timed_out,
                    "status": "not-checkable",
                    "reason": runner.ran_out(reader.unit_seconds),
                    "failures": [],
                }
            )
            answered = {e.get("id") for e in events if e.get("event") == "unit"}
            rest = [p.to_json() for p in rendered.plans if p.id not in answered]
            if not rest:
                events.append({"event": "done"})
                break
            if progress:
                progress(f"a unit ran out of its time: checking the other {plural(len(rest), 'unit')} in a new child")
            child, reader = _restarted(python, request, rest, index_file, built)
            events.extend(reader)
            continue
        last = child.stderr.strip().splitlines()[-1:] if child.stderr.strip() else []
        limit = child.limit_hit()
        if limit is not None:
            died = f"the torch process ran out of {child.limits.describe(limit)} and was stopped"
        else:
            died = (
                f"the gradcheck process ended early (status {child.process.returncode}){': ' + last[0] if last else ''}"
            )
        crashed = crashed_unit(events)
        status = child.process.returncode
        if limit is None and status is not None and status < 0 and crashed is not None and restarts < MAX_RESTARTS:
            # torch itself crashed (a signal) on one unit's sample: that unit says so, the rest go to a new child
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            events.append(
                {
                    "event": "unit",
                    "id": crashed,
                    "status": "not-checkable",
                    "reason": f"crashed: {died}",
                    "failures": [],
                }
            )
            answered = {e.get("id") for e in events if e.get("event") == "unit"}
            rest = [p.to_json() for p in rendered.plans if p.id not in answered]
            if rest:
                restarts += 1
                if progress:
                    progress(f"torch crashed on a sample: checking the other {plural(len(rest), 'unit')} again")
                child, reader = _restarted(python, request, rest, index_file, built)
                events.extend(reader)
                continue
            events.append({"event": "done"})
            break
        if not any(e.get("event") == "unit" for e in events):
            raise SetupError(died)
        events = [
            *events,
            *(
                {"event": "unit", "id": p.id, "status": "not-checkable", "reason": f"harness: {died}"}
                for p in rendered.plans
                if p.id not in {e.get("id") for e in events if e.get("event") == "unit"}
            ),
        ]
        break
    if not timings.run:
        timings.run = time.monotonic() - started
    diagnostics, summary = interpret(events, rendered.plans, rendered.not_buildable)
    summary.unreachable_helpers = built.unreachable
    diagnostics = sorted([*not_compiled, *diagnostics], key=lambda d: (d.span.line, d.span.column))
    return with_manual(GradcheckResult(with_fixes(diagnostics, suggestions), summary, timings, version, suggestions))


MAX_RESTARTS = 3  # new children after torch crashed on a unit's sample (each imports torch again: seconds)


def _restarted(
    python: str | None, request: dict[str, Any], rest: list[dict[str, Any]], index_file: Path | None, built: Any
) -> tuple[Child, EventReader]:
    """A new one-shot child for the units `rest` of the run (after one crashed or ran out of its time), given the
    built extension at once; its events, each unit bounded as in the first child."""
    child = Child(python, {**request, "units": rest, "reach": reach.load(index_file)})
    child.send({"library": str(built.library), "namespace": built.namespace})
    child.end_input()
    reader = EventReader(child)
    reader.build_over.set()
    return child, reader


def crashed_unit(events: list[dict[str, Any]]) -> str | None:
    """The unit the child had started (its `unit-start`) and not answered when it died."""
    answered = {e.get("id") for e in events if e.get("event") == "unit"}
    started = [e.get("id") for e in events if e.get("event") == "unit-start"]
    return next((str(i) for i in reversed(started) if i not in answered), None)


def prefetch_in_session(
    units: Sequence[Unit], derivatives: Path, session: Any, *, max_samples: int = 4, cache: Path | None = None
) -> bool:
    """Have a warm, idle session find the samples of `units` now (an entry being edited), so that the save's run
    finds them ready; nothing is awaited. False when nothing was sent (no unit to check, the session busy)."""
    rendered = render(units, building.LIBRARY_PLACEHOLDER, Templates(derivatives))
    if not rendered.plans:
        return False
    message: dict[str, Any] = {
        "op": "prepare",
        "units": [p.to_json() for p in rendered.plans],
        "max_samples": max_samples,
    }
    first = not getattr(session, "reach_sent", False)
    if first:  # (as a run's first prepare: the process is sent the reach index once)
        message["reach"] = reach.load(_reach_file(session.python, cache))
    sent = bool(session.send_if_idle(message))
    if sent and first:
        session.reach_sent = True
    return sent


def _repairable(events: list[dict[str, Any]], rendered: Any, manual: Any) -> list[dict[str, Any]]:
    """The events whose units a repair may be offered for: not a unit calling an edited FunctionsManual.cpp helper
    (its formula is not where to look)."""
    if manual is None:
        return events
    helper_units = {p.id for p in rendered.plans if manual.edited_reached(p.unit)}
    return [e for e in events if e.get("id") not in helper_units]


def repair_phase(
    events: list[dict[str, Any]],
    rendered: Any,
    repair: RepairSource,
    toolchain: Toolchain,
    templates: Templates,
    cache: Path | None,
    check: Callable[[Any, list[dict[str, Any]]], list[dict[str, Any]]],
    timings: Timings,
    progress: Callable[[str], None] | None = None,
    cancel: threading.Event | None = None,
    jit_check: Callable[[Any, list[dict[str, Any]]], list[dict[str, Any]] | None] | None = None,
) -> list[Suggestion]:
    """The repairs offered for the failed units of `events`: their candidates (trials.make_trials) rendered as
    the build renders, built in one extension (a candidate whose code does not compile is dropped, and the rest
    built again: at most twice), checked by `check(built, plans)` (each plan with `like`: the failed unit whose
    samples it takes; the child stops a candidate at its first failure), and kept where exactly one passed.
    `jit_check(rendered, plans)`: the session's JIT first (None when it did not take them: then g++)."""
    from derivls.gradcheck.trials import culprits, make_trials, offers

    by_id = {p.id: p for p in rendered.plans}
    failed = [
        (str(e["id"]), by_id[e["id"]].unit, list(e.get("failures") or ()))
        for e in events
        if e.get("event") == "unit" and e.get("status") == "failed" and e.get("id") in by_id and e.get("failures")
    ]
    if not failed:
        return []
    started = time.monotonic()
    try:
        trials = make_trials(repair.text, repair.analysis, failed)
        units = [t.unit for t in trials.trials]
        trial_of = {id(t.unit): t for t in trials.trials}

        def trial_plans(candidates: Any) -> list[dict[str, Any]]:  # (each checked on its failed unit's samples)
            return [
                {**p.to_json(), "like": trial_of[id(p.unit)].failed, "first_failure": True} for p in candidates.plans
            ]

        built = None
        if jit_check is not None and units:
            if progress:
                progress(f"trying {plural(len(units), 'repair')}")
            candidates = render_units(units, templates, getattr(rendered, "manual", None))
            if not candidates.plans:
                return []
            plans = trial_plans(candidates)
            answers = jit_check(candidates, plans)
            if answers is not None:
                timings.repairs_tried = len(plans)
                return offers(trials, candidates.plans, answers)
        for _ in range(3):
            if not units:
                return []
            if progress:
                progress(f"trying {plural(len(units), 'repair')}")
            candidates = render_units(units, templates, getattr(rendered, "manual", None))
            if not candidates.plans:
                return []
            building_started = time.monotonic()
            try:
                built = building.build(candidates.source, toolchain, templates, cache, units=len(candidates.plans))
                break
            except building.CompileFailed as e:  # (a candidate the build would reject: never the repair)
                by_plan = {p.id: next(t for t in trials.trials if t.unit is p.unit) for p in candidates.plans}
                blamed = culprits(candidates.source, "\n".join(e.lines), by_plan)
                if not blamed:
                    return []
                gone = {id(by_plan[pid].unit) for pid in blamed}
                units = [u for u in units if id(u) not in gone]
            finally:
                timings.repair_build += time.monotonic() - building_started
        if built is None:
            return []
        if cancel is not None and cancel.is_set():
            raise Cancelled()
        plans = trial_plans(candidates)
        timings.repairs_tried = len(plans)
        answers = check(built, plans)
        return offers(trials, candidates.plans, answers)
    except Cancelled:
        raise
    except SetupError as e:  # (a bound of the candidates' build, a refused source): no suggestion, the checks stand
        timings.repair_error = str(e.args[0] if e.args else e)
        return []
    except Exception as e:  # a bug of the repair phase: no suggestion, never the run's results lost
        timings.repair_error = f"{type(e).__name__}: {e}"
        return []
    finally:
        timings.repair = time.monotonic() - started


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
    repair: RepairSource | None = None,
    jit: bool = True,
    on_checked: Callable[[GradcheckResult], None] | None = None,
    manual: Any = None,
) -> GradcheckResult:
    """gradcheck_units in a live session (derivls.gradcheck.session): when its JIT is ready and the extension is
    not built yet, the session defines the code itself (derivls.gradcheck.jit) and checks; else (or when the JIT
    did not take it) the session finds the samples while g++ builds the extension (only the selection's entries,
    pch cached), then loads it (a library of its own namespace per build) and checks. `jit` False: g++ builds it
    (the caller knows the code has errors: Cling would reject it, and a rejection costs the JIT a restart).
    `on_checked`: given the checks' result before the repair phase, when a unit failed and repairs will be tried.
    `manual`: as gradcheck_units' (the edited FunctionsManual.cpp helpers are in the source the JIT defines, in a
    namespace of that source's own: derivls.gradcheck.jit). Raises SessionUnavailable (not warm: run gradcheck_units), SessionDied (it ended during the run: it is
    restarted), SetupError and Cancelled."""
    from derivls.gradcheck.session import SessionDied, UnitTimedOut, run_seconds

    timings = Timings()
    templates = Templates(derivatives)
    toolchain = building.gradcheck_toolchain(Toolchain.find(derivatives, cxx, torch_include))
    code = manual.code(units, toolchain.include_dirs) if manual is not None else None
    rendered = render_units(units, templates, code)
    helper_errors: list[Diagnostic] = []

    def with_manual(result: GradcheckResult) -> GradcheckResult:
        return _with_manual(result, manual, rendered, units, derivatives, helper_errors)

    if not rendered.plans:
        _, summary = interpret([], [], rendered.not_buildable)
        return with_manual(GradcheckResult([], summary, timings))
    plans = [p.to_json() for p in rendered.plans]
    index_file = _reach_file(session.python, cache)
    events: list[dict[str, Any]] = []
    unreachable: list[str] = []
    not_compiled: list[Diagnostic] = []  # the compile errors of the entries left out of the build
    with session.use() as conn:
        prepare: dict[str, Any] = {"op": "prepare", "units": plans, "max_samples": max_samples}
        if not getattr(session, "reach_sent", False):  # (once per session process: a restart clears it)
            prepare["reach"] = reach.load(index_file)
            session.reach_sent = True
        conn.send(prepare)  # the session finds the samples while g++ compiles

        hung: dict[str, dict[str, Any]] = {}  # unit id -> its answer: it ran out of its time (never sent again)

        def collect(message: dict[str, Any], count: int, counted: bool) -> list[dict[str, Any]]:
            """The session's answers to `message` (a check of its units). A unit past its bound is answered "it ran
            out of N s" at once: the session is killed and restarted, and the units after it are checked by the new
            process (none is run by a one-shot child)."""
            got = [hung[u["id"]] for u in message["units"] if u["id"] in hung]
            bound = runner.unit_seconds(runner.SESSION_UNIT_SECONDS)
            while True:
                pending = [u for u in message["units"] if u["id"] not in {e.get("id") for e in got}]
                if not pending:
                    got.append({"event": "done"})
                    return got
                conn.send({**message, "units": pending, "max_samples": max_samples, "double_backward": double_backward})
                pid = session.pid
                try:
                    for event in conn.events(run_seconds(len(pending)), cancel, bound):
                        got.append(event)
                        if event.get("event") == "reach-index":
                            reach.save(index_file, event.get("index"))
                        elif event.get("event") == "unit" and counted and progress:
                            progress(f"checked {sum(e.get('event') == 'unit' for e in got)}/{count}")
                    return got
                except UnitTimedOut as e:
                    hung[e.unit] = {
                        "event": "unit",
                        "id": e.unit,
                        "status": "not-checkable",
                        "reason": runner.ran_out(e.seconds),
                        "failures": [],
                    }
                    got.append(hung[e.unit])
                    if len(pending) == 1:
                        continue
                    if on_checked is not None and counted:  # (published at once; the other units' answers follow)
                        early, summary = interpret(got, rendered.plans, rendered.not_buildable)
                        on_checked(GradcheckResult(early, summary, timings, session.torch_version))
                    if not session.wait_restarted(pid, RESTART_SECONDS):  # (the hung unit is never run again)
                        why = f"harness: the gradcheck session did not start again after {e.unit} ran out of its time"
                        got.extend(
                            {"event": "unit", "id": u["id"], "status": "not-checkable", "reason": why, "failures": []}
                            for u in pending
                            if u["id"] not in hung
                        )
                except SessionDied:
                    if cancel is not None and cancel.is_set():
                        raise Cancelled() from None
                    raise

        def by_jit(r: Any, units: list[dict[str, Any]], counted: bool) -> list[dict[str, Any]] | None:
            """The session's JIT defines `r` and checks `units`; None when it did not (g++ then builds)."""
            ns = jitting.namespace(r)
            source = jitting.jit_source(r, ns, jitting.includes(building.pch_header(templates)), toolchain.include_dirs)
            jit = {"namespace": ns, "source": source, "ops": [op.name for op in r.ops]}
            got = collect({"op": "check", "jit": jit, "namespace": ns, "units": units}, len(units), counted)
            failed = next((e for e in got if e.get("event") == "jit-failed"), None)
            if failed is None:
                timings.jit_define += sum(e.get("seconds", 0.0) for e in got if e.get("event") == "jit-defined")
                return got
            timings.jit_error = str(failed.get("message"))
            if failed.get("broken"):  # Cling cannot run later static initializers: a new process, in the background
                session.jit_broken()
            return None

        use_jit = (
            jit and session.jit_ready() and building.reusable(rendered.source, toolchain, templates, cache) is None
        )
        got = None
        if use_jit:
            if progress:
                progress(f"running gradcheck on {plural(len(plans), 'unit')} (session, JIT)")
            started = time.monotonic()
            got = by_jit(rendered, plans, True)
            timings.run = time.monotonic() - started
            timings.jit = got is not None
            session.jit_runs += timings.jit
        if got is None:
            if progress:
                progress(f"building {plural(len(plans), 'unit')} (reused when already built)")
            started = time.monotonic()
            try:
                built, rendered, not_compiled = build_checkable(
                    units, rendered, toolchain, templates, cache, cancel, manual, helper_errors
                )
            except building.BuildLimit as e:
                return with_manual(_limited(rendered, str(e), e.which, building.build_limits(len(plans)), timings))
            timings.build = time.monotonic() - started
            if built is None:  # no entry's code compiles: their compile errors are the result
                _, summary = interpret([], [], rendered.not_buildable)
                return with_manual(GradcheckResult(not_compiled, summary, timings, session.torch_version))
            timings.build_reused = built.reused
            timings.pch_built = bool(built.pch and built.pch.built)
            unreachable = built.unreachable
            plans = [p.to_json() for p in rendered.plans]
            if cancel is not None and cancel.is_set():
                raise Cancelled()
            if progress:
                progress(f"running gradcheck on {plural(len(plans), 'unit')} (session)")
            started = time.monotonic()
            got = collect(
                {"op": "check", "library": str(built.library), "namespace": built.namespace, "units": plans},
                len(plans),
                True,
            )
            timings.run = time.monotonic() - started
        events.extend(got)
        suggestions: list[Suggestion] = []
        if repair is not None:
            if on_checked is not None and any(e.get("status") == "failed" for e in events):
                early, summary = interpret(events, rendered.plans, rendered.not_buildable)
                summary.unreachable_helpers = unreachable
                on_checked(GradcheckResult(early, summary, timings, session.torch_version))

            def check(built: Any, plans: list[dict[str, Any]]) -> list[dict[str, Any]]:
                # the candidates have their failed unit's overload and arguments: the session's samples serve
                try:
                    return collect(
                        {"op": "check", "library": str(built.library), "namespace": built.namespace, "units": plans},
                        len(plans),
                        False,
                    )
                except SessionDied:
                    return []  # (no suggestion; the checks stand)

            def jit_check(r: Any, plans: list[dict[str, Any]]) -> list[dict[str, Any]] | None:
                try:
                    return by_jit(r, plans, False)
                except SessionDied:
                    return []

            suggestions = repair_phase(
                _repairable(events, rendered, manual),
                rendered,
                repair,
                toolchain,
                templates,
                cache,
                check,
                timings,
                progress,
                cancel,
                jit_check if timings.jit and session.jit_ready() else None,
            )
    diagnostics, summary = interpret(events, rendered.plans, rendered.not_buildable)
    summary.unreachable_helpers = unreachable
    diagnostics = sorted([*not_compiled, *diagnostics], key=lambda d: (d.span.line, d.span.column))
    return with_manual(
        GradcheckResult(with_fixes(diagnostics, suggestions), summary, timings, session.torch_version, suggestions)
    )


def _with_manual(
    result: GradcheckResult,
    manual: Any,
    rendered: Any,
    units: Sequence[Unit],
    derivatives: Path,
    helper_errors: list[Diagnostic],
) -> GradcheckResult:
    """`result` with what the run says of its FunctionsManual.cpp (`manual`, an EditedManual; None: unchanged):
    each failure of a formula calling an edited helper also on the helper's name, and the helpers' compile errors
    (as gradcheck_units does)."""
    if manual is None:
        return result
    result.manual_path = manual.path
    final = getattr(rendered, "manual", None)
    defined = sorted(final.names) if final is not None else []
    result.manual_summary = {**manual.summary(), "compiled": defined}
    on_helpers: list[Diagnostic] = []
    if final is not None:
        result.diagnostics, on_helpers = edited.failure_diagnostics(
            result.diagnostics, units, final.names, manual, derivatives
        )
    result.manual_diagnostics = sorted([*helper_errors, *on_helpers], key=lambda d: (d.span.line, d.span.column))
    return result


RESTART_SECONDS = 180.0  # a session killed for a unit past its bound: how long its run waits for the new process


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
    return reach.file_for(python, cache)
