"""Core diagnostics → LSP diagnostics (ranges in the client's position encoding)."""

from __future__ import annotations

from collections.abc import Iterable

from lsprotocol import types
from pygls.uris import from_fs_path

from derivls.base.diagnostics import Code, Diagnostic
from derivls.codes.docs import doc_uri
from derivls.server.documents.positions import LineIndex

SOURCE = "derivls"


def file_uri(path: str) -> str:
    return from_fs_path(path) or f"file://{path}"


def point(line: int) -> types.Range:
    return types.Range(
        start=types.Position(line=max(line, 0), character=0), end=types.Position(line=max(line, 0), character=0)
    )


def code_description(code: Code) -> types.CodeDescription:
    """The link an editor shows on a diagnostic: the code's doc page shipped inside the package."""
    return types.CodeDescription(href=doc_uri(code))


def to_lsp(d: Diagnostic, lines: LineIndex, uri: str) -> types.Diagnostic:
    related = None
    if d.related:
        related = [
            types.DiagnosticRelatedInformation(
                location=types.Location(
                    uri=uri if r.path is None else file_uri(r.path),
                    range=lines.line_range(r.line) if r.path is None else point(r.line),
                ),
                message=r.message,
            )
            for r in d.related
        ]
    return types.Diagnostic(
        range=lines.range(d.span),
        message=d.message,
        severity=types.DiagnosticSeverity(int(d.severity)),
        code=d.code,
        code_description=code_description(d.code),
        source=SOURCE,
        related_information=related,
    )


def to_lsp_all(diagnostics: Iterable[Diagnostic], lines: LineIndex, uri: str) -> list[types.Diagnostic]:
    return [to_lsp(d, lines, uri) for d in diagnostics]


__all__ = ["SOURCE", "code_description", "file_uri", "point", "to_lsp", "to_lsp_all"]
