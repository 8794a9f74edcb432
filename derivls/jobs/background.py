"""Editor work on some entries of a document in a worker subprocess, as plain code: one job at a time per
document, never blocking, results kept per entry. Compile-on-save (compile/job.py) and gradcheck runs
(gradcheck/job.py) are this with another worker module.

    runs = EntryJobs(make_job)                # make_job(request) -> a WorkerJob
    job = runs.launch(uri, analysis, lines, request)   # a running job of the document is cancelled
    job.poll() / job.progress / job.cancel()
    runs.collect(uri)                         # record a finished job's results
    runs.diagnostics(uri, analysis)           # results of the entries unchanged since, where they are now

The worker is `python -P -m MODULE` (children.py: the workspace is never on its sys.path) started in a
neutral folder; it leads its own process group (its compilers and children are in it), dies with this
process (it calls children.die_with_parent; kill_all runs at exit) and removes its temporary files when
it ends by SIGTERM (cancel). It reads one JSON request and writes JSON lines: {"progress": ...}, then
{"entries": [{"key", "diagnostics": [...]}], "summary": "..."} or {"error": "one line"}.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any, ClassVar, Generic, TypeVar

from derivls.base.diagnostics import Diagnostic
from derivls.jobs.entries import entry_key, placed_diagnostics

GRACE_SECONDS = 2.0  # a cancelled worker's time to kill its compilers and remove its files (SIGTERM) before SIGKILL
_live: set[WorkerJob] = set()  # running jobs: killed when this process exits (kill_all)
_atexit_registered = False


@dataclass
class JobResult:
    # entry key -> diagnostics with spans relative to the entry's `- name:` line
    entries: dict[str, list[Diagnostic]] = field(default_factory=dict)
    summary: str = ""
    error: str | None = None  # a missing compiler, headers or torch: one line
    cancelled: bool = False
    # entry key -> what the worker said of the entry as a whole (gradcheck: "passed in 8.1 s"), if anything
    verdicts: dict[str, str] = field(default_factory=dict)
    # gradcheck: the FunctionsManual.cpp of the run, if any ({"path", "edited", "compiled", "diagnostics": [...]})
    manual: dict[str, Any] | None = None

    def take(self, message: dict[str, Any], diagnostic: Callable[[dict[str, Any]], Diagnostic]) -> None:
        """One message of a worker's answer (an error, or the entries' diagnostics and verdicts) into this result;
        `diagnostic` makes a Diagnostic of one of the worker's JSON diagnostics."""
        if "error" in message:
            self.error = message["error"]
        elif "entries" in message:
            self.summary = str(message.get("summary", ""))
            self.manual = message.get("manual")
            for entry in message["entries"]:
                self.entries[entry["key"]] = [diagnostic(d) for d in entry["diagnostics"]]
                if isinstance(entry.get("verdict"), str):
                    self.verdicts[entry["key"]] = verdict_text(entry["verdict"], entry.get("seconds"))


def kill_all() -> None:
    """End every running job (the server's exit): SIGTERM, a short grace, then SIGKILL of what is left."""
    jobs = list(_live)
    for job in jobs:
        job.cancel(grace=False)
    deadline = time.monotonic() + GRACE_SECONDS
    for job in jobs:
        job._reap(max(0.0, deadline - time.monotonic()))


def absolute_paths(request: dict[str, Any]) -> dict[str, Any]:
    """The request's paths made absolute: the worker starts in another folder (children.neutral_folder)."""
    out = dict(request)
    for name in ("path", "native", "tags", "torch_include", "manual"):
        if isinstance(out.get(name), str) and out[name]:
            out[name] = os.path.abspath(out[name])
    for name in ("cxx", "python"):
        value = out.get(name)
        if isinstance(value, str) and os.sep in value:
            out[name] = os.path.abspath(value)
    return out


def document_request(
    path: str, text: str, native: str, tags: str | None, profile: str, torch_version: str | None
) -> dict[str, Any]:
    """What a worker needs to analyse the document as the server did (its text, files and settings)."""
    return {
        "path": path,
        "text": text,
        "native": native,
        "tags": tags,
        "profile": profile,
        "torch_version": torch_version,
    }


class WorkerJob:
    """One run of a worker module on one request; subclasses name the module and read its diagnostics."""

    module: ClassVar[str]
    what: ClassVar[str]  # "compile", "gradcheck": in error messages

    def __init__(self, request: dict[str, Any]) -> None:
        global _atexit_registered
        from derivls.base.children import child_environment, neutral_folder, python_command

        self.request = absolute_paths(request)
        self._result: JobResult | None = None
        self._cancelled = False
        self._process = subprocess.Popen(
            python_command(self.module),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=neutral_folder(),
            env=child_environment(),
            start_new_session=True,  # its own process group: cancel() ends its compilers and children too
        )
        _live.add(self)
        if not _atexit_registered:
            import atexit

            atexit.register(kill_all)
            _atexit_registered = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def on_progress(self, value: Any) -> None:
        """A {"progress": value} line of the worker."""

    def diagnostic(self, d: dict[str, Any]) -> Diagnostic:
        raise NotImplementedError

    def _read(self) -> None:
        process = self._process
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(self.request))
            process.stdin.close()
            result = JobResult()
            for line in process.stdout:
                message = json.loads(line)
                if "progress" in message:
                    self.on_progress(message["progress"])
                else:
                    result.take(message, self.diagnostic)
            process.wait()
        except (OSError, ValueError, KeyError, TypeError):
            result = JobResult(error=None if self._cancelled else f"the {self.what} process failed")
        if self._cancelled:
            result = JobResult(cancelled=True)
        elif process.returncode not in (0, 2) and result.error is None and not result.entries:
            result.error = f"the {self.what} process exited with status {process.returncode}"
        self._result = result
        _live.discard(self)

    @property
    def done(self) -> bool:
        return self._result is not None

    def poll(self) -> JobResult | None:
        return self._result

    def wait(self, timeout: float | None = None) -> JobResult | None:
        self._reader.join(timeout)
        return self._result

    def cancel(self, grace: bool = True) -> None:
        """Stop the job: SIGTERM to the worker's group (the worker kills its compilers and removes its
        temporary folder and partial files), SIGKILL after GRACE_SECONDS if anything is left.
        `grace=False`: SIGTERM only (kill_all waits and kills itself)."""
        if self._result is not None or self._process.poll() is not None:
            return
        self._cancelled = True
        self._signal(signal.SIGTERM)
        if grace:
            threading.Thread(target=self._reap, args=(GRACE_SECONDS,), daemon=True).start()

    def _signal(self, sig: int) -> None:
        try:
            os.killpg(self._process.pid, sig)
        except (ProcessLookupError, PermissionError):
            pass

    def _reap(self, timeout: float) -> None:
        try:
            self._process.wait(timeout)
        except subprocess.TimeoutExpired:
            self._signal(signal.SIGKILL)
            try:
                self._process.wait(5)
            except subprocess.TimeoutExpired:
                pass
        _live.discard(self)


def verdict_text(verdict: str, seconds: Any) -> str:
    """ "passed at 14:03 (8.1 s)": a verdict with the time of day it was reached and how long the run took."""
    took = f", {float(seconds):.1f} s" if isinstance(seconds, (int, float)) else ""
    return f"{verdict} at {time.strftime('%H:%M')}{took}"


J = TypeVar("J", bound=WorkerJob)


@dataclass
class _DocumentState(Generic[J]):
    done: dict[str, list[Diagnostic]] = field(default_factory=dict)  # entry key -> relative diagnostics
    verdicts: dict[str, str] = field(default_factory=dict)  # entry key -> the worker's verdict on it
    collected: int = 0  # results recorded so far (what a view cached from them is stale against)
    job: J | None = None
    job_keys: dict[int, str] = field(default_factory=dict)  # line -> key of the entries the job works on


class EntryJobs(Generic[J]):
    """One job at a time per document; each entry's results kept by its key (`entry_key`: the parsed entry
    and its node names), so an entry whose text changes loses them at once and they move with the entry."""

    def __init__(self, make_job: Callable[[dict[str, Any]], J]) -> None:
        self._make_job = make_job
        self._documents: dict[str, _DocumentState[J]] = {}
        self.last_error: str | None = None

    def _state(self, uri: str) -> _DocumentState[J]:
        return self._documents.setdefault(uri, _DocumentState())

    def seen(self, uri: str, analysis: Any) -> None:
        """The entries as they are now count as done without a result (the rest presumably built already):
        work on save is then what is edited in the editor."""
        state = self._state(uri)
        for placed in analysis.entries:
            if placed.result.canonical is not None:
                state.done.setdefault(entry_key(placed), [])

    def changed_lines(self, uri: str, analysis: Any) -> list[int]:
        """The `- name:` lines of the entries changed since their last result."""
        state = self._state(uri)
        return [
            placed.line
            for placed in analysis.entries
            if placed.result.canonical is not None and entry_key(placed) not in state.done
        ]

    def launch(self, uri: str, analysis: Any, lines: list[int], request: dict[str, Any]) -> J | None:
        """Start a job on the entries at `lines` (0-based `- name:` lines), cancelling the document's running
        one (its entries are done again by the new one if asked). None when no such entry."""
        state = self._state(uri)
        current = {placed.line: entry_key(placed) for placed in analysis.entries if placed.result.canonical}
        if state.job is not None and not state.job.done:
            state.job.cancel()
        wanted = sorted(line for line in set(lines) if line in current)
        if not wanted:
            state.job = None
            return None
        state.job_keys = {line: current[line] for line in wanted}
        state.job = self._make_job({**request, "lines": wanted})
        return state.job

    def forget(self, uri: str, analysis: Any, lines: list[int]) -> None:
        """The results of the entries at `lines` (0-based `- name:` lines) dropped, as if they were done without one:
        what they depend on besides their text changed (a FunctionsManual.cpp helper they call)."""
        state = self._state(uri)
        wanted = set(lines)
        for placed in analysis.entries:
            if placed.line in wanted:
                key = entry_key(placed)
                state.done[key] = []
                state.verdicts.pop(key, None)
        state.collected += 1

    def collect(self, uri: str) -> JobResult | None:
        """The finished job's result, recorded (None while it runs or when there is none)."""
        state = self._documents.get(uri)
        if state is None or state.job is None:
            return None
        result = state.job.poll()
        if result is None:
            return None
        state.job = None
        if result.cancelled:
            return result
        self.last_error = result.error
        if result.error is None:
            state.collected += 1
            for key in state.job_keys.values():
                state.done[key] = result.entries.get(key, [])
                if key in result.verdicts:
                    state.verdicts[key] = result.verdicts[key]
        return result

    def record_partial(self, uri: str, result: JobResult) -> bool:
        """A running job's early result (a gradcheck's verdicts before its repairs are tried), recorded as the
        final one would be; the final result replaces it. False when the job is gone or the result has an error."""
        state = self._documents.get(uri)
        if state is None or state.job is None or result.error is not None or result.cancelled:
            return False
        state.collected += 1
        for key in state.job_keys.values():
            if key in result.entries:
                state.done[key] = result.entries[key]
            if key in result.verdicts:
                state.verdicts[key] = result.verdicts[key]
        return True

    def collected(self, uri: str) -> int:
        """How many results of the document were recorded: a view built from them is stale once it grows."""
        state = self._documents.get(uri)
        return 0 if state is None else state.collected

    def verdict(self, uri: str, placed: Any) -> str | None:
        """The last verdict on this entry as it is now (None once its text changed, or never run)."""
        state = self._documents.get(uri)
        return None if state is None else state.verdicts.get(entry_key(placed))

    def running(self, uri: str) -> J | None:
        state = self._documents.get(uri)
        return state.job if state is not None and state.job is not None and not state.job.done else None

    def diagnostics(self, uri: str, analysis: Any) -> list[Diagnostic]:
        """The results of the entries that did not change since, at their place now."""
        state = self._documents.get(uri)
        return [] if state is None else placed_diagnostics(state.done, analysis)

    def close(self, uri: str) -> None:
        state = self._documents.pop(uri, None)
        if state is not None and state.job is not None:
            state.job.cancel()
