"""Lines as LSP counts them (only \\n, \\r\\n and \\r end a line), for positions PyYAML gives.

PyYAML also ends lines at \\x85, \\u2028 and \\u2029, so a mark's ``line``/``column`` after one of
them is not where an editor shows the text; its ``index`` (a code-point offset) is right.
``remap_marks`` rewrites every mark of a composed node tree from its index; ``error_span``
locates a PyYAML error the same way, including a ``ReaderError`` (a control character such as
\\x0c, \\x0b or \\x1c, which PyYAML refuses) that carries only an offset.
``count_line_breaks`` counts LSP line breaks (a lone \\r is one).
"""

from __future__ import annotations

import re
from bisect import bisect_right

from derivls.base.diagnostics import Span

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

__all__ = ["CompactLines", "count_line_breaks", "error_span", "line_starts", "remap_marks"]

_LSP_BREAK = re.compile(r"\r\n|\r|\n")
_YAML_ONLY = re.compile(r"\r(?!\n)|[\x85\u2028\u2029]")  # where PyYAML's line count and LSP's part


def line_starts(text: str) -> list[int]:
    """The code-point offset where each LSP line of `text` starts (the first is 0)."""
    return [0] + [m.end() for m in _LSP_BREAK.finditer(text)]


def count_line_breaks(text: str, begin: int = 0, end: int | None = None) -> int:
    """The number of LSP line breaks in text[begin:end]."""
    if end is None:
        end = len(text)
    breaks = text.count("\n", begin, end)
    if text.find("\r", begin, end) < 0:
        return breaks
    return len(_LSP_BREAK.findall(text, begin, end))


class _Mark:
    """A mark on LSP lines (libyaml's marks cannot be changed in place)."""

    __slots__ = ("index", "line", "column")

    def __init__(self, index: int, line: int, column: int) -> None:
        self.index = index
        self.line = line
        self.column = column


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in _LSP_BREAK.finditer(text)]

    def position(self, index: int) -> tuple[int, int]:
        line = bisect_right(self.starts, index) - 1
        return line, index - self.starts[line]


def remap_marks(root: Any, text: str) -> None:
    """Give every mark of a PyYAML node tree the LSP line and column of its index (in place).
    Nothing to do (and nothing done) when `text` has no break the two count differently."""
    if root is None or _YAML_ONLY.search(text) is None:
        return
    lines = _Lines(text)
    stack = [root]
    seen: set[int] = set()
    while stack:
        node = stack.pop()
        if id(node) in seen:
            continue
        seen.add(id(node))
        if node.start_mark is not None:
            node.start_mark = _Mark(node.start_mark.index, *lines.position(node.start_mark.index))
        if node.end_mark is not None:
            node.end_mark = _Mark(node.end_mark.index, *lines.position(node.end_mark.index))
        if node.id == "sequence":
            stack.extend(node.value)
        elif node.id == "mapping":
            for key, value in node.value:
                stack.append(key)
                stack.append(value)


def error_span(e: Any, text: str) -> Span | None:
    """Where a PyYAML error is, on LSP lines (one character); None if it says nowhere.

    An error found at the end of the text (an unclosed quote or bracket: "found unexpected end of
    stream") is placed at its context mark, where the construct left open starts (the opening quote),
    not at the end, which is the next entry's `- name:` line when the text is one entry's chunk."""
    index = None
    mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
    context = getattr(e, "context_mark", None)
    if (
        context is not None
        and mark is not context
        and getattr(context, "index", None) is not None
        and isinstance(getattr(mark, "index", None), int)
        and getattr(mark, "index", 0) >= len(text.rstrip())
    ):
        mark = context
    if mark is not None and getattr(mark, "index", None) is not None:
        index = mark.index
    elif isinstance(getattr(e, "position", None), int):  # yaml.reader.ReaderError
        index = e.position
    if index is None:
        return None
    index = max(0, min(index, len(text)))
    line, column = _Lines(text).position(index)
    return Span(line, column, line, column + 1)


class CompactLines:
    """The LSP lines of a big text as a read-only sequence of str, holding two offsets per line instead of
    one str object per line (a 50 MB file of short lines: ~30 MB instead of ~170 MB)."""

    __slots__ = ("text", "starts", "ends")

    def __init__(self, text: str) -> None:
        from array import array

        self.text = text
        starts = array("q", [0])
        ends = array("q")
        for match in _LSP_BREAK.finditer(text):
            ends.append(match.start())
            starts.append(match.end())
        ends.append(len(text))
        self.starts = starts
        self.ends = ends

    def __len__(self) -> int:
        return len(self.starts)

    def __getitem__(self, i: Any) -> Any:
        if isinstance(i, slice):
            return [self[k] for k in range(*i.indices(len(self.starts)))]
        if i < 0:
            i += len(self.starts)
        if not 0 <= i < len(self.starts):
            raise IndexError("line index out of range")
        return self.text[self.starts[i] : self.ends[i]]

    def __iter__(self) -> Any:
        text, starts, ends = self.text, self.starts, self.ends
        for k in range(len(starts)):
            yield text[starts[k] : ends[k]]
