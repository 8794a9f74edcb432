"""The gradcheck subprocess of the server: `python -m derivls.gradcheck.worker`, a JSON request on stdin.

It runs in derivls's own Python (no torch); it builds the extension and starts the torch child
(derivls.gradcheck.runner), which dies with it. Request: {"path", "text", "native", "tags",
"profile", "torch_version", "lines": [0-based `- name:` lines], "python", "cxx", "torch_include",
"force", "repair" (default true: the repair phase), "manual" (a FunctionsManual.cpp: its edited helpers the entries
call are compiled)}. Output, one JSON object per line: {"progress": "what"} while it runs, then {"entries":
[{"line", "key", "diagnostics": [...]}], "summary": "text", "jit", "jit_define"} (spans relative to their entry's line; a diagnostic a repair was found for carries it in "fixes")
or {"error": "one line"}; with "manual", the answer's "manual" is {"path", "base", "edited", "compiled",
"diagnostics": [...]} (spans of that file: a helper's compile error, a failure on the helper's name). Each entry also carries its "verdict" (passed, failed, not checkable) and
"seconds" (the run's build and check time), what the editor shows on the entry's lens.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def run(
    request: dict[str, Any],
    out: Any,
    *,
    analysis: Any = None,
    session: Any = None,
    cancel: Any = None,
    setup: dict[str, Any] | None = None,
) -> int:
    """The run; `analysis` (the server's, of the request's text), `session` (a warm gradcheck session: used,
    with the one-shot path when it is not warm or dies), `setup` (what was found of the chosen Python before:
    its torch version and include folder, kept by the caller) are given by an in-process run."""
    from derivls.base.diagnostics import Severity
    from derivls.compile.toolchain import SetupError
    from derivls.compile.units import collect_units
    from derivls.gradcheck.engine import RepairSource, gradcheck_in_session, gradcheck_units
    from derivls.gradcheck.release import release_mismatch
    from derivls.gradcheck.runner import python_version, torch_include
    from derivls.gradcheck.session import SessionDied, SessionUnavailable
    from derivls.project.opener import UsageError, open_project

    def emit(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    found = setup if setup is not None else {}
    try:
        path = Path(request["path"])
        tags = request.get("tags")
        python = request.get("python") or sys.executable
        if "version" not in found:
            found["version"] = python_version(python)
        version = found["version"]
        if version is None:
            found.pop("version", None)
            raise ValueError(f"{python} has no torch (set gradcheckPython to a Python with torch)")
        mismatch = release_mismatch(path, version)
        if mismatch and not request.get("force"):
            raise ValueError(mismatch)
        # the chosen Python's torch headers and libraries (a workspace's own torch/include is never compiled
        # or linked against unless the trusted compileTorchInclude setting names it)
        if "include" not in found:
            found["include"] = torch_include(python)
        include = request.get("torch_include") or found["include"]
        if analysis is None:
            project = open_project(
                path,
                Path(request["native"]),
                Path(tags) if tags else None,
                request.get("profile") or "auto",
                torch_version=request.get("torch_version"),
            )
            if project.index is None:
                raise ValueError(next((d.message for d in project.setup), f"cannot index {request['native']}"))
            analysis = project.analyzer.analyse(request["text"])
        units = collect_units(analysis, None, request.get("lines"))
        errors = {d.span.line for d in analysis.diagnostics if d.severity is Severity.ERROR}
        # an entry derivls finds errors in goes to g++ (its verdict is the user's), not to the session's JIT
        clean = not any(errors & set(range(u.entry_line, _end_line(analysis, u.entry_line) + 1)) for u in units)
        arguments: dict[str, Any] = dict(
            repair=RepairSource(request["text"], analysis) if request.get("repair", True) else None,
            cxx=request.get("cxx"),
            torch_include=include,
            cancel=cancel,
            progress=lambda what: emit({"progress": what}),
        )
        manual = _edited_manual(request.get("manual"), python, include, found)
        if manual is not None:  # (the edited FunctionsManual.cpp helpers the entries call are compiled: issue 51)
            arguments["manual"] = manual
        result = None

        def on_checked(early: Any) -> None:
            # the failures at once, their repairs in the final message; a unit that ran out of its time at once, the
            # other units' answers in the final message (an entry not answered yet is left out: it keeps its state)
            emit({**_entries_message(request, analysis, early, answered_only=True), "partial": True})

        if session is not None:
            try:
                result = gradcheck_in_session(units, path, session, jit=clean, on_checked=on_checked, **arguments)
            except (SessionUnavailable, SessionDied):
                if cancel is not None and cancel.is_set():
                    raise
                result = None  # the one-shot path
        if result is None:
            result = gradcheck_units(units, path, python=python, **arguments)
    except (SetupError, UsageError, LookupError, OSError, ValueError) as e:
        emit({"error": str(e.args[0] if e.args else e)})
        return 2
    emit(_entries_message(request, analysis, result))
    return 0


def _entries_message(
    request: dict[str, Any], analysis: Any, result: Any, answered_only: bool = False
) -> dict[str, Any]:
    """The run's answer: each entry's diagnostics and verdict, the summary, whether the JIT defined them.
    `answered_only`: only the entries whose every unit was answered (a partial answer)."""
    from derivls.gradcheck.results import NO_ANSWER
    from derivls.jobs.entries import entry_key
    from derivls.jobs.wire import diagnostic_to_json

    placed_at = {placed.line: placed for placed in analysis.entries}
    by_entry: dict[int, list[Any]] = {line: [] for line in request.get("lines") or placed_at}
    waiting = {o.entry_line for o in result.summary.outcomes if o.reason == NO_ANSWER} if answered_only else set()
    by_entry = {line: ds for line, ds in by_entry.items() if line not in waiting}
    lines = sorted(placed_at)
    for d in result.diagnostics:
        entry = max((line for line in lines if line <= d.span.line), default=None)
        if entry is not None and entry not in waiting:
            by_entry.setdefault(entry, []).append(d)
    statuses: dict[int, set[str]] = {}
    for outcome in result.summary.outcomes:
        statuses.setdefault(outcome.entry_line, set()).add(outcome.status)
    seconds = result.timings.build + result.timings.run
    manual = None
    if getattr(result, "manual_path", None) is not None:  # what the run said of its FunctionsManual.cpp
        manual = {
            **(result.manual_summary or {}),
            "path": str(result.manual_path),
            "diagnostics": [diagnostic_to_json(d, 0) for d in result.manual_diagnostics],
        }
    return {
        "entries": [
            {
                "line": line,
                "key": entry_key(placed_at[line]) if line in placed_at else "",  # (the entries answered only)
                "diagnostics": [diagnostic_to_json(d, line) for d in ds],
                "verdict": entry_verdict(statuses.get(line, set()), ds),
                "seconds": round(seconds, 1),
            }
            for line, ds in sorted(by_entry.items())
        ],
        "summary": result.summary.text(),
        "jit": result.timings.jit,  # defined by the session's JIT (no g++ build)
        "jit_define": round(result.timings.jit_define, 3),  # seconds of it Cling's definitions took
        **({"manual": manual} if manual is not None else {}),
    }


def _edited_manual(path: Any, python: str, include: Any, found: dict[str, Any]) -> Any:
    """The request's FunctionsManual.cpp and its edited helpers (derivls.gradcheck.edited), None without one. Kept in
    `found` (the caller's set-up) while the file's size and mtime hold: the editor's runs do not read and parse the
    file, nor ask git for its base, again for each save of derivatives.yaml."""
    import os

    from derivls.gradcheck import edited

    if not isinstance(path, str) or not path:
        return None
    manual = Path(path)
    try:
        stat = os.stat(manual)
    except OSError:
        return None  # (gone since the server named it: the installed helpers run, as without one)
    key = (str(manual), stat.st_size, stat.st_mtime_ns, python, str(include))
    kept = found.get("manual")
    if kept is not None and kept[0] == key:
        return kept[1]
    header = edited.header_beside(manual, [Path(include)] if include else [])
    loaded = edited.load(manual, python=python, header=header)
    found["manual"] = (key, loaded)
    return loaded


def _end_line(analysis: Any, line: int) -> int:
    """The last line of the entry whose `- name:` is on `line`."""
    return next((placed.end_line for placed in analysis.entries if placed.line == line), line)


def entry_verdict(statuses: set[str], diagnostics: list[Any]) -> str:
    """One entry's verdict over its units: "failed" (a formula disagrees, or a bound was reached), "passed"
    (every checkable unit passed), else "not checkable"."""
    if "failed" in statuses or diagnostics:
        return "failed"
    return "passed" if "passed" in statuses else "not checkable"


def main() -> int:
    from derivls.base.bounded import end_own_group
    from derivls.base.children import die_with_parent, set_exit_on_term

    die_with_parent()  # SIGTERM when the server dies: the torch child and the compilers die with this process
    set_exit_on_term()  # SIGTERM (cancel) ends it through `finally`s: the build's work folder is removed
    try:
        request = json.loads(sys.stdin.read())
    except ValueError:
        sys.stdout.write(json.dumps({"error": "the gradcheck request is not JSON"}) + "\n")
        return 2
    try:
        return run(request, sys.stdout)
    except SystemExit:
        end_own_group()  # (the compilers' and the torch child's groups, the scratch folder, this process's group)
        raise


if __name__ == "__main__":
    sys.exit(main())
