"""The compile subprocess: `python -m derivls.compile.worker`, a JSON request on stdin.

Request: {"path", "text", "native", "tags", "profile", "torch_version", "lines": [0-based `- name:`
lines] | null, "cxx", "torch_include", "jobs"}; the file is opened as the CLI and the server open it
(project.open_project: the same profile, release rules and native-index cache). Output, one JSON object per line on stdout: {"progress": [done, total,
what]} while it runs, then {"entries": [{"line", "key", "diagnostics": [...]}]} (diagnostic spans
relative to their entry's line) or {"error": "one line"} (a missing compiler or headers).
"""

from __future__ import annotations

import json
import sys
from pathlib import Path
from typing import Any


def run(request: dict[str, Any], out: Any) -> int:
    from derivls.compile.document import compile_file
    from derivls.compile.toolchain import SetupError
    from derivls.jobs.entries import entry_key
    from derivls.jobs.wire import diagnostic_to_json
    from derivls.project.opener import UsageError, open_project

    def emit(obj: dict[str, Any]) -> None:
        out.write(json.dumps(obj) + "\n")
        out.flush()

    try:
        tags = request.get("tags")
        project = open_project(
            Path(request["path"]),
            Path(request["native"]),
            Path(tags) if tags else None,
            request.get("profile") or "auto",
            torch_version=request.get("torch_version"),
        )
        if project.index is None:
            raise ValueError(next((d.message for d in project.setup), f"cannot index {request['native']}"))
        analysis = project.analyzer.analyse(request["text"])
        lines = request.get("lines")
        result = compile_file(
            Path(request["path"]),
            analysis,
            cxx=request.get("cxx"),
            torch_include=request.get("torch_include"),
            lines=lines,
            jobs=int(request.get("jobs") or 2),
            progress=lambda done, total, what: emit({"progress": [done, total, what]}),
        )
    except (SetupError, UsageError, LookupError, OSError, ValueError) as e:
        emit({"error": str(e.args[0] if e.args else e)})
        return 2
    keys = {placed.line: entry_key(placed) for placed in analysis.entries}
    entries = [
        {
            "line": line,
            "key": keys.get(line, ""),
            "diagnostics": [diagnostic_to_json(d, line) for d in diagnostics],
        }
        for line, diagnostics in sorted(result.by_entry.items())
    ]
    emit({"entries": entries})
    return 0


def main() -> int:
    from derivls.base.bounded import end_own_group
    from derivls.base.children import die_with_parent, set_exit_on_term

    die_with_parent()  # the server's death is this process's SIGTERM (Linux)
    set_exit_on_term()  # SIGTERM (that, or a cancel): compilers killed, temporary files removed
    try:
        return run(json.loads(sys.stdin.read()), sys.stdout)
    except SystemExit:
        end_own_group()  # (every compiler's group, the scratch folder, then this process's own group)
        raise


if __name__ == "__main__":
    sys.exit(main())
