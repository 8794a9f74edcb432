"""Where completion is asked, read from the text (so it works while the entry being typed does not parse):
in `name:`, at a key, under `dispatch:`, in a formula; the word typed so far; the keys already used.
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass

from derivls.derivatives.analysis import AUTOGRAD_KEYS

DISPATCH_KEYS = ("Default", *AUTOGRAD_KEYS)
ENTRY_KEYS = ("name", "output_differentiability", "dispatch")


@dataclass(frozen=True)
class TextContext:
    kind: str  # "name" | "entry_key" | "dispatch_key" | "formula_key" | "formula" | "none"
    prefix: str  # the word being typed
    prefix_start: int  # its column
    entry_line: int | None  # 0-based line of the entry's `- ` start
    schema: str | None  # the entry's `name:` text when found
    in_dispatch: bool = False
    formula_key: str | None = None  # the key of the formula being typed
    value_start: int = 0  # column where the `name:` value starts


_NAME_LINE = re.compile(r"^(-\s+|\s+)?name\s*:\s*")
_KEY_LINE = re.compile(r"^(\s*)(-\s+)?([^:#]*?)\s*:(\s|$)")
_WORD_BEFORE = re.compile(r"[\w\[\]]*$")


def _indent(line: str) -> int:
    return len(line) - len(line.lstrip(" "))


def text_context(lines: Sequence[str], line: int, column: int) -> TextContext:
    text = lines[line] if 0 <= line < len(lines) else ""
    before = text[:column]
    entry_line = None
    for i in range(line, -1, -1):
        if lines[i].startswith("-"):
            entry_line = i
            break
        if lines[i] and not lines[i].startswith((" ", "#", "\t")) and i != line:
            break
    schema = None
    dispatch_indent = None
    if entry_line is not None:
        end = len(lines)
        for i in range(entry_line, len(lines)):
            if i > entry_line and lines[i].startswith("-"):
                end = i
                break
        for i in range(entry_line, end):
            m = _NAME_LINE.match(lines[i])
            if m and schema is None and (i == entry_line or _indent(lines[i]) <= 2):
                schema = strip_quotes(lines[i][m.end() :].split(" #")[0].strip())
            stripped = lines[i].lstrip(" -")
            if i < line and stripped.startswith("dispatch:"):
                dispatch_indent = _indent(lines[i]) if not lines[i].startswith("-") else 2
    m = _NAME_LINE.match(text)
    if m and column >= m.end() and (entry_line == line or _indent(text) <= 2):
        return TextContext("name", text[m.end() : column], m.end(), entry_line, schema, value_start=m.end())
    word = _WORD_BEFORE.search(before)
    prefix = word.group(0) if word else ""
    prefix_start = column - len(prefix)
    if entry_line is None:
        return TextContext("none", prefix, prefix_start, None, None)
    km = _KEY_LINE.match(text)
    if km and column > km.end(3) and ":" in text[km.end(3) : column + 1]:
        # after `key:`: a formula
        key = km.group(3).strip()
        if key in ENTRY_KEYS or (
            dispatch_indent is not None and _indent(text) <= dispatch_indent + 2 and key in DISPATCH_KEYS
        ):
            return TextContext("none", prefix, prefix_start, entry_line, schema)
        return TextContext("formula", prefix, prefix_start, entry_line, schema, dispatch_indent is not None, key)
    if ":" not in before and (before.strip(" -") == "" or re.fullmatch(r"\s*(-\s+)?[\w, ]*", before)):
        indent = _indent(text) if not text.startswith("-") else 2
        if dispatch_indent is not None and indent > dispatch_indent:
            if indent <= dispatch_indent + 2:
                return TextContext("dispatch_key", prefix, prefix_start, entry_line, schema, True)
            return TextContext("formula_key", prefix, prefix_start, entry_line, schema, True)
        if line != entry_line and indent > 2 and _continues_formula(lines, line):
            return TextContext("formula", prefix, prefix_start, entry_line, schema, dispatch_indent is not None)
        return TextContext("entry_key", prefix, prefix_start, entry_line, schema)
    return TextContext("formula", prefix, prefix_start, entry_line, schema, dispatch_indent is not None)


def _continues_formula(lines: Sequence[str], line: int) -> bool:
    """A deeper-indented line right under a `key: value` line continues that value."""
    previous = lines[line - 1] if line > 0 else ""
    km = _KEY_LINE.match(previous)
    return bool(km and previous[km.end() :].strip()) and _indent(lines[line]) > _indent(previous)


def strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def used_keys(lines: Sequence[str], entry_line: int, line: int, in_dispatch: bool) -> set[str]:
    """Argument names already given a formula in the entry (or its current dispatch section)."""
    used: set[str] = set()
    end = len(lines)
    for i in range(entry_line + 1, len(lines)):
        if lines[i].startswith("-"):
            end = i
            break
    for i in range(entry_line, end):
        if i == line:
            continue
        km = _KEY_LINE.match(lines[i])
        if km:
            used.update(n.strip() for n in km.group(3).split(",") if n.strip())
    return used


__all__ = ["DISPATCH_KEYS", "ENTRY_KEYS", "TextContext", "strip_quotes", "text_context", "used_keys"]
