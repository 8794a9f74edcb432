"""Columns: the analysis core counts code points; LSP clients count UTF-16 units (or UTF-8/UTF-32).

`LineIndex` holds one version of a document split into lines the way LSP
counts them (`\\n`, `\\r\\n`, `\\r`) and converts columns in both directions.
ASCII lines (every line of the real derivatives.yaml) take a fast path.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from lsprotocol import types

from derivls.base.diagnostics import Span
from derivls.base.linebreaks import CompactLines
from derivls.server.documents.blocklines import BlockLines

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


class EditedText:
    """One document's text as LSP changes make it, with its lines kept up to date and the edits since
    `base` (code-point (start, end, new length), as DocumentAnalyzer.analyse takes them).

    A change costs its lines, not the file's: the lines are a BlockLines (server/blocklines.py), whose
    next version shares every block but the edited one, and which finds where a line starts from one
    block's lengths. Texts with a \r or over COMPACT_FROM characters take apply_change's whole-text
    path (and keep no lines)."""

    __slots__ = ("base", "edits", "lines", "text")

    def __init__(self, text: str, lines: Sequence[str] | None = None) -> None:
        """`lines`: text's lines if known (a LineIndex's: a BlockLines is shared as it is, a list is
        read, never changed; the first change of a 10x file then does not split its 30,000 lines
        again, ~10 ms)."""
        self.text = text
        self.base = text
        self.edits: list[tuple[int, int, int]] = []
        self.lines: BlockLines | None = None
        if "\r" not in text and len(text) < COMPACT_FROM:
            if not isinstance(lines, BlockLines):
                lines = BlockLines.of(lines if lines is not None else text.split("\n"))
            self.lines = lines

    def _offset(self, line: int, units: int, encoding: str) -> tuple[int, int, int]:
        """(line, column, offset) of an LSP position, clamped into the text."""
        assert self.lines is not None
        if line < 0:
            return 0, 0, 0
        if line >= len(self.lines):
            last = len(self.lines) - 1
            return last, len(self.lines[last]), len(self.text)
        column = from_client_column(self.lines[line], units, encoding)
        return line, column, self.lines.offset(line) + column

    def apply(self, change: object, encoding: str = UTF16) -> str:
        """Apply one `TextDocumentContentChangeEvent` (as apply_change does); the new text."""
        new_text = getattr(change, "text", "")
        range_ = getattr(change, "range", None)
        old_length = len(self.text)
        if range_ is None or self.lines is None or "\r" in new_text or old_length + len(new_text) >= COMPACT_FROM:
            text = apply_change(self.text, change, encoding)
            self.edits.append((0, old_length, len(text)))
            self.text, self.lines = text, None
            if "\r" not in text and len(text) < COMPACT_FROM:
                self.lines = BlockLines.of(text.split("\n"))
            return text
        first, first_column, start = self._offset(range_.start.line, range_.start.character, encoding)
        last, last_column, end = self._offset(range_.end.line, range_.end.character, encoding)
        if end < start:
            (first, first_column, start), (last, last_column, end) = (
                (last, last_column, end),
                (first, first_column, start),
            )
        lines = self.lines
        edited = (lines[first][:first_column] + new_text + lines[last][last_column:]).split("\n")
        self.lines = lines.spliced(first, last, edited)  # the old version stays valid (a LineIndex may hold it)
        self.text = "".join((self.text[:start], new_text, self.text[end:]))
        self.edits.append((start, end, len(new_text)))
        return self.text

    def take_edits(self, since: str | None) -> list[tuple[int, int, int]] | None:
        """The edits that made the text from `since` (if it is the base, the very object), and the text
        becomes the new base. None: not known."""
        edits = self.edits if since is not None and since is self.base else None
        self.base, self.edits = self.text, []
        return edits


class LineIndex:
    """The lines of one document version (without their line breaks)."""

    __slots__ = ("encoding", "lines", "text")

    def __init__(self, text: str, encoding: str = UTF16, lines: Sequence[str] | None = None) -> None:
        """`lines`: text's lines if known (EditedText.lines: shared, never changed)."""
        self.text = text
        self.encoding = encoding
        self.lines: Sequence[str]
        if lines is None or len(text) >= COMPACT_FROM:
            # a big text keeps offsets, not one str per line (linebreaks.CompactLines: same lines, ~6x less memory)
            self.lines = split_lines(text) if len(text) < COMPACT_FROM else CompactLines(text)  # type: ignore[assignment]
        else:
            self.lines = lines

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
    "EditedText",
    "LineIndex",
    "apply_change",
    "from_client_column",
    "offset_at",
    "split_lines",
    "to_client_column",
]
