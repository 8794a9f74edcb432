"""Questions editors ask about an analysed derivatives.yaml: what is at this position, what does it mean.

Pure functions over `DocumentAnalysis` / `NativeIndex` (no LSP types); lines
and columns are 0-based code points, as everywhere in the core.
"""

from __future__ import annotations

import re
from bisect import bisect_right
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from functools import lru_cache

from derivls.aten import cpp
from derivls.aten.cpp import Binding
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.derivatives.analysis import (
    AUTOGRAD_KEYS,
    KeyResult,
    SectionResult,
    _canonical_function,
    function_facts,
    split_name_params,
)
from derivls.derivatives.document import FormulaItem, Scalar, Section
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.derivatives.model import DifferentiabilityInfo, SavedAttribute
from derivls.derivatives.profiles import profile_of
from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS, Replacement, plain_name
from derivls.diagnostics import Span

DISPATCH_KEYS = ("Default", *AUTOGRAD_KEYS)
ENTRY_KEYS = ("name", "output_differentiability", "dispatch")


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


def _relative_contains(span: Span, line: int, column: int) -> bool:
    return span.contains(line, column)


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
    from derivls.derivatives.document import offset_span

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
        return Target(
            "formula",
            placed,
            section=section,
            section_result=sr,
            item=item,
            key_result=kr,
            word=word,
            span=_absolute(item.value, placed, pbegin, pend),
            pattern=text,
        )
    if word is None:
        return Target(**{**base.__dict__, "span": item.value.span.shifted(placed.start_line)})
    return Target(
        "formula",
        placed,
        section=section,
        section_result=sr,
        item=item,
        key_result=kr,
        word=word,
        span=_absolute(item.value, placed, begin, end),
    )


@lru_cache(maxsize=4096)
def _rule(template: str, name: str) -> re.Pattern[str]:
    return re.compile(template.format(re.escape(name)))


def _pattern_at(placed: PlacedEntry, source: str, offset: int) -> tuple[SavedPattern, int, int] | None:
    f = placed.result.canonical
    if f is None:
        return None
    if profile_of(placed) == "legacy":
        names, rules = _legacy_names_and_rules(f)
    else:
        facts = function_facts(f)
        names, rules = [plain_name(n) for n in (*facts.arg_nctypes, *facts.named_returns)], TORCHGEN_REPLACEMENTS
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


def _legacy_names_and_rules(f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
    from derivls.derivatives.legacy import LEGACY_REPLACEMENTS, legacy_facts

    try:
        facts = legacy_facts(f)
    except ValueError:
        return [], LEGACY_REPLACEMENTS
    return [n for n, _ in (*facts.arguments, *facts.returns)], LEGACY_REPLACEMENTS


# -- facts about the function an entry is for ----------------------------------------------------


@dataclass(frozen=True)
class ArgFact:
    name: str  # C++ binding name (what formulas use)
    schema_type: str | None  # "Tensor", "int[1]?", … (None for TensorOptions parts)
    cpp_type: str
    schema_text: str | None  # "Tensor self"


@dataclass(frozen=True)
class OutputFact:
    index: int
    name: str  # the name formulas use: result, resultN or the named return
    schema_name: str | None
    schema_type: str
    cpp_type: str


def _bindings(f: NativeFunction, profile: str) -> Sequence[Binding]:
    if profile == "legacy":
        from derivls.derivatives.legacy import legacy_facts

        try:
            return legacy_facts(f).bindings
        except ValueError:
            return ()
    return function_facts(f).bindings


def _return_cpp_types(f: NativeFunction, profile: str) -> list[str]:
    if profile == "legacy":
        from derivls.derivatives.legacy import legacy_facts

        try:
            return [t for _, t in legacy_facts(f).returns]
        except ValueError:
            return []
    return [n.cpp_type() for n in function_facts(f).named_returns]


def arg_facts(f: NativeFunction, profile: str = "torchgen") -> list[ArgFact]:
    """`profile` picks whose C++ types: torchgen 2.x's, or the 2021 codegen's ("legacy")."""
    schema_args = {a.name: a for a in f.func.arguments.flat_all}
    facts = []
    for binding in _bindings(f, profile):
        arg = schema_args.get(binding.name)
        facts.append(
            ArgFact(
                name=binding.name,
                schema_type=str(arg.type) if arg is not None else None,
                cpp_type=binding.nctype.cpp_type(),
                schema_text=str(arg) if arg is not None else None,
            )
        )
    return facts


def output_facts(f: NativeFunction, profile: str = "torchgen") -> list[OutputFact]:
    returns = f.func.returns
    cpp_types = _return_cpp_types(f, profile)
    result = []
    for i, ret in enumerate(returns):
        if ret.name is not None:
            name = ret.name
        elif len(returns) == 1:
            name = "result"
        else:
            name = f"result{i}"
        cpp_type = cpp_types[i] if i < len(cpp_types) else ""
        result.append(OutputFact(i, name, ret.name, str(ret.type), cpp_type))
    return result


def resolve_schema(
    index: NativeIndex, schema: str, profile: str = "torchgen"
) -> tuple[NativeFunction | None, NativeFunction | None]:
    """(the function `schema` spells, the canonical function its formulas are about), as the loader does."""
    f = index.by_schema.get(schema)
    if f is None:
        return None, None
    name = split_name_params(schema)
    if profile == "legacy":
        return f, (_legacy_analyser(index).canonical(f, name) if name is not None else None)
    functions = index.by_signature.get(f.func.signature(), [])
    if not functions or name is None:
        return f, None
    return f, _canonical_function(functions, name)


def overload_group(index: NativeIndex, f: NativeFunction, profile: str = "torchgen") -> list[NativeFunction]:
    """The functions sharing `f`'s signature (functional, in-place, out, …), which share its formulas."""
    if profile == "legacy":
        return list(_legacy_analyser(index).group(f))
    return list(index.by_signature.get(f.func.signature(), [f]))


_legacy_analysers: dict[int, tuple[NativeIndex, object]] = {}


def _legacy_analyser(index: NativeIndex):
    """One LegacyEntryAnalyser per index, for its 2021 signature groups."""
    from derivls.derivatives.legacy import LegacyEntryAnalyser

    hit = _legacy_analysers.get(id(index))
    if hit is None or hit[0] is not index:
        if len(_legacy_analysers) > 8:
            _legacy_analysers.clear()
        hit = _legacy_analysers[id(index)] = (index, LegacyEntryAnalyser(index))
    return hit[1]


def saved_attributes(info: DifferentiabilityInfo) -> list[SavedAttribute]:
    return [*info.all_saved_inputs, *info.all_saved_outputs]


def saved_label(attribute: SavedAttribute) -> str:
    return f"{plain_name(attribute.nctype)}: {attribute.nctype.cpp_type()}"


def derivative_saves(key_result: KeyResult | None) -> list[SavedAttribute]:
    if key_result is None or key_result.derivative is None:
        return []
    return [*key_result.derivative.saved_inputs, *key_result.derivative.saved_outputs]


def cpp_signature(f: NativeFunction, profile: str = "torchgen") -> str:
    if profile == "legacy":
        from derivls.aten import legacy_cpp

        try:
            return legacy_cpp.cpp_signature(f)
        except ValueError as e:
            return f"// not expressible in the 2021 C++ API: {e}"
    sigs = cpp.CppSignatureGroup.from_native_function(f, method=False)
    sig = sigs.symint_signature if sigs.symint_signature is not None else sigs.signature
    return sig.decl()


# -- entries by name ------------------------------------------------------------------------------


def entries_for_function(analysis: DocumentAnalysis, f: NativeFunction) -> Iterator[tuple[PlacedEntry, bool]]:
    """Entries whose formulas apply to `f`: (entry, True) when `name:` spells `f` itself, False for its group."""
    signature = f.func.signature()
    for placed in analysis.entries:
        result = placed.result
        if result.schema_function is not None and result.schema_function.func == f.func:
            yield placed, True
        elif result.canonical is not None and result.canonical.func.signature() == signature:
            yield placed, False


def entry_function_name(placed: PlacedEntry) -> str | None:
    f = placed.result.schema_function
    return str(f.func.name) if f is not None else None


def node_names(placed: PlacedEntry) -> list[str]:
    return [op for _, op in placed.ops if op]


# -- completion contexts (from text, so they work while an entry does not parse) ------------------


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
                schema = _strip_quotes(lines[i][m.end() :].split(" #")[0].strip())
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
        if key in ("name", "output_differentiability", "dispatch") or (
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


def _strip_quotes(value: str) -> str:
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


__all__ = [
    "DISPATCH_KEYS",
    "ArgFact",
    "OutputFact",
    "SavedPattern",
    "Target",
    "TextContext",
    "arg_facts",
    "cpp_signature",
    "derivative_saves",
    "entries_for_function",
    "entry_at",
    "node_names",
    "output_facts",
    "overload_group",
    "profile_of",
    "resolve_schema",
    "saved_attributes",
    "saved_label",
    "target_at",
    "text_context",
    "used_keys",
]
