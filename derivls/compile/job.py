"""Compile-on-save as plain code: a cancellable compile in a subprocess, one at a time per document.

The server (or anything else) drives it:

    compiler = CompileOnSave(cxx=None, torch_include=None)
    job = compiler.on_save(uri, path, text, analysis, native, tags)   # after didSave; None: nothing changed
    ...
    job.poll()            # -> None while running; the JobResult when done (never blocks)
    job.progress          # (done, total, what) of the running compile
    job.cancel()          # kills the compiler processes
    compiler.diagnostics(uri, analysis)   # compile diagnostics placed on the current analysis

Entries are compiled again only when they changed since their last compile (their `entry_key`:
the parsed entry and its node names); an entry whose text changes loses its compile diagnostics at
once (`diagnostics()` keeps only those whose entry key is unchanged), and they move with the entry.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import threading
import time
from dataclasses import dataclass, field
from typing import Any

from derivls.codes import lookup
from derivls.compile.engine import CODE, SOURCE
from derivls.diagnostics import Code, Diagnostic, Related, Severity, Span

__all__ = ["CODE", "SOURCE", "CompileJob", "CompileOnSave", "JobResult"]


@dataclass
class JobResult:
    # entry key -> diagnostics with spans relative to the entry's `- name:` line
    entries: dict[str, list[Diagnostic]] = field(default_factory=dict)
    error: str | None = None  # a missing compiler or headers: one line
    cancelled: bool = False


GRACE_SECONDS = 2.0  # a cancelled worker's time to kill its compilers and remove its files (SIGTERM) before SIGKILL
_live: set[CompileJob] = set()  # running jobs: killed when this process exits (kill_all)
_atexit_registered = False


def kill_all() -> None:
    """End every running job (the server's exit): SIGTERM, a short grace, then SIGKILL of what is left."""
    jobs = list(_live)
    for job in jobs:
        job.cancel(grace=False)
    deadline = time.monotonic() + GRACE_SECONDS
    for job in jobs:
        job._reap(max(0.0, deadline - time.monotonic()))


def _absolute(request: dict[str, Any]) -> dict[str, Any]:
    """The request's paths made absolute: the worker starts in another folder (children.neutral_folder)."""
    out = dict(request)
    for name in ("path", "native", "tags", "torch_include"):
        if isinstance(out.get(name), str) and out[name]:
            out[name] = os.path.abspath(out[name])
    cxx = out.get("cxx")
    if isinstance(cxx, str) and os.sep in cxx:
        out["cxx"] = os.path.abspath(cxx)
    return out


class CompileJob:
    """One compile of some entries of one document, in `python -P -m derivls.compile.worker` started in
    a neutral folder (children.py): the workspace is never on its sys.path. The worker leads its own
    process group (its compilers are in it); it dies with this process (PR_SET_PDEATHSIG on Linux, and
    kill_all at exit) and removes its temporary files when it ends by SIGTERM (cancel)."""

    def __init__(self, request: dict[str, Any]) -> None:
        global _atexit_registered
        from derivls.children import child_environment, neutral_folder, python_command

        self.request = _absolute(request)
        self.progress: tuple[int, int, str] = (0, 1, "starting")
        self._result: JobResult | None = None
        self._cancelled = False
        self._process = subprocess.Popen(
            python_command("derivls.compile.worker"),
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=neutral_folder(),
            env=child_environment(),
            start_new_session=True,  # its own process group: cancel() ends the compilers too
        )
        _live.add(self)
        if not _atexit_registered:
            import atexit

            atexit.register(kill_all)
            _atexit_registered = True
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

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
                    done, total, what = message["progress"]
                    self.progress = (int(done), int(total), str(what))
                elif "error" in message:
                    result.error = message["error"]
                elif "entries" in message:
                    for entry in message["entries"]:
                        result.entries[entry["key"]] = [_from_json(d) for d in entry["diagnostics"]]
            process.wait()
        except (OSError, ValueError):
            result = JobResult(error=None if self._cancelled else "the compile process failed")
        if self._cancelled:
            result = JobResult(cancelled=True)
        elif process.returncode not in (0, 2) and result.error is None and not result.entries:
            result.error = f"the compile process exited with status {process.returncode}"
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
        """Stop the compile: SIGTERM to the worker's group (the worker kills its compilers and removes
        its temporary folder and partial files), SIGKILL after GRACE_SECONDS if anything is left.
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


def _code(name: object) -> Code:
    """The registered code a worker named (it sends the name); compile-error for anything else."""
    try:
        return lookup(name) if isinstance(name, str) else CODE
    except KeyError:
        return CODE


def _from_json(d: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        Span(d["line"], d["column"], d["end_line"], d["end_column"]),
        Severity.ERROR,
        _code(d.get("code")),
        d["message"],
        tuple(Related(path, line, message) for path, line, message in d.get("related", ())),
    )


@dataclass
class _DocumentState:
    compiled: dict[str, list[Diagnostic]] = field(default_factory=dict)  # entry key -> relative diagnostics
    job: CompileJob | None = None
    job_keys: dict[int, str] = field(default_factory=dict)  # line -> key of the entries the job compiles


class CompileOnSave:
    """The compile-on-save engine of a server: one job at a time per document, never blocking."""

    def __init__(self, cxx: str | None = None, torch_include: str | None = None, jobs: int = 2) -> None:
        self.cxx = cxx
        self.torch_include = torch_include
        self.jobs = jobs
        self._documents: dict[str, _DocumentState] = {}
        self.last_error: str | None = None

    def on_open(self, uri: str, analysis: Any) -> None:
        """Count the entries as they are now (the file as opened) as compiled without error.

        Optional: without it the first save compiles every entry (minutes for the whole file);
        with it, compile-on-save compiles what is changed in the editor, as the rest presumably
        built already (`derivls check --compile` checks the whole file).
        """
        from derivls.compile.units import entry_key

        state = self._documents.setdefault(uri, _DocumentState())
        for placed in analysis.entries:
            if placed.result.canonical is not None:
                state.compiled.setdefault(entry_key(placed), [])

    def on_save(
        self,
        uri: str,
        path: str,
        text: str,
        analysis: Any,
        native: str,
        tags: str | None,
        profile: str = "auto",
        torch_version: str | None = None,
    ) -> CompileJob | None:
        """Start compiling the entries changed since their last compile; a running job is cancelled
        (its entries are compiled again by the new one). None when nothing changed. `profile` and
        `torch_version` are the settings the document was analysed with: the worker reads it the same way."""
        from derivls.compile.units import entry_key

        state = self._documents.setdefault(uri, _DocumentState())
        current = {placed.line: entry_key(placed) for placed in analysis.entries if placed.result.canonical}
        if state.job is not None and not state.job.done:
            state.job.cancel()
        changed = sorted(line for line, key in current.items() if key not in state.compiled)
        if not changed:
            state.job = None
            return None
        state.job_keys = {line: current[line] for line in changed}
        state.job = CompileJob(
            {
                "path": path,
                "text": text,
                "native": native,
                "tags": tags,
                "profile": profile,
                "torch_version": torch_version,
                "lines": changed,
                "cxx": self.cxx,
                "torch_include": self.torch_include,
                "jobs": self.jobs,
            }
        )
        return state.job

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
            for key in state.job_keys.values():
                state.compiled[key] = result.entries.get(key, [])
        return result

    def running(self, uri: str) -> CompileJob | None:
        state = self._documents.get(uri)
        return state.job if state is not None and state.job is not None and not state.job.done else None

    def diagnostics(self, uri: str, analysis: Any) -> list[Diagnostic]:
        """The compile diagnostics of the entries that did not change since compiled, at their place now."""
        from derivls.compile.units import placed_diagnostics

        state = self._documents.get(uri)
        return [] if state is None else placed_diagnostics(state.compiled, analysis)

    def close(self, uri: str) -> None:
        state = self._documents.pop(uri, None)
        if state is not None and state.job is not None:
            state.job.cancel()
