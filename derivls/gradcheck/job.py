"""Gradcheck for an editor, as plain code: a cancellable run in a subprocess, one at a time per document.

    engine = GradcheckRuns(python=None)
    job = engine.start(uri, path, text, analysis, native, tags, lines=[entry line])  # a lens, a command, a save
    job.poll() / job.progress / job.cancel()
    engine.collect(uri)                      # record a finished job's results
    engine.diagnostics(uri, analysis)        # results of the entries unchanged since they were checked

The subprocess is `python -I -m derivls.gradcheck.worker` (derivls's Python, no torch; a neutral cwd;
its own process group): cancel() kills it, its compilers, and the torch child (which dies with it).
An entry's results are dropped as soon as its text changes (they are kept by the entry's key).
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from dataclasses import dataclass, field
from typing import Any

from derivls.diagnostics import Diagnostic, Severity, Span
from derivls.gradcheck.results import CODE, SOURCE

__all__ = ["CODE", "SOURCE", "GradcheckJob", "GradcheckRuns", "JobResult"]


@dataclass
class JobResult:
    entries: dict[str, list[Diagnostic]] = field(default_factory=dict)  # entry key -> relative diagnostics
    summary: str = ""
    error: str | None = None
    cancelled: bool = False


class GradcheckJob:
    def __init__(self, request: dict[str, Any]) -> None:
        self.request = request
        self.progress = "starting"
        self._result: JobResult | None = None
        self._cancelled = False
        self._process = subprocess.Popen(
            [sys.executable, "-I", "-m", "derivls.gradcheck.worker"],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL,
            text=True,
            cwd=tempfile.gettempdir(),
            start_new_session=True,
        )
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    def _read(self) -> None:
        process = self._process
        result = JobResult()
        try:
            assert process.stdin is not None and process.stdout is not None
            process.stdin.write(json.dumps(self.request))
            process.stdin.close()
            for line in process.stdout:
                message = json.loads(line)
                if "progress" in message:
                    self.progress = str(message["progress"])
                elif "error" in message:
                    result.error = message["error"]
                elif "entries" in message:
                    result.summary = str(message.get("summary", ""))
                    for entry in message["entries"]:
                        result.entries[entry["key"]] = [_from_json(d) for d in entry["diagnostics"]]
            process.wait()
        except (OSError, ValueError):
            result = JobResult(error=None if self._cancelled else "the gradcheck process failed")
        if self._cancelled:
            result = JobResult(cancelled=True)
        elif process.returncode not in (0, 2) and result.error is None and not result.entries:
            result.error = f"the gradcheck process exited with status {process.returncode}"
        self._result = result

    @property
    def done(self) -> bool:
        return self._result is not None

    def poll(self) -> JobResult | None:
        return self._result

    def wait(self, timeout: float | None = None) -> JobResult | None:
        self._reader.join(timeout)
        return self._result

    def cancel(self) -> None:
        if self._result is not None:
            return
        self._cancelled = True
        try:
            os.killpg(self._process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass


def _from_json(d: dict[str, Any]) -> Diagnostic:
    return Diagnostic(
        Span(d["line"], d["column"], d["end_line"], d["end_column"]), Severity.ERROR, CODE, d["message"]
    )  # the worker reports only gradcheck-mismatch


@dataclass
class _DocumentState:
    checked: dict[str, list[Diagnostic]] = field(default_factory=dict)  # entry key -> relative diagnostics
    job: GradcheckJob | None = None
    job_keys: dict[int, str] = field(default_factory=dict)


class GradcheckRuns:
    """The gradcheck runs of a server: one job at a time per document, never blocking."""

    def __init__(self, python: str | None = None, cxx: str | None = None, torch_include: str | None = None) -> None:
        self.python = python
        self.cxx = cxx
        self.torch_include = torch_include
        self._documents: dict[str, _DocumentState] = {}
        self.opened: set[str] = set()  # documents whose entries as opened count as checked (gradcheckOnSave)

    def start(
        self,
        uri: str,
        path: str,
        text: str,
        analysis: Any,
        native: str,
        tags: str | None,
        lines: list[int],
        profile: str = "auto",
        torch_version: str | None = None,
    ) -> GradcheckJob | None:
        """Check the entries on `lines` (0-based `- name:` lines); a running job is cancelled."""
        from derivls.compile.units import entry_key

        state = self._documents.setdefault(uri, _DocumentState())
        current = {placed.line: entry_key(placed) for placed in analysis.entries if placed.result.canonical}
        if state.job is not None and not state.job.done:
            state.job.cancel()
        wanted = sorted(line for line in lines if line in current)
        if not wanted:
            state.job = None
            return None
        state.job_keys = {line: current[line] for line in wanted}
        state.job = GradcheckJob(
            {
                "path": path,
                "text": text,
                "native": native,
                "tags": tags,
                "profile": profile,
                "torch_version": torch_version,
                "lines": wanted,
                "python": self.python,
                "cxx": self.cxx,
                "torch_include": self.torch_include,
            }
        )
        return state.job

    def changed_lines(self, uri: str, analysis: Any) -> list[int]:
        """The entries changed since they were last checked (what gradcheckOnSave checks)."""
        from derivls.compile.units import entry_key

        state = self._documents.setdefault(uri, _DocumentState())
        return [
            placed.line
            for placed in analysis.entries
            if placed.result.canonical is not None and entry_key(placed) not in state.checked
        ]

    def seen(self, uri: str, analysis: Any) -> None:
        """The entries as opened count as checked (gradcheckOnSave then checks what is edited)."""
        from derivls.compile.units import entry_key

        state = self._documents.setdefault(uri, _DocumentState())
        for placed in analysis.entries:
            if placed.result.canonical is not None:
                state.checked.setdefault(entry_key(placed), [])

    def collect(self, uri: str) -> JobResult | None:
        state = self._documents.get(uri)
        if state is None or state.job is None:
            return None
        result = state.job.poll()
        if result is None:
            return None
        state.job = None
        if not result.cancelled and result.error is None:
            for key in state.job_keys.values():
                state.checked[key] = result.entries.get(key, [])
        return result

    def diagnostics(self, uri: str, analysis: Any) -> list[Diagnostic]:
        from derivls.compile.units import placed_diagnostics

        state = self._documents.get(uri)
        return [] if state is None else placed_diagnostics(state.checked, analysis)

    def close(self, uri: str) -> None:
        state = self._documents.pop(uri, None)
        self.opened.discard(uri)
        if state is not None and state.job is not None:
            state.job.cancel()
