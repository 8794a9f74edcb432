"""derivatives.yaml text → entries that remember where every key and value came from.

The file is a top-level YAML sequence whose items start with `- ` at column 0.
Each item is split out and parsed on its own, so a syntax error costs only the
broken entry and an edit re-parses only the entry it touched.
"""

from __future__ import annotations

from _thread import _local as _thread_local  # threading.local itself, without importing threading
from functools import lru_cache

from derivls.base.diagnostics import FIRST_LINE, Diagnostic, Span, error, warning
from derivls.base.frozen import frozen_dataclass
from derivls.base.linebreaks import count_line_breaks, error_span, remap_marks
from derivls.base.safeyaml import safe_compose
from derivls.codes.yamlfile import (
    DISPATCH_NOT_MAPPING,
    DUPLICATE_KEY,
    ENTRY_NOT_MAPPING,
    IGNORED_KEY,
    NOT_A_LIST,
    SECTION_NOT_MAPPING,
    YAML_SYNTAX,
    YAML_VALUE,
)
from derivls.yamlsubset import Node as SubsetNode
from derivls.yamlsubset import Unsupported, compose_entry_chunk

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)

if TYPE_CHECKING:
    from typing import Any

    import yaml
    from yaml.constructor import SafeConstructor

# Entries are composed by derivls.yamlsubset when they keep to the YAML subset the file is
# written in, by PyYAML (imported then) otherwise; the nodes, and so the entries, are the same.

_STR_TAG = "tag:yaml.org,2002:str"


@frozen_dataclass(slots=True)
class Chunk:
    """A slice of the file: the lines of one entry (or the preamble before the first)."""

    start_line: int
    text: str
    is_entry: bool


def _entry_starts(text: str) -> list[int]:
    """Offsets of the lines that start an entry (`-` then a blank or the line end)."""
    starts = []
    at = 0 if text.startswith("-") else text.find("\n-")
    while at >= 0:
        begin = at if at == 0 and text.startswith("-") else at + 1
        after = text[begin + 1 : begin + 2]
        if after in ("", " ", "\t", "\r", "\n"):
            starts.append(begin)
        at = text.find("\n-", begin + 1)
    return starts


def split_entries(text: str) -> list[Chunk]:
    # str.find instead of a MULTILINE regex: this runs on every keystroke over the whole file.
    starts = _entry_starts(text)
    is_entry = set(starts)
    if not starts or starts[0] != 0:
        starts.insert(0, 0)
    chunks: list[Chunk] = []
    line = 0
    for i, begin in enumerate(starts):
        end = starts[i + 1] if i + 1 < len(starts) else len(text)
        if begin == end:
            continue
        chunks.append(Chunk(line, text[begin:end], begin in is_entry))
        line += count_line_breaks(text, begin, end)  # LSP's: a lone \r ends a line too
    return chunks


@frozen_dataclass(slots=True)
class Scalar:
    """A YAML scalar: its Python value, where it stands, and its source text."""

    value: Any
    span: Span
    source: str

    def locate(self, needle: str, start: int = 0) -> Span:
        """The span of `needle` inside this scalar's source; the whole scalar if absent."""
        return locate_in(self.source, self.span, needle, start) or self.span


def locate_in(source: str, origin: Span, needle: str, start: int = 0) -> Span | None:
    index = source.find(needle, start) if needle else -1
    if index < 0:
        return None
    return offset_span(source, origin, index, index + len(needle))


def offset_span(source: str, origin: Span, begin: int, end: int) -> Span:
    def position(offset: int) -> tuple[int, int]:
        newlines = source.count("\n", 0, offset)
        if newlines == 0:
            return origin.line, origin.column + offset
        return origin.line + newlines, offset - source.rfind("\n", 0, offset) - 1

    line, column = position(begin)
    end_line, end_column = position(end)
    return Span(line, column, end_line, end_column)


@frozen_dataclass(slots=True)
class FormulaItem:
    """One `names: formula` line of a dispatch section."""

    key: Scalar
    value: Scalar  # value.value is not a str when the user wrote a list, a number, …


@frozen_dataclass(slots=True)
class Section:
    """The formulas for one dispatch key; `explicit` is False for the plain (no `dispatch:`) form."""

    key: Scalar
    items: tuple[FormulaItem, ...]
    explicit: bool


@frozen_dataclass(slots=True)
class Entry:
    """One parsed `- name: …` item; spans are relative to the chunk's first line."""

    span: Span
    name: Scalar | None
    output_differentiability: Scalar | None  # value: the list as written
    output_differentiability_items: tuple[Scalar, ...]
    sections: tuple[Section, ...]
    diagnostics: tuple[Diagnostic, ...]


def _span(node: yaml.Node | SubsetNode) -> Span:
    if type(node) is SubsetNode:
        start, end = node.start, node.end
        return Span(start[0], start[1], end[0], end[1])
    return Span(node.start_mark.line, node.start_mark.column, node.end_mark.line, node.end_mark.column)


_constructors = _thread_local()


def _constructor() -> SafeConstructor:
    # Building a constructor costs more than parsing a small entry; one per thread is reused.
    constructor = getattr(_constructors, "value", None)
    if constructor is None:
        from yaml.constructor import SafeConstructor

        constructor = _constructors.value = SafeConstructor()
    return constructor


class _Builder:
    """Entries from composed nodes: PyYAML's, or derivls.yamlsubset's (which mimic them)."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.diagnostics: list[Diagnostic] = []

    def scalar(self, node: yaml.Node | SubsetNode) -> Scalar:
        if type(node) is SubsetNode:
            start, end = node.start, node.end
            span = Span(start[0], start[1], end[0], end[1])
            source = self.text[start[2] : end[2]]
            if node.tag == _STR_TAG and node.id == "scalar":
                value = node.value  # plain scalars (most): the source is the value, kept once
                return Scalar(value, span, value if value == source else source)
            return Scalar(node.construct(), span, source)
        source = self.text[node.start_mark.index : node.end_mark.index]
        if node.tag == _STR_TAG and node.id == "scalar":
            return Scalar(node.value, _span(node), source)  # the common case, without the constructor
        from yaml.constructor import ConstructorError

        constructor = _constructor()
        try:
            value = constructor.construct_object(node, deep=True)
        except ConstructorError as e:
            self.diagnostics.append(error(_span(node), YAML_VALUE, f"Cannot read this value: {e.problem}"))
            value = None
        finally:
            constructor.constructed_objects.clear()
            constructor.recursive_objects.clear()
        return Scalar(value, _span(node), source)

    def pairs(self, node: yaml.MappingNode | SubsetNode, what: str) -> list[tuple[Scalar, yaml.Node | SubsetNode]]:
        seen: dict[Any, Span] = {}
        result = []
        for key_node, value_node in node.value:  # type: ignore[union-attr]  # a mapping node: (key, value) pairs
            key = self.scalar(key_node)
            try:
                hashable_key = key.value if not isinstance(key.value, (list, dict)) else repr(key.value)
                duplicate = hashable_key in seen
            except TypeError:
                hashable_key, duplicate = repr(key.value), False
            if duplicate:
                self.diagnostics.append(
                    error(
                        key.span,
                        DUPLICATE_KEY,
                        f"Duplicate key '{key.value}' in {what} (first at line {seen[hashable_key].line + 1}); "
                        "torchgen rejects the whole file. Merge the two formulas.",
                    )
                )
                continue
            seen[hashable_key] = key.span
            result.append((key, value_node))
        return result

    def entry(self, node: yaml.Node | SubsetNode) -> Entry:
        span = _span(node)
        if node.id != "mapping":
            self.diagnostics.append(
                error(span, ENTRY_NOT_MAPPING, "An entry must be a mapping starting with 'name: <schema>'.")
            )
            return Entry(span, None, None, (), (), tuple(self.diagnostics))
        name: Scalar | None = None
        output_diff: Scalar | None = None
        output_items: tuple[Scalar, ...] = ()
        dispatch_node: tuple[Scalar, yaml.Node | SubsetNode] | None = None
        plain_items: list[FormulaItem] = []
        for key, value_node in self.pairs(node, "this entry"):
            if key.value == "name":
                name = self.scalar(value_node)
            elif key.value == "output_differentiability":
                output_diff = self.scalar(value_node)
                if value_node.id == "sequence":
                    output_items = tuple(self.scalar(item) for item in value_node.value)  # type: ignore[union-attr]
            elif key.value == "dispatch":
                dispatch_node = (key, value_node)
            else:
                plain_items.append(self.formula(key, value_node))
        sections: list[Section] = []
        if dispatch_node is not None:
            dispatch_key, dispatch_value = dispatch_node
            for item in plain_items:
                self.diagnostics.append(
                    warning(
                        item.key.span,
                        IGNORED_KEY,
                        f"'{item.key.value}' is ignored: with a 'dispatch:' section, formulas belong under a "
                        "dispatch key (e.g. 'Default:').",
                    )
                )
            if dispatch_value.id == "mapping":
                for section_key, section_value in self.pairs(dispatch_value, "'dispatch'"):
                    if section_value.id == "mapping":
                        items = tuple(self.formula(k, v) for k, v in self.pairs(section_value, "this section"))
                    else:
                        self.diagnostics.append(
                            error(
                                _span(section_value),
                                SECTION_NOT_MAPPING,
                                f"Dispatch key '{section_key.value}' must map argument names to formulas.",
                            )
                        )
                        items = ()
                    sections.append(Section(section_key, items, explicit=True))
            else:
                self.diagnostics.append(
                    error(
                        _span(dispatch_value),
                        DISPATCH_NOT_MAPPING,
                        "'dispatch' must map dispatch keys (Default, AutogradCUDA, …) to formulas.",
                    )
                )
        else:
            default_key = Scalar("Default", name.span if name else span, "")
            sections.append(Section(default_key, tuple(plain_items), explicit=False))
        return Entry(span, name, output_diff, output_items, tuple(sections), tuple(self.diagnostics))

    def formula(self, key: Scalar, value_node: yaml.Node | SubsetNode) -> FormulaItem:
        return FormulaItem(key, self.scalar(value_node))


def _yaml_error_span(e: yaml.MarkedYAMLError, text: str) -> Span:
    mark = e.problem_mark or e.context_mark
    if mark is None:
        return Span(0, 0, 0, 1)
    lines = text.splitlines()
    line = min(mark.line, max(len(lines) - 1, 0))
    width = len(lines[line]) if lines else 0
    column = min(mark.column, width)
    return Span(line, column, line, max(column + 1, width) if column >= width else column + 1)


def _yaml_message(e: yaml.YAMLError) -> str:
    import yaml

    if isinstance(e, yaml.MarkedYAMLError):
        parts = [p for p in (e.context, e.problem) if p]
        return "YAML syntax error: " + (", ".join(parts) if parts else str(e))
    return f"YAML syntax error: {e}"


@lru_cache(maxsize=8192)
def parse_chunk(text: str) -> tuple[tuple[Entry, ...], tuple[Diagnostic, ...]]:
    """Parse one chunk (spans relative to its first line); cached by text, so unchanged entries cost nothing."""
    try:
        root = compose_entry_chunk(text)
    except Unsupported:
        return _parse_with_pyyaml(text)
    return _entries(root, text)


def _parse_with_pyyaml(text: str) -> tuple[tuple[Entry, ...], tuple[Diagnostic, ...]]:
    import yaml

    try:  # the C composer is ~10x faster; marks are identical
        loader = yaml.CSafeLoader
    except AttributeError:  # pragma: no cover - depends on how PyYAML was built
        loader = yaml.SafeLoader  # type: ignore[assignment]
    try:
        root = safe_compose(text, loader)  # no anchors/aliases: a few bytes of them expand to gigabytes
    except yaml.YAMLError as e:
        span = error_span(e, text) or Span(0, 0, 0, 1)  # on LSP lines; reader errors located too
        return (), (error(span, YAML_SYNTAX, _yaml_message(e)),)
    remap_marks(root, text)  # PyYAML also breaks lines at \x85, \u2028, \u2029: marks on LSP lines
    return _entries(root, text)


def empty_document(chunks: list[Chunk]) -> Diagnostic | None:
    """torchgen's error on a file that holds no YAML document (empty, or only comments and blank lines):
    it loads as None, which load_derivatives cannot iterate. A file of `[]` (no entries) loads fine."""
    if any(c.is_entry for c in chunks):
        return None
    text = "".join(c.text for c in chunks)
    try:
        if compose_entry_chunk(text) is not None:
            return None
    except Unsupported:
        import yaml

        try:
            if safe_compose(text, getattr(yaml, "CSafeLoader", yaml.SafeLoader)) is not None:
                return None
        except yaml.YAMLError:
            return None  # parse_chunk reports it
    return error(
        FIRST_LINE,
        NOT_A_LIST,
        "derivatives.yaml holds no entries (it is empty, or only comments): torchgen's load_derivatives fails on "
        "it ('NoneType' object is not iterable). Add the entries, each starting with '- name: <schema>'.",
    )


def _entries(root: yaml.Node | SubsetNode | None, text: str) -> tuple[tuple[Entry, ...], tuple[Diagnostic, ...]]:
    if root is None:
        return (), ()
    if root.id != "sequence":
        return (), (
            error(
                _span(root),
                NOT_A_LIST,
                "derivatives.yaml must be a list of entries, each starting with '- name: <schema>'.",
            ),
        )
    entries = []
    for item in root.value:  # type: ignore[union-attr]  # the root is a sequence node here
        builder = _Builder(text)
        entries.append(builder.entry(item))
    return tuple(entries), ()
