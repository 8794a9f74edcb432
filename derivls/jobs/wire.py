"""A worker's diagnostics as JSON and back (spans relative to their entry's line): what compile's and
gradcheck's workers write and the server reads."""

from __future__ import annotations

from typing import Any


def diagnostic_to_json(d: Any, entry_line: int) -> dict[str, Any]:
    return {
        "line": d.span.line - entry_line,
        "column": d.span.column,
        "end_line": d.span.end_line - entry_line,
        "end_column": d.span.end_column,
        "message": d.message,
        "code": d.code,
        "related": [[r.path, r.line, r.message] for r in d.related],
        "fixes": [
            {"title": f.title, "edits": [[*_relative(e.span, entry_line), e.new_text] for e in f.edits]}
            for f in d.fixes
        ],
    }


def _relative(span: Any, entry_line: int) -> list[int]:
    return [span.line - entry_line, span.column, span.end_line - entry_line, span.end_column]


def fixes_from_json(d: dict[str, Any]) -> tuple[Any, ...]:
    """diagnostic_to_json's fixes, read back (spans still relative to the entry's line)."""
    from derivls.base.diagnostics import Edit, Fix, Span

    return tuple(
        Fix(str(f["title"]), tuple(Edit(Span(*e[:4]), str(e[4])) for e in f.get("edits", ())))
        for f in d.get("fixes") or ()
    )
