"""Following a background job (jobs/background.py: compile-on-save, gradcheck) in the editor: `$/progress`
while it runs (cancellable: the client's cancel ends the job), a warning when it could not run, the document
republished with its results when it ends; and its results as LSP diagnostics of one source."""

from __future__ import annotations

import asyncio
import itertools
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from derivls.jobs.background import EntryJobs, JobResult, WorkerJob

if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

POLL_SECONDS = 0.25
_tokens = itertools.count(1)


async def follow(
    ls: DerivlsServer,
    uri: str,
    job: WorkerJob,
    runs: EntryJobs[Any],
    *,
    title: str,
    report: Callable[[Any], types.WorkDoneProgressReport],
    finished: Callable[[JobResult | None], str] = lambda result: "done",
    warning: str = "derivls",
    refresh_lenses: bool = False,
) -> None:
    """Until `job` ends: its `progress` reported (`report` turns it into a report); then its result collected
    from `runs` and the document republished (or `warning: error` shown); with `refresh_lenses`, the client
    asked to fetch its code lenses again (they show the verdicts)."""
    made = f"derivls-{job.what}-{next(_tokens)}"
    token: str | None = made
    progress = ls.work_done_progress
    try:
        await asyncio.wait_for(progress.create_async(made), timeout=5)
        begin = types.WorkDoneProgressBegin(title=title, cancellable=True, percentage=0)
        progress.begin(made, begin)
        cancelled = progress.tokens.get(made)
        if cancelled is not None:
            cancelled.add_done_callback(lambda f: job.cancel() if f.cancelled() else None)
    except Exception:  # a client without work-done progress: run all the same
        token = None
    last = None
    shown = None
    while not job.done:
        await asyncio.sleep(POLL_SECONDS)
        current = getattr(job, "progress", None)
        if token is not None and current != last:
            last = current
            progress.report(token, report(current))
        partial = getattr(job, "partial", None)  # (a gradcheck's verdicts while its repairs are tried)
        if partial is not None and partial is not shown and not job.done:
            shown = partial
            if runs.record_partial(uri, partial):
                _republish(ls, uri, refresh_lenses)
    result = runs.collect(uri)
    if token is not None:
        message = "cancelled" if result and result.cancelled else finished(result)
        progress.end(token, types.WorkDoneProgressEnd(message=message))
    if result is None or result.cancelled:
        return
    if result.error:
        ls.window_show_message(
            types.ShowMessageParams(type=types.MessageType.Warning, message=f"{warning}: {result.error}")
        )
        return
    _republish(ls, uri, refresh_lenses)


def _republish(ls: DerivlsServer, uri: str, refresh_lenses: bool) -> None:
    doc = ls.docs.get(uri)
    if doc is not None and doc.analysis is not None and doc.lines is not None:
        ls.publish(doc)
    if refresh_lenses and ls.client_supports("workspace.code_lens.refresh_support"):  # (lenses show the verdicts)
        try:
            ls.workspace_code_lens_refresh(None)
        except Exception:  # a client that refuses: its lenses update at its next request
            pass


def lsp_diagnostics(runs: EntryJobs[Any], doc: Any, source: str) -> list[types.Diagnostic]:
    """The results of `doc`'s entries unchanged since their job, where they are now, as `source`'s."""
    from derivls.server.features import convert

    out = convert.to_lsp_all(runs.diagnostics(doc.uri, doc.analysis), doc.lines, doc.uri)
    for d in out:
        d.source = source
    return out
