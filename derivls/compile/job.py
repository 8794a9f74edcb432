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

from typing import Any

from derivls.base.diagnostics import Code, Diagnostic, Related, Severity, Span
from derivls.codes import lookup
from derivls.compile.engine import CODE, SOURCE
from derivls.jobs.background import EntryJobs, JobResult, WorkerJob, document_request, kill_all

__all__ = ["CODE", "SOURCE", "CompileJob", "CompileOnSave", "JobResult", "kill_all"]


class CompileJob(WorkerJob):
    """One compile of some entries of one document, in `python -P -m derivls.compile.worker`
    (jobs/background.py: a neutral folder, its own process group, dies with this process)."""

    module = "derivls.compile.worker"
    what = "compile"

    def __init__(self, request: dict[str, Any]) -> None:
        self.progress: tuple[int, int, str] = (0, 1, "starting")
        super().__init__(request)

    def on_progress(self, value: Any) -> None:
        done, total, what = value
        self.progress = (int(done), int(total), str(what))

    def diagnostic(self, d: dict[str, Any]) -> Diagnostic:
        return Diagnostic(
            Span(d["line"], d["column"], d["end_line"], d["end_column"]),
            Severity.ERROR,
            _code(d.get("code")),
            d["message"],
            tuple(Related(path, line, message) for path, line, message in d.get("related", ())),
        )


def _code(name: object) -> Code:
    """The registered code a worker named (it sends the name); compile-error for anything else."""
    try:
        return lookup(name) if isinstance(name, str) else CODE
    except KeyError:
        return CODE


class CompileOnSave(EntryJobs[CompileJob]):
    """The compile-on-save engine of a server: one job at a time per document, never blocking."""

    def __init__(self, cxx: str | None = None, torch_include: str | None = None, jobs: int = 2) -> None:
        super().__init__(CompileJob)
        self.cxx = cxx
        self.torch_include = torch_include
        self.jobs = jobs

    def on_open(self, uri: str, analysis: Any) -> None:
        """Count the entries as they are now (the file as opened) as compiled without error.

        Optional: without it the first save compiles every entry (minutes for the whole file);
        with it, compile-on-save compiles what is changed in the editor, as the rest presumably
        built already (`derivls check --compile` checks the whole file).
        """
        self.seen(uri, analysis)

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
        request = {
            **document_request(path, text, native, tags, profile, torch_version),
            "cxx": self.cxx,
            "torch_include": self.torch_include,
            "jobs": self.jobs,
        }
        return self.launch(uri, analysis, self.changed_lines(uri, analysis), request)
