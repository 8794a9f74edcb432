"""Columns: the analysis core counts code points; LSP clients count UTF-16 units (or UTF-8/UTF-32).

`LineIndex` holds one version of a document split into lines the way LSP
counts them (`\\n`, `\\r\\n`, `\\r`) and converts columns in both directions.
ASCII lines (every line of the real derivatives.yaml) take a fast path.
"""

from __future__ import annotations

import re

from lsprotocol import types

from derivls.diagnostics import Span
from derivls.linebreaks import CompactLines

_LINE_BREAK = re.compile(r"\r\n|\r|\n")

UTF8 = types.PositionEncodingKind.Utf8.value
UTF16 = types.PositionEncodingKind.Utf16.value
UTF32 = types.PositionEncodingKind.Utf32.value


def _units(char: str, encoding: str) -> int:
    code = ord(char)
    if encoding == UTF16:
        return 2 if code > 0xFFFF else 1
    if encoding == UTF8:
        return 1 if code < 0x80 else 2 if code < 0x800 else 3 if code < 0x10000 else 4
    return 1


def to_client_column(line: str, column: int, encoding: str = UTF16) -> int:
    """Code-point column → client units (clamped to the line)."""
    column = max(0, min(column, len(line)))
    if encoding == UTF32 or line.isascii():
        return column
    return sum(_units(c, encoding) for c in line[:column])


def from_client_column(line: str, units: int, encoding: str = UTF16) -> int:
    """Client units → code-point column (clamped; a unit inside a character rounds down)."""
    if units <= 0:
        return 0
    if encoding == UTF32 or line.isascii():
        return min(units, len(line))
    seen = 0
    for i, char in enumerate(line):
        seen += _units(char, encoding)
        if seen > units:
            return i
        if seen == units:
            return i + 1
    return len(line)


def split_lines(text: str) -> list[str]:
    """The lines of `text` without their breaks, as LSP counts them (only \\n, \\r\\n, \\r)."""
    if "\r" not in text:
        return text.split("\n")  # the common case, at C speed
    return _LINE_BREAK.split(text)


def offset_at(text: str, line: int, units: int, encoding: str = UTF16, lines: list[str] | None = None) -> int:
    """The code-point offset in `text` of an LSP position (clamped: past the end → the end)."""
    if line < 0:
        return 0
    if lines is None:
        lines = split_lines(text)
    if line >= len(lines):
        return len(text)
    if "\r" not in text:
        start = sum(map(len, lines[:line])) + line
    else:
        start = 0
        for i, m in enumerate(_LINE_BREAK.finditer(text)):
            if i + 1 == line:
                start = m.end()
                break
    return start + from_client_column(lines[line], units, encoding)


def apply_change(text: str, change: object, encoding: str = UTF16) -> str:
    """Apply one `TextDocumentContentChangeEvent`, counting lines as LSP does (only \\n, \\r\\n, \\r)."""
    new_text = getattr(change, "text", "")
    range_ = getattr(change, "range", None)
    if range_ is None:
        return new_text
    lines = split_lines(text)
    start = offset_at(text, range_.start.line, range_.start.character, encoding, lines)
    end = offset_at(text, range_.end.line, range_.end.character, encoding, lines)
    if end < start:
        start, end = end, start
    return text[:start] + new_text + text[end:]


COMPACT_FROM = 4_000_000  # characters


class LineIndex:
    """The lines of one document version (without their line breaks)."""

    __slots__ = ("encoding", "lines", "text")

    def __init__(self, text: str, encoding: str = UTF16) -> None:
        self.text = text
        self.encoding = encoding
        # a big text keeps offsets, not one str per line (linebreaks.CompactLines: same lines, ~6x less memory)
        self.lines: list[str] = split_lines(text) if len(text) < COMPACT_FROM else CompactLines(text)  # type: ignore[assignment]

    def line(self, n: int) -> str:
        return self.lines[n] if 0 <= n < len(self.lines) else ""

    def position(self, line: int, column: int) -> types.Position:
        """A code-point position → an LSP Position (clamped into the document)."""
        if line >= len(self.lines):
            line = len(self.lines) - 1
            column = len(self.lines[line])
        line = max(line, 0)
        return types.Position(line=line, character=to_client_column(self.lines[line], column, self.encoding))

    def range(self, span: Span) -> types.Range:
        return types.Range(
            start=self.position(span.line, span.column), end=self.position(span.end_line, span.end_column)
        )

    def line_range(self, line: int) -> types.Range:
        """The whole of one line."""
        return types.Range(start=self.position(line, 0), end=self.position(line, len(self.line(line))))

    def column(self, position: types.Position) -> tuple[int, int]:
        """An LSP Position → (line, code-point column), clamped into the document."""
        line = max(0, min(position.line, len(self.lines) - 1))
        if position.line >= len(self.lines):
            return line, len(self.lines[line])
        return line, from_client_column(self.lines[line], position.character, self.encoding)


__all__ = [
    "UTF8",
    "UTF16",
    "UTF32",
    "LineIndex",
    "apply_change",
    "from_client_column",
    "offset_at",
    "split_lines",
    "to_client_column",
]
