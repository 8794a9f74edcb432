"""Gradcheck for an editor, as plain code: a cancellable run in a subprocess, one at a time per document.

    engine = GradcheckRuns(python=None)
    job = engine.start(uri, path, text, analysis, native, tags, lines=[entry line])  # a lens, a command, a save
    job.poll() / job.progress / job.cancel()
    engine.collect(uri)                      # record a finished job's results
    engine.diagnostics(uri, analysis)        # results of the entries unchanged since they were checked

The subprocess is `python -P -m derivls.gradcheck.worker` (derivls's Python, no torch) started as
compile/background.py starts a worker: a neutral folder, its own process group, dying with this process;
cancel() ends it, its compilers, and the torch child (which dies with it). An entry's results are dropped
as soon as its text changes (they are kept by the entry's key).
"""

from __future__ import annotations

from typing import Any

from derivls.codes.compile import COMPILE_LIMIT
from derivls.compile.background import EntryJobs, JobResult, WorkerJob, document_request
from derivls.diagnostics import Diagnostic, Severity, Span
from derivls.gradcheck.results import CODE, SOURCE

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
        # the worker reports gradcheck-mismatch, and compile-limit when a build reached a bound
        code = COMPILE_LIMIT if d.get("code") == str(COMPILE_LIMIT) else CODE
        return Diagnostic(
            Span(d["line"], d["column"], d["end_line"], d["end_column"]), Severity.ERROR, code, d["message"]
        )


class GradcheckRuns(EntryJobs[GradcheckJob]):
    """The gradcheck runs of a server: one job at a time per document, never blocking."""

    def __init__(self, python: str | None = None, cxx: str | None = None, torch_include: str | None = None) -> None:
        super().__init__(GradcheckJob)
        self.python = python
        self.cxx = cxx
        self.torch_include = torch_include
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
        request = {
            **document_request(path, text, native, tags, profile, torch_version),
            "python": self.python,
            "cxx": self.cxx,
            "torch_include": self.torch_include,
        }
        return self.launch(uri, analysis, lines, request)

    def close(self, uri: str) -> None:
        super().close(uri)
        self.opened.discard(uri)
