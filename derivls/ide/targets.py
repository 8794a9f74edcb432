"""What is under the cursor in an analysed derivatives.yaml: an entry's `name:`, a key, a word of a formula.

Pure functions over `DocumentAnalysis` (no LSP types); lines and columns are 0-based code points,
as everywhere in the core.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from dataclasses import dataclass, replace
from functools import lru_cache

from derivls.base.diagnostics import Span
from derivls.derivatives.analysis import KeyResult, SectionResult
from derivls.derivatives.document import FormulaItem, Scalar, Section, offset_span
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.derivatives.model import DifferentiabilityInfo
from derivls.derivatives.saved import Replacement
from derivls.ide import facts

# -- what is at a position ----------------------------------------------------------------------


@dataclass(frozen=True)
class SavedPattern:
    """A substituted pattern in a formula (`self.sym_sizes()`): what the node saves instead."""

    text: str  # as written
    variable: str  # the input/output it is about
    saved_name: str  # self_sym_sizes
    cpp_type: str
    rule: Replacement


@dataclass(frozen=True)
class Target:
    """What the cursor is on inside one entry. Spans are absolute."""

    kind: str  # "name" | "key" | "formula" | "dispatch" | "output_differentiability"
    entry: PlacedEntry
    section: Section | None = None
    section_result: SectionResult | None = None
    item: FormulaItem | None = None
    key_result: KeyResult | None = None
    word: str | None = None  # the argument name (key), token (formula) or dispatch key
    span: Span | None = None  # of `word`; of the whole scalar when there is no word
    pattern: SavedPattern | None = None

    @property
    def info(self) -> DifferentiabilityInfo | None:
        if self.section_result is None:
            return None
        key = self.section_result.dispatch_key
        return dict(self.entry.infos()).get(key, self.section_result.info)


def scalar_offset(scalar: Scalar, line: int, column: int) -> int:
    """Offset into `scalar.source` of a position (relative to the chunk) inside it."""
    if line == scalar.span.line:
        return max(0, column - scalar.span.column)
    lines = scalar.source.split("\n")
    k = line - scalar.span.line
    if k >= len(lines):
        return len(scalar.source)
    return sum(len(x) + 1 for x in lines[:k]) + min(column, len(lines[k]))


def _absolute(scalar: Scalar, placed: PlacedEntry, begin: int, end: int) -> Span:
    return offset_span(scalar.source, scalar.span, begin, end).shifted(placed.start_line)


def section_result_for(placed: PlacedEntry, section: Section) -> SectionResult | None:
    for result in placed.result.sections:
        if result.key is section.key or (
            result.key.span == section.key.span and result.dispatch_key == section.key.value
        ):
            return result
    return None


def key_result_for(section_result: SectionResult | None, item: FormulaItem) -> KeyResult | None:
    if section_result is None:
        return None
    for result in section_result.keys:
        if result.item is item:
            return result
    for result in section_result.keys:
        if result.item.key.span == item.key.span:
            return result
    return None


_KEY_NAME = re.compile(r"[^,\s]+")


_entry_lines: dict[int, tuple[DocumentAnalysis, list[int]]] = {}


def entry_at(analysis: DocumentAnalysis, line: int) -> PlacedEntry | None:
    """`analysis.entry_at(line)`, with the entries' lines computed once per analysis (hovers come in streams)."""
    hit = _entry_lines.get(id(analysis))
    if hit is None or hit[0] is not analysis:
        if len(_entry_lines) > 8:
            _entry_lines.clear()
        hit = _entry_lines[id(analysis)] = (analysis, [e.line for e in analysis.entries])
    i = bisect_right(hit[1], line) - 1
    return analysis.entries[i] if i >= 0 else None


def target_at(analysis: DocumentAnalysis, line: int, column: int) -> Target | None:
    placed = entry_at(analysis, line)
    if placed is None or line > placed.end_line:
        return None
    rel = line - placed.start_line
    entry = placed.entry
    name = entry.name
    if name is not None and (name.span.contains(rel, column) or (rel == name.span.line and column < name.span.column)):
        return Target("name", placed, span=name.span.shifted(placed.start_line))
    od = entry.output_differentiability
    if od is not None and od.span.contains(rel, column):
        return Target("output_differentiability", placed, span=od.span.shifted(placed.start_line))
    for section in entry.sections:
        sr = section_result_for(placed, section)
        if section.explicit and section.key.span.contains(rel, column):
            return Target(
                "dispatch",
                placed,
                section=section,
                section_result=sr,
                word=str(section.key.value),
                span=section.key.span.shifted(placed.start_line),
            )
        for item in section.items:
            if item.key.span.contains(rel, column):
                offset = scalar_offset(item.key, rel, column)
                word, begin, end = None, 0, len(item.key.source)
                for m in _KEY_NAME.finditer(item.key.source):
                    if m.start() <= offset <= m.end():
                        word, begin, end = m.group(0), m.start(), m.end()
                        break
                return Target(
                    "key",
                    placed,
                    section=section,
                    section_result=sr,
                    item=item,
                    key_result=key_result_for(sr, item),
                    word=word,
                    span=_absolute(item.key, placed, begin, end),
                )
            if item.value.span.contains(rel, column):
                return _formula_target(placed, section, sr, item, scalar_offset(item.value, rel, column))
    return None


_TOKEN = re.compile(r"grads\s*\[\s*\d+\s*\]|\w+")


def _formula_target(
    placed: PlacedEntry, section: Section, sr: SectionResult | None, item: FormulaItem, offset: int
) -> Target:
    source = item.value.source
    kr = key_result_for(sr, item)
    base = Target("formula", placed, section=section, section_result=sr, item=item, key_result=kr)
    pattern = _pattern_at(placed, source, offset)
    word, begin, end = None, offset, offset
    for m in _TOKEN.finditer(source):
        if m.start() <= offset <= m.end() and (m.start() < offset or m.end() > offset or word is None):
            word, begin, end = re.sub(r"\s+", "", m.group(0)), m.start(), m.end()
            if m.start() <= offset < m.end():
                break
        elif m.start() > offset:
            break
    if pattern is not None:
        text, pbegin, pend = pattern
        return replace(base, word=word, span=_absolute(item.value, placed, pbegin, pend), pattern=text)
    if word is None:
        return replace(base, span=item.value.span.shifted(placed.start_line))
    return replace(base, word=word, span=_absolute(item.value, placed, begin, end))


@lru_cache(maxsize=4096)
def _rule(template: str, name: str) -> re.Pattern[str]:
    return re.compile(template.format(re.escape(name)))


def _pattern_at(placed: PlacedEntry, source: str, offset: int) -> tuple[SavedPattern, int, int] | None:
    f = placed.result.canonical
    if f is None:
        return None
    names, rules = facts.substitution_names_and_rules(placed, f)
    for name in names:
        if name not in source:
            continue
        for rule in rules:
            for m in _rule(rule.pattern, name).finditer(source):
                if m.start() <= offset <= m.end():
                    saved_name = name + rule.suffix_for(m)
                    ctype = rule.ctype()
                    return (
                        SavedPattern(m.group(0), name, saved_name, ctype.cpp_type(), rule),
                        m.start(),
                        m.end(),
                    )
    return None


__all__ = ["SavedPattern", "Target", "entry_at", "key_result_for", "scalar_offset", "section_result_for", "target_at"]
