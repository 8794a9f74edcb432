"""Gradcheck for an editor, as plain code: a cancellable run in a subprocess, one at a time per document.

    engine = GradcheckRuns(python=None)
    job = engine.start(uri, path, text, analysis, native, tags, lines=[entry line])  # a lens, a command, a save
    job.poll() / job.progress / job.cancel()
    engine.collect(uri)                      # record a finished job's results
    engine.diagnostics(uri, analysis)        # results of the entries unchanged since they were checked

The subprocess is `python -P -m derivls.gradcheck.worker` (derivls's Python, no torch) started as
jobs/background.py starts a worker: a neutral folder, its own process group, dying with this process;
cancel() ends it, its compilers, and the torch child (which dies with it). An entry's results are dropped
as soon as its text changes (they are kept by the entry's key).
"""

from __future__ import annotations

import json
from typing import Any

from derivls.base.diagnostics import Diagnostic, Related, Severity, Span
from derivls.codes.compile import COMPILE_ERROR, COMPILE_LIMIT
from derivls.gradcheck.results import CODE, SOURCE
from derivls.jobs.background import EntryJobs, JobResult, WorkerJob, document_request

__all__ = ["CODE", "SOURCE", "GradcheckJob", "GradcheckRuns", "JobResult"]


class GradcheckJob(WorkerJob):
    module = "derivls.gradcheck.worker"
    what = "gradcheck"

    def __init__(self, request: dict[str, Any]) -> None:
        self.progress = "starting"
        super().__init__(request)

    def on_progress(self, value: Any) -> None:
        self.progress = str(value)

    def diagnostic(self, d: dict[str, Any]) -> Diagnostic:
        return diagnostic_from_json(d)


def diagnostic_from_json(d: dict[str, Any]) -> Diagnostic:
    """A diagnostic of the worker's JSON (derivls.jobs.wire.diagnostic_to_json)."""
    # the worker reports gradcheck-mismatch, compile-limit when a build reached a bound, and compile-error on
    # an entry whose code does not compile (the other entries are checked)
    from derivls.jobs.wire import fixes_from_json

    code = next((c for c in (COMPILE_LIMIT, COMPILE_ERROR) if d.get("code") == str(c)), CODE)
    # places in other files (a FunctionsManual.cpp helper the failing formula calls: issue 51)
    related = tuple(Related(str(r[0]), int(r[1]), str(r[2])) for r in d.get("related") or () if len(r) == 3 and r[0])
    return Diagnostic(
        Span(d["line"], d["column"], d["end_line"], d["end_column"]),
        Severity.ERROR,
        code,
        d["message"],
        related=related,
        fixes=fixes_from_json(d),  # the repair that passes, when one was found (never applied by derivls)
    )


class SessionJob(GradcheckJob):
    """A run with the gradcheck session warm (derivls.gradcheck.session): the worker's code in a thread of this
    process, on the server's analysis; g++ still builds the extension (a bounded process group), the session
    checks it. The session's one-shot fallback (not warm, or it died) is the worker's own."""

    def __init__(self, request: dict[str, Any], analysis: Any, session: Any, setup: dict[str, Any]) -> None:
        import threading

        self.progress = "starting"
        self.request = request
        self._result = None
        self._cancelled = False
        self._cancel = threading.Event()
        self._analysis, self._session, self._setup = analysis, session, setup
        self.partial: Any = None  # the checks' result while the repairs are tried (the server shows it at once)
        self._reader = threading.Thread(target=self._run, daemon=True)
        self._reader.start()

    def _run(self) -> None:
        import io

        from derivls.gradcheck.engine import Cancelled
        from derivls.gradcheck.worker import run
        from derivls.jobs.background import JobResult

        job = self

        class Lines(io.StringIO):
            def flush(self) -> None:
                for line in self.getvalue().splitlines():
                    message = json.loads(line)
                    if "progress" in message:
                        job.on_progress(message["progress"])
                    elif message.get("partial"):  # the checks' verdicts, before the repairs are tried
                        job.partial = job._parse([message])
                    else:
                        job._messages.append(message)
                self.seek(0)
                self.truncate()

        self._messages: list[dict[str, Any]] = []
        try:
            run(
                self.request,
                Lines(),
                analysis=self._analysis,
                session=self._session,
                cancel=self._cancel,
                setup=self._setup,
            )
            result = self._parse(self._messages)
        except Cancelled:
            result = JobResult(cancelled=True)
        except Exception as e:  # a bug of the run: the editor gets one line, the server goes on
            result = JobResult(error=f"the gradcheck run failed: {type(e).__name__}: {e}")
        if self._cancelled:
            result = JobResult(cancelled=True)
        self._result = result

    def _parse(self, messages: list[dict[str, Any]]) -> JobResult:
        result = JobResult()
        for message in messages:
            result.take(message, self.diagnostic)
        return result

    def cancel(self, grace: bool = True) -> None:
        if self._result is None:
            self._cancelled = True
            self._cancel.set()

    def _reap(self, timeout: float) -> None:
        self._reader.join(timeout)


PREFETCH_DELAY = 0.1  # seconds without an edit before the session finds an edited entry's samples


class ManualReport:
    """What the runs said of one FunctionsManual.cpp (GradcheckRuns.manual)."""

    def __init__(self) -> None:
        self.edited: frozenset[str] = frozenset()
        self.errors: list[Diagnostic] = []


class GradcheckRuns(EntryJobs[GradcheckJob]):
    """The gradcheck runs of a server: one job at a time per document, never blocking."""

    def __init__(self, python: str | None = None, cxx: str | None = None, torch_include: str | None = None) -> None:
        super().__init__(self._job)
        self.python = python
        self.use_session = False  # a trusted workspace with gradcheck enabled: runs use the session when warm
        self._setup: dict[str, Any] = {}  # the chosen Python's torch version and headers, found once
        self.cxx = cxx
        self.torch_include = torch_include
        self.opened: set[str] = set()  # documents whose entries as opened count as checked (gradcheckOnSave)
        self.live_session: Any = None  # the session last asked for (what the server's status reports)
        self._prefetched: tuple[int | None, set[str]] = (None, set())  # (session pid, entries whose samples it has)
        self._prefetch_timer: Any = None
        # FunctionsManual.cpp path -> what the runs said of it (issue 51): the helpers edited against the run's base,
        # and the compiler's errors on helpers that do not compile (diagnostics of that file)
        self.manual: dict[str, ManualReport] = {}

    def collect(self, uri: str) -> JobResult | None:
        result = super().collect(uri)
        if result is not None and not result.cancelled and result.error is None and result.manual:
            self.record_manual(result.manual)
        return result

    def record_manual(self, report: dict[str, Any]) -> None:
        """A run's word on its FunctionsManual.cpp: its edited helpers; its compile errors (a run that compiled helpers
        without one clears them; a run that compiled none and found none leaves those of an earlier one)."""
        path = report.get("path")
        if not isinstance(path, str):
            return
        found = self.manual.setdefault(path, ManualReport())
        # without a base (derivls.gradcheck.edited: "no base (...)") every helper counts as edited, which says nothing
        # of what the user changed: the editor's own "edited since read" stands alone then
        known = not str(report.get("base") or "").startswith("no base")
        found.edited = frozenset(str(n) for n in report.get("edited") or ()) if known else frozenset()
        errors = [
            diagnostic_from_json(d) for d in report.get("diagnostics") or () if d.get("code") == str(COMPILE_ERROR)
        ]
        if errors or report.get("compiled"):
            found.errors = errors

    def forget_manual_errors(self, path: str) -> None:
        """The file was saved with changed helpers: its compile errors are of the text before (the next run says)."""
        if path in self.manual:
            self.manual[path].errors = []

    def prefetch(self, uri: str, path: str, analysis: Any, delay: float = PREFETCH_DELAY) -> None:
        """An entry was edited (gradcheck on save): after `delay` s without another edit, the warm session finds the
        samples of the entries changed since their last run, in the background, once per entry and session
        process, so that the save's run does not wait for them (the first save of an entry: seconds)."""
        import threading

        session = self.live_session
        if session is None or not session.warm():
            return
        if self._prefetch_timer is not None:
            self._prefetch_timer.cancel()
        timer = threading.Timer(delay, self._prefetch_now, args=(uri, path, analysis, session))
        timer.daemon = True
        self._prefetch_timer = timer
        timer.start()

    def _prefetch_now(self, uri: str, path: str, analysis: Any, session: Any) -> None:
        from pathlib import Path

        from derivls.compile.units import collect_units
        from derivls.gradcheck.engine import prefetch_in_session

        try:
            pid, done = self._prefetched
            if pid != session.pid:
                done = set()
                self._prefetched = (session.pid, done)
            lines = self.changed_lines(uri, analysis)
            units = [u for u in collect_units(analysis, None, lines) if u.name not in done] if lines else []
            if units and prefetch_in_session(units, Path(path), session):
                done.update(u.name for u in units)
        except Exception:  # (an optimisation only: the save's run finds the samples itself)
            return

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
        manual: str | None = None,
    ) -> GradcheckJob | None:
        """Check the entries on `lines` (0-based `- name:` lines); a running job is cancelled. `manual`: the
        FunctionsManual.cpp whose edited helpers the entries call (compiled into the run)."""
        request = {
            **document_request(path, text, native, tags, profile, torch_version),
            "python": self.python,
            "cxx": self.cxx,
            "torch_include": self.torch_include,
            "manual": manual,
        }
        self._analysis = analysis
        return self.launch(uri, analysis, lines, request)

    def session(self, start: bool = False) -> Any:
        """The chosen Python's gradcheck session (None: disabled, DERIVLS_GRADCHECK_SESSION=0); `start`: start
        it in the background when it is not running."""
        from derivls.gradcheck import session as sessions

        if not sessions.enabled():
            return None
        found = self.live_session = sessions.get(self.python)
        if start and found.pid is None and found.state != "starting":
            found.start()
        return found

    def _job(self, request: dict[str, Any]) -> GradcheckJob:
        session = self.session() if self.use_session else None
        if session is not None and session.warm():
            return SessionJob(request, self._analysis, session, self._setup)
        if session is not None:
            session.start()  # warm for the next run
        return GradcheckJob(request)

    def close(self, uri: str) -> None:
        super().close(uri)
        self.opened.discard(uri)
