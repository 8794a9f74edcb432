"""Gradcheck in the editor → LSP: the "Run gradcheck" lenses, the `derivls.runGradcheck` command, the
`gradcheckOnSave` setting, `$/progress` while it runs (cancellable), and its diagnostics (source
"derivls-gradcheck", dropped when their entry changes). The engine is LSP-free
(derivls.gradcheck.job.GradcheckRuns; what the lenses are: derivls.ide.gradcheck); this module is the
wiring, called from a few hook points of the server:

    handlers: the code-lens handler adds `lenses(ls, uri, lines)`; `@server.command(RUN_GRADCHECK)` calls
              `run_command(ls, args)`; did_save calls `on_save(ls, uri)`; did_close `close(ls, uri)`
    pipeline.publish: `diagnostics += lsp_diagnostics(ls, doc)`

The run happens in a subprocess group (never in the server's process); a newer run of the same
document cancels the older one.

Running gradcheck compiles the entry's C++ and runs it: only in a trusted workspace (`trusted(ls)`:
initializationOptions' `trustedWorkspace: true`, or the `derivls/workspaceTrusted` notification). Untrusted,
each lens says why and runs nothing, the command answers `{"started": false, "reason": ...}`, and a save
starts nothing. Once an entry is checked, its lens shows the verdict ("Gradcheck passed at 14:03, 8.1 s · run
again") until the entry's text changes.

The gradcheck session (derivls.gradcheck.session; trusted only) reports `$/progress` while it starts and each time
it is restarted, when the client supports work-done progress; `derivls/status` gives its state and pid
(`session_status`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
import time
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from derivls.gradcheck.job import SOURCE, GradcheckRuns
from derivls.ide import gradcheck as ide
from derivls.server.documents import background

if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

log = logging.getLogger(__name__)
RUN_GRADCHECK = ide.RUN_GRADCHECK
SESSION_TITLE = "derivls: starting the gradcheck session"
SESSION_POLL_SECONDS = 0.1
_session_tokens = itertools.count(1)


def engine(ls: DerivlsServer) -> GradcheckRuns:
    settings = ls.settings
    found = getattr(ls, "_derivls_gradcheck", None)
    if found is None:
        found = GradcheckRuns()
        ls._derivls_gradcheck = found
    found.python = getattr(settings, "gradcheck_python", None)
    found.cxx = getattr(settings, "compile_cxx", None)
    found.torch_include = getattr(settings, "compile_torch_include", None)
    found.use_session = trusted(ls)  # untrusted: no session is ever started
    return found


def trusted(ls: DerivlsServer) -> bool:
    """Whether the client said the workspace is trusted (its code may be compiled and run)."""
    return bool(getattr(ls.settings, "trusted_workspace", False))


def lens_context(ls: DerivlsServer, uri: str) -> tuple[bool, int]:
    """What the gradcheck lenses depend on besides their entry (the code-lens cache's key): the trust, and the
    results recorded (a verdict)."""
    runs = getattr(ls, "_derivls_gradcheck", None)
    return trusted(ls), runs.collected(uri) if runs is not None else 0


def lenses(ls: DerivlsServer, uri: str, lines: Any, placed: Any) -> list[types.CodeLens]:
    """The "Run gradcheck" lens of one entry (for the code-lens handler); untrusted, a lens that runs nothing."""
    found = ide.entry_lens(placed, trusted(ls))
    if found is None:
        return []
    if not found.runs:  # a title only: an empty command id is shown, and runs nothing
        return [
            types.CodeLens(range=lines.line_range(found.line), command=types.Command(title=found.title, command=""))
        ]
    runs = getattr(ls, "_derivls_gradcheck", None)
    verdict = runs.verdict(uri, placed) if runs is not None else None
    title = ide.verdict_title(verdict) if verdict else found.title
    command = types.Command(title=title, command=RUN_GRADCHECK, arguments=[uri, found.line])
    return [types.CodeLens(range=lines.line_range(found.line), command=command)]


def _arguments(args: tuple[Any, ...]) -> tuple[str | None, int]:
    if len(args) == 1 and isinstance(args[0], (list, tuple)):
        args = tuple(args[0])
    if len(args) == 1 and isinstance(args[0], dict):
        d = args[0]
        uri = d.get("uri") or (d.get("textDocument") or {}).get("uri")
        line = d.get("line")
        if line is None and isinstance(d.get("position"), dict):
            line = d["position"].get("line")
    else:
        uri = args[0] if args and isinstance(args[0], str) else None
        line = args[1] if len(args) > 1 else 0
        if isinstance(line, dict):
            line = line.get("line", 0)
    try:
        return uri, int(line or 0)
    except (TypeError, ValueError):
        return uri, 0


def run_command(ls: DerivlsServer, args: tuple[Any, ...]) -> dict[str, Any] | None:
    """`derivls.runGradcheck [uri, line]`: check the entry holding `line`; answers at once
    ({"started": true, "line": entry line}), the diagnostics come when the run ends."""
    uri, line = _arguments(args)
    if uri is None:
        return None
    if not trusted(ls):
        return {"started": False, "reason": ide.UNTRUSTED}
    doc = ls.current(uri)
    if doc is None or doc.analysis is None:
        return {"started": False, "reason": "the document is not analysed"}
    entry = ide.entry_line(doc.analysis, line)
    if entry is None:
        return {"started": False, "reason": "no entry with a formula there"}
    started = _start(ls, uri, doc, [entry])
    return {"started": started, "line": entry}


def on_save(ls: DerivlsServer, uri: str) -> None:
    if not bool(getattr(ls.settings, "gradcheck_on_save", False)) or not trusted(ls):
        return
    doc = ls.current(uri)
    if doc is None or doc.analysis is None:
        return
    runs = engine(ls)
    changed = runs.changed_lines(uri, doc.analysis)
    if changed:
        _start(ls, uri, doc, changed)


def start_entries(ls: DerivlsServer, uri: str, doc: Any, lines: list[int], manual: str | None = None) -> bool:
    """Check the entries at `lines` of an open document now (a FunctionsManual.cpp save: the entries calling a
    changed helper; `manual`, that file, whose edited helpers the run compiles)."""
    if doc.analysis is None:
        return False
    return _start(ls, uri, doc, lines, manual)


def _start(ls: DerivlsServer, uri: str, doc: Any, lines: list[int], manual: str | None = None) -> bool:
    files = doc.files
    if doc.path is None or doc.text is None or files is None or files.native is None:
        return False
    if manual is None:  # a derivatives.yaml save or a lens: its FunctionsManual.cpp's edited helpers are compiled too
        from derivls.server.documents import manual_runs

        manual = manual_runs.manual_path(ls, doc)
    job = engine(ls).start(
        uri,
        str(doc.path),
        doc.text,
        doc.analysis,
        str(files.native),
        str(files.tags) if files.tags is not None else None,
        lines,
        ls.settings.profile,
        getattr(files, "torch_version", None),
        manual=manual,
    )
    if job is None:
        return False
    watch_session(ls, engine(ls))  # (the run may have started the session: a lens click's)
    asyncio.ensure_future(
        background.follow(
            ls,
            uri,
            job,
            engine(ls),
            title="derivls: gradcheck",
            report=lambda progress: types.WorkDoneProgressReport(message=str(progress)),
            finished=_finished,
            warning="derivls gradcheck",
            refresh_lenses=True,  # each entry's lens shows its verdict
        )
    )
    return True


def _finished(result: Any) -> str:
    return result.summary.splitlines()[0] if result and result.summary else "done"


def lsp_diagnostics(ls: DerivlsServer, doc: Any) -> list[types.Diagnostic]:
    from derivls.server.documents import manual_runs

    if doc.analysis is None or doc.lines is None:
        return []
    if bool(getattr(ls.settings, "gradcheck_on_save", False)):  # the text as opened counts as checked
        runs = engine(ls)
        if doc.uri not in runs.opened:
            runs.opened.add(doc.uri)
            runs.seen(doc.uri, doc.analysis)
            manual_runs.seen(ls, doc)  # its FunctionsManual.cpp as now: what its saves are compared with
            if trusted(ls):  # gradcheck on save in a trusted workspace: the session starts in the background
                runs.session(start=True)
                watch_session(ls, runs)
        elif trusted(ls) and doc.path is not None:  # an edit: the session finds the edited entries' samples now
            runs.prefetch(doc.uri, str(doc.path), doc.analysis)
    found = getattr(ls, "_derivls_gradcheck", None)
    if found is None:
        return []
    out = background.lsp_diagnostics(found, doc, SOURCE)
    manual_runs.publish(ls)  # a failure of an entry calling an edited helper, on the helper's line
    return out


def diagnostics_now(ls: DerivlsServer, doc: Any) -> list[Any]:
    """The gradcheck diagnostics of `doc`'s entries unchanged since their run, where they are now (derivls
    Diagnostics: a repair found is the fix of its gradcheck-mismatch, offered as a code action, never applied)."""
    found = getattr(ls, "_derivls_gradcheck", None)
    if found is None or doc.analysis is None:
        return []
    return list(found.diagnostics(doc.uri, doc.analysis))


def watch_session(ls: DerivlsServer, runs: GradcheckRuns) -> None:
    """`$/progress` while the server's gradcheck session starts, now and at each restart (the client must support
    work-done progress, and this must run on the server's event loop)."""
    session = runs.live_session
    if session is None or getattr(ls, "_derivls_session_watched", None) is session:
        return
    supports = getattr(ls, "client_supports", None)
    if supports is None or not supports("window.work_done_progress"):
        return
    try:
        loop = asyncio.get_running_loop()
    except RuntimeError:
        return
    ls._derivls_session_watched = session

    def on_state(state: str) -> None:  # (in the session's keeper thread)
        if state == "starting":
            loop.call_soon_threadsafe(_follow_start, ls, session)

    session.on_state = on_state
    if session.state == "starting":
        _follow_start(ls, session)


def _follow_start(ls: DerivlsServer, session: Any) -> None:
    running = getattr(ls, "_derivls_session_progress", None)
    if running is None or running.done():
        ls._derivls_session_progress = asyncio.ensure_future(_session_progress(ls, session))


async def _session_progress(ls: DerivlsServer, session: Any) -> None:
    """One start of the session: begin, then end once it is ready (or failed, or stopped)."""
    token = f"derivls-session-{next(_session_tokens)}"
    started = time.monotonic()
    progress = ls.work_done_progress
    try:
        await asyncio.wait_for(progress.create_async(token), timeout=5)
    except Exception as e:  # the client refused: the session starts all the same
        log.info("no progress for the gradcheck session: %r", e)
        return
    message = "importing torch and its OpInfo database, and parsing torch's headers, once for the runs to come"
    progress.begin(token, types.WorkDoneProgressBegin(title=SESSION_TITLE, message=message, cancellable=False))
    while session.state == "starting":
        await asyncio.sleep(SESSION_POLL_SECONDS)
    took = time.monotonic() - started
    if session.state == "ready":
        torch = f"torch {session.torch_version}" if session.torch_version else ""
        jit = session.jit if isinstance(getattr(session, "jit", None), dict) else {}
        if jit.get("ready"):
            how = "edits compiled in-process (JIT)"
        elif jit.get("reason") and jit.get("reason") != "off":
            how = f"edits built by g++: no JIT ({jit['reason']})"
        else:
            how = ""
        detail = "; ".join(part for part in (torch, how) if part)
        message = f"ready in {took:.1f} s" + (f" ({detail})" if detail else "")
    elif session.state == "failed":
        message = f"not started: {session.error or 'the session failed'} (each run starts its own torch process)"
    else:
        message = "stopped"
    progress.end(token, types.WorkDoneProgressEnd(message=message))


def session_status(ls: DerivlsServer) -> dict[str, Any] | None:
    """The gradcheck session's state and pid (derivls/status), None when the server has not asked for one."""
    runs = getattr(ls, "_derivls_gradcheck", None)
    session = getattr(runs, "live_session", None)
    return session.describe() if session is not None else None


def close(ls: DerivlsServer, uri: str) -> None:
    found = getattr(ls, "_derivls_gradcheck", None)
    if found is not None:
        found.close(uri)
