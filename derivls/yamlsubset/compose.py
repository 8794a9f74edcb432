"""derivatives.yaml entries composed into PyYAML-shaped nodes (marks included)."""

from __future__ import annotations

import re

from derivls.yamlsubset.scalars import (
    BOOL_TAG,
    BOOL_VALUES,
    INDICATORS,
    KEY,
    OUTSIDE,
    STR_TAG,
    Unsupported,
    resolve_plain,
    significant,
)

# -- nodes -------------------------------------------------------------------------------------


class Mark:
    __slots__ = ("line", "column", "index")

    def __init__(self, line: int, column: int, index: int) -> None:
        self.line = line
        self.column = column
        self.index = index

    def __repr__(self) -> str:
        return f"Mark({self.line}, {self.column}, {self.index})"


class Node:
    """Like yaml.ScalarNode / SequenceNode / MappingNode (``id`` says which); ``python`` is
    the constructed value of a non-string scalar. ``start`` and ``end`` are (line, column,
    index) tuples, which ``start_mark`` and ``end_mark`` present as marks."""

    __slots__ = ("id", "tag", "value", "start", "end", "python")

    def __init__(
        self,
        id: str,
        tag: str,
        value: object,
        start: tuple[int, int, int],
        end: tuple[int, int, int],
        python: object = None,
    ) -> None:
        self.id = id
        self.tag = tag
        self.value = value
        self.start = start
        self.end = end
        self.python = python

    @property
    def start_mark(self) -> Mark:
        return Mark(*self.start)

    @property
    def end_mark(self) -> Mark:
        return Mark(*self.end)

    def construct(self) -> object:
        """What yaml's SafeConstructor makes of the node (a new list / dict each time)."""
        if self.id == "scalar":
            return self.value if self.tag == STR_TAG else self.python
        if self.id == "sequence":
            return [item.construct() for item in self.value]  # type: ignore[attr-defined]
        return {key.construct(): value.construct() for key, value in self.value}  # type: ignore[attr-defined]

    def __repr__(self) -> str:
        return f"Node({self.id}, {self.value!r}, {self.start}, {self.end})"


_SEQ_TAG = "tag:yaml.org,2002:seq"
_MAP_TAG = "tag:yaml.org,2002:map"
_FLOW_ITEM = re.compile(r"[A-Za-z0-9_]+")
_KEYS_OK: dict[str, bool] = {}  # key text -> whether it is a plain string key of the subset
# a plain scalar cannot start with an indicator ('-' is handled apart)


class _Composer:
    def __init__(self, text: str) -> None:
        self.text = text
        self.lines = text.split("\n")
        starts = []
        at = 0
        for line in self.lines:
            starts.append(at)
            at += len(line) + 1
        self.starts = starts
        # where the text ends: a last line without a line break may hold blanks or a comment
        self.eof_line = len(self.lines) - 1
        self.eof_column = len(self.lines[-1])

    def end_for(self, indent: int) -> tuple[int, int, int]:
        """Where libyaml ends a block collection at `indent` that lasts to the end of the text:
        where the text ends if that is left of the indentation, else on a forced new line."""
        if self.eof_column < indent:
            return (self.eof_line, self.eof_column, len(self.text))
        return (self.eof_line + (1 if self.eof_column else 0), 0, len(self.text))

    def mark(self, line: int, column: int) -> tuple[int, int, int]:
        return (line, column, self.starts[line] + column)

    def nextsignificant(self, i: int) -> int:
        lines = self.lines
        while i < len(lines) and not significant(lines[i]):
            i += 1
        return i

    def compose(self) -> Node | None:
        lines = self.lines
        first = self.nextsignificant(0)
        if first == len(lines):
            return None  # only comments and blank lines
        line = lines[first]
        if not line.startswith("- "):
            raise Unsupported
        column = len(line) - len(line[1:].lstrip(" "))
        if column >= len(line) or line[column] == "#":
            raise Unsupported  # the item's mapping starts on a later line, or is empty
        item, i = self.mapping(first, column, column)
        if self.nextsignificant(i) != len(lines):
            raise Unsupported  # a second item, or text at a smaller indentation
        return Node("sequence", _SEQ_TAG, [item], self.mark(first, 0), self.end_for(0))

    def mapping(self, i: int, indent: int, first_column: int) -> tuple[Node, int]:
        """The block mapping whose first key is at (i, first_column), the others at `indent`."""
        lines = self.lines
        pairs: list[tuple[Node, Node]] = []
        start = self.mark(i, first_column)
        column = first_column
        while True:
            line = lines[i]
            content = line[column:]
            colon = content.find(":")
            if colon <= 0:
                raise Unsupported
            key_text = content[:colon]
            rest = content[colon + 1 :]
            ok = _KEYS_OK.get(key_text)
            if ok is None:  # keys repeat (self, result, name, …): decided once each
                if len(_KEYS_OK) > 50_000:  # (a long-lived server sees whatever is typed)
                    _KEYS_OK.clear()
                ok = _KEYS_OK[key_text] = KEY.fullmatch(key_text) is not None and resolve_plain(key_text) == STR_TAG
            if not ok or (rest and rest[0] != " "):
                raise Unsupported
            key = Node("scalar", STR_TAG, key_text, self.mark(i, column), self.mark(i, column + colon))
            value_text = rest.lstrip(" ")
            if not value_text or value_text[0] == "#":
                # the value is a block mapping on the next lines (an empty value: not here)
                j = self.nextsignificant(i + 1)
                if j == len(lines):
                    raise Unsupported
                nested_column = len(lines[j]) - len(lines[j].lstrip(" "))
                if nested_column <= indent or lines[j].startswith("- ", nested_column):
                    raise Unsupported
                value, i = self.mapping(j, nested_column, nested_column)
            else:
                value_column = column + colon + 1 + (len(rest) - len(value_text))
                value, i = self.value(i, value_column, indent)
            pairs.append((key, value))
            i = self.nextsignificant(i)
            if i == len(lines):
                return Node("mapping", _MAP_TAG, pairs, start, self.end_for(indent)), i
            column = len(lines[i]) - len(lines[i].lstrip(" "))
            if column < indent:
                return Node("mapping", _MAP_TAG, pairs, start, self.mark(i, column)), i
            if column > indent:
                raise Unsupported  # a continuation line, or a bad indentation

    def value(self, i: int, column: int, indent: int) -> tuple[Node, int]:
        """The inline value at (i, column) of a key at `indent`; also the next line index."""
        line = self.lines[i]
        first = line[column]
        if first == '"':
            return self.double_quoted(i, column, indent)
        if first == "'":
            close = line.find("'", column + 1)
            if close < 0 or line.startswith("'", close + 1):
                raise Unsupported  # multi-line, or an escaped quote
            self.end_of_line(line, close + 1)
            node = Node("scalar", STR_TAG, line[column + 1 : close], self.mark(i, column), self.mark(i, close + 1))
            return node, i + 1
        if first == "[":
            return self.flow_sequence(i, column), i + 1
        if first in INDICATORS or (first == "-" and (column + 1 == len(line) or line[column + 1] == " ")):
            raise Unsupported
        end = line.find(" #", column)
        text = (line[column:] if end < 0 else line[column:end]).rstrip(" ")
        if ": " in text or text.endswith(":"):
            raise Unsupported
        tag = resolve_plain(text)
        if tag == STR_TAG:
            python: object = None
        elif tag == BOOL_TAG:
            python = BOOL_VALUES[text.lower()]
        else:
            raise Unsupported
        return Node("scalar", tag, text, self.mark(i, column), self.mark(i, column + len(text)), python), i + 1

    def end_of_line(self, line: str, at: int) -> None:
        """After a quoted scalar or a flow sequence: nothing but blanks and a comment."""
        rest = line[at:]
        if rest and (rest[0] != " " or (rest.strip(" ") and not rest.lstrip(" ").startswith("#"))):
            raise Unsupported

    def double_quoted(self, i: int, column: int, indent: int) -> tuple[Node, int]:
        text = self.text
        open_at = self.starts[i] + column
        close_at = text.find('"', open_at + 1)
        if close_at < 0:
            raise Unsupported
        raw = text[open_at + 1 : close_at]
        if "\\" in raw:
            raise Unsupported  # escapes
        parts = raw.split("\n")
        last = i + len(parts) - 1
        for k in range(1, len(parts)):
            continuation = self.lines[i + k]
            if continuation.strip(" ") and len(continuation) - len(continuation.lstrip(" ")) <= indent:
                raise Unsupported  # not indented under its key
        if len(parts) == 1:
            value = raw
        else:
            # libyaml's folding: a line break becomes a space (n empty lines: n newlines);
            # blanks around line breaks go
            value = parts[0].rstrip(" ")
            breaks = 0
            for k in range(1, len(parts)):
                part = parts[k].lstrip(" ")
                if k < len(parts) - 1:
                    if not part:
                        breaks += 1
                        continue
                    part = part.rstrip(" ")
                value += (" " if breaks == 0 else "\n" * breaks) + part
                breaks = 0
        end_column = close_at + 1 - self.starts[last]
        self.end_of_line(self.lines[last], end_column)
        node = Node("scalar", STR_TAG, value, self.mark(i, column), self.mark(last, end_column))
        return node, last + 1

    def flow_sequence(self, i: int, column: int) -> Node:
        """A one-line flow sequence of plain words and double-quoted strings, at (i, column)."""
        line = self.lines[i]
        items: list[Node] = []
        at = column + 1
        while True:
            while line.startswith(" ", at):
                at += 1
            if at >= len(line):
                raise Unsupported  # continues on the next line
            if line[at] == "]" and not items:
                break
            if line[at] == '"':
                close = line.find('"', at + 1)
                if close < 0 or "\\" in line[at:close]:
                    raise Unsupported
                items.append(Node("scalar", STR_TAG, line[at + 1 : close], self.mark(i, at), self.mark(i, close + 1)))
                at = close + 1
            else:
                end = at
                while end < len(line) and line[end] not in ",] ":
                    end += 1
                word = line[at:end]
                if not _FLOW_ITEM.fullmatch(word):
                    raise Unsupported  # empty, nested, single-quoted, …
                tag = resolve_plain(word)
                if tag == BOOL_TAG:
                    python: object = BOOL_VALUES[word.lower()]
                elif tag == STR_TAG:
                    python = None
                else:
                    raise Unsupported
                items.append(Node("scalar", tag, word, self.mark(i, at), self.mark(i, end), python))
                at = end
            while line.startswith(" ", at):
                at += 1
            if line.startswith(",", at):
                at += 1
                continue
            if line.startswith("]", at):
                break
            raise Unsupported
        self.end_of_line(line, at + 1)
        return Node("sequence", _SEQ_TAG, items, self.mark(i, column), self.mark(i, at + 1))


def compose_entry_chunk(text: str) -> Node | None:
    """yaml.compose(text) for one derivatives.yaml entry; None if it holds no node."""
    if not text.isascii() or OUTSIDE.search(text) or text.startswith(("%", "---")):
        raise Unsupported
    return _Composer(text).compose()
