"""Completion: schemas in `name:`, keys of an entry, dispatch keys, words of formulas, and members after
`x.` / `x->` in a formula (by what `x` holds when derivls knows it: a Tensor's methods, std::optional's,
std::vector's, c10::ArrayRef's, c10::Scalar's; else every Tensor method).

The context comes from the text (ide.context), so completion works while the entry being typed does
not parse; the function an entry is about comes from its `name:` and the native index.
"""

from __future__ import annotations

import re
from bisect import bisect_left
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.derivatives.loader import DocumentAnalysis
from derivls.derivatives.profiles import TORCHGEN, Profile
from derivls.ide import facts
from derivls.ide.context import DISPATCH_KEYS, TextContext, text_context, used_keys

MAX_SCHEMAS = 100
MAX_FUNCTIONS = 100
MAX_MEMBERS = 200

# kinds (the server maps them to its protocol's)
FIELD = "field"
KEYWORD = "keyword"
ENUM_MEMBER = "enum_member"
VARIABLE = "variable"
FUNCTION = "function"
METHOD = "method"


@dataclass(frozen=True)
class CompletionItem:
    """Inserting `new_text` replaces columns start..end of the completion's line (0-based code points)."""

    label: str
    kind: str
    detail: str | None
    sort_text: str
    line: int
    start: int
    end: int
    new_text: str


@dataclass(frozen=True)
class Completions:
    items: tuple[CompletionItem, ...]
    incomplete: bool  # more match than were listed: ask again as the user types


def completions(
    lines: Sequence[str],
    line: int,
    column: int,
    index: NativeIndex | None,
    profile: Profile = TORCHGEN,
    analysis: DocumentAnalysis | None = None,
    manual_functions: Callable[[], Iterable[str]] | None = None,
) -> Completions | None:
    """Completions at (line, column); `manual_functions` lists FunctionsManual's functions (asked lazily)."""
    ctx = text_context(lines, line, column)
    if ctx.kind == "name":
        return schema_completions(lines, line, column, ctx, index, analysis) if index is not None else None
    if ctx.kind == "none":
        return None
    items = _Items(ctx, line, column)
    f = function_of(index, ctx, profile)
    text = lines[line] if 0 <= line < len(lines) else ""
    needs_colon = ":" not in text[column:]
    if ctx.kind in ("entry_key", "formula_key", "dispatch_key"):
        _key_completions(items, lines, line, ctx, f, profile, needs_colon)
        return Completions(tuple(items.items), False)
    member = _MEMBER_OF.search(text[: ctx.prefix_start]) if ctx.kind == "formula" else None
    if member is not None:
        receiver, subscript, arrow = member.groups()
        incomplete = _member_completions(items, analysis, line, column, receiver, arrow, subscript is not None)
        return Completions(tuple(items.items), incomplete)
    incomplete = _formula_completions(items, ctx, f, profile, manual_functions)
    return Completions(tuple(items.items), incomplete)


# `x.` / `x->` (x empty: a call's result, `f().`), `x[…].` / `x[…]->` (an element: group 2 set)
_MEMBER_OF = re.compile(r"(\w*)\s*(\[[^\[\]]*\])?\s*(\.|->)\s*$")


def _member_completions(
    items: _Items,
    analysis: DocumentAnalysis | None,
    line: int,
    column: int,
    receiver: str,
    arrow: str,
    element: bool = False,
) -> bool:
    """Members after `receiver.` / `receiver->` (`element`: after `receiver[…].`); True when more match than
    were listed."""
    if analysis is None or analysis.index is None or receiver.isdigit():
        return False
    from derivls.derivatives.formulas.exprtypes import MEMBERS, element_of
    from derivls.derivatives.formulas.scope import OPTIONAL_TENSOR, SCALAR, TENSOR
    from derivls.ide.formulas import formula_at, headers_of

    at = formula_at(analysis, line, column, past_end=True)
    headers = headers_of(analysis)
    if at is None or headers is None:
        return False
    local = at.scope.get(receiver) if receiver else None
    if local is not None and element:
        local = element_of(local, at.scope, f"{receiver}[]")
    holds = local.holds if local is not None else ""
    fixed = MEMBERS.get(holds) if arrow == "." else None
    if fixed is not None:  # std::optional, std::vector, c10::ArrayRef, c10::Scalar
        detail = {OPTIONAL_TENSOR: "std::optional<at::Tensor>", SCALAR: "c10::Scalar"}.get(holds)
        members: dict[str, str] = {name: detail or (local.cpp_type if local is not None else holds) for name in fixed}
    elif holds in (TENSOR, OPTIONAL_TENSOR) or not holds:
        members = {name: "Tensor method" for name in headers.tensor_methods}
        for name in headers.method_schemas:
            overloads = headers.method_schemas.get(name)
            members[name] = overloads[0] if overloads else "Tensor method"
    else:
        return False  # a number: no members
    typed = [name for name in sorted(members) if name.startswith(items.ctx.prefix)]
    for name in typed[:MAX_MEMBERS]:
        items.add(name, METHOD, members[name], sort="1" if not name.startswith("_") else "2")
    return len(typed) > MAX_MEMBERS


class _Items:
    """Items of one answer, filtered by the word typed so far."""

    def __init__(self, ctx: TextContext, line: int, column: int) -> None:
        self.ctx = ctx
        self.line = line
        self.column = column
        self.items: list[CompletionItem] = []

    def add(self, label: str, kind: str, detail: str | None = None, insert: str | None = None, sort: str = "1") -> None:
        prefix = self.ctx.prefix
        if prefix and not label.startswith(prefix) and prefix.lower() not in label.lower():
            return
        new_text = insert if insert is not None else label
        self.items.append(
            CompletionItem(
                label, kind, detail, f"{sort}{label}", self.line, self.ctx.prefix_start, self.column, new_text
            )
        )


def _key_completions(
    items: _Items,
    lines: Sequence[str],
    line: int,
    ctx: TextContext,
    f: NativeFunction | None,
    profile: Profile,
    needs_colon: bool,
) -> None:
    legacy = not facts.has_forward_formulas(profile)  # 2021: no forward formulas, dispatch sections, named grads
    used = used_keys(lines, ctx.entry_line or 0, line, ctx.in_dispatch)
    colon = ": " if needs_colon else ""
    if ctx.kind == "dispatch_key":
        for key in DISPATCH_KEYS:
            if key not in used:
                items.add(key, ENUM_MEMBER, "dispatch key", key + (":" if needs_colon else ""))
        return
    if f is not None:
        for a in facts.arg_facts(f, profile):
            if a.name not in used:
                items.add(a.name, FIELD, arg_detail(a), a.name + colon)
        for o in facts.output_facts(f, profile) if not legacy else ():
            if o.name not in used:
                items.add(o.name, FIELD, f"output: {o.schema_type} (forward formula)", o.name + colon, sort="2")
    elif "result" not in used and not legacy:
        items.add("result", FIELD, "the output (forward formula)", "result" + colon, sort="2")
    if ctx.kind == "entry_key":
        for key in ("output_differentiability",) if legacy else ("output_differentiability", "dispatch"):
            if key not in used:
                items.add(key, KEYWORD, None, key + colon, sort="3")


def _formula_completions(
    items: _Items,
    ctx: TextContext,
    f: NativeFunction | None,
    profile: Profile,
    manual_functions: Callable[[], Iterable[str]] | None,
) -> bool:
    legacy = not facts.has_forward_formulas(profile)
    add = items.add
    forward = False
    if ctx.formula_key and f is not None and not legacy:
        first = ctx.formula_key.split(",")[0].strip()
        forward = first not in {a.name for a in facts.arg_facts(f, profile)}
    if f is not None:
        outputs = facts.output_facts(f, profile)
        if not forward:
            add("grad", VARIABLE, "gradient of the (first) output")
            if len(outputs) > 1:
                for o in outputs:
                    add(f"grads[{o.index}]", VARIABLE, f"gradient of {o.name}: {o.schema_type}")
            for o in outputs if not legacy else ():
                if o.schema_name is not None and o.schema_type.startswith("Tensor"):
                    add(f"grad_{o.schema_name}", VARIABLE, f"gradient of {o.name}")
            add("grad_input_mask", VARIABLE, "which inputs need a gradient", sort="3")
            add("retain_variables", VARIABLE, "graph retained for another backward", sort="3")
        for a in facts.arg_facts(f, profile):
            add(a.name, VARIABLE, arg_detail(a))
            if forward and a.schema_type is not None and "Tensor" in a.schema_type:
                add(f"{a.name}_p", VARIABLE, f"primal of {a.name}")
                add(f"{a.name}_t", VARIABLE, f"tangent of {a.name}")
        for o in outputs:
            add(o.name, VARIABLE, f"output: {o.schema_type}", sort="2")
        if forward:
            add("auto_element_wise", KEYWORD, "derive from the backward formula", sort="3")
            add("auto_linear", KEYWORD, "the function applied to the tangents", sort="3")
    else:
        add("grad", VARIABLE, "gradient of the output")
        add("result", VARIABLE, "the output", sort="2")
    if not forward:
        add("non_differentiable", KEYWORD, "no gradient for these inputs", sort="3")
    if not (ctx.prefix and len(ctx.prefix) >= 2 and manual_functions is not None):
        return False
    matches = sorted({n for n in manual_functions() if n.startswith(ctx.prefix)})
    for name in matches[:MAX_FUNCTIONS]:
        add(name, FUNCTION, "FunctionsManual", sort="4")
    return len(matches) > MAX_FUNCTIONS


def arg_detail(a: facts.ArgFact) -> str:
    return f"{a.schema_type or 'TensorOptions'} ({a.cpp_type})"


def function_of(index: NativeIndex | None, ctx: TextContext, profile: Profile = TORCHGEN) -> NativeFunction | None:
    """The function the formulas of the entry being typed are about (its canonical function)."""
    if index is None or not ctx.schema:
        return None
    f, canonical = facts.resolve_schema(index, ctx.schema, profile)
    return canonical or f


_sorted_schemas: dict[int, tuple[NativeIndex, list[str]]] = {}
_covered_by: dict[int, tuple[DocumentAnalysis, frozenset[str]]] = {}


def _starting_with(index: NativeIndex, typed: str) -> list[str]:
    """The index's schemas that start with `typed`, in the index's order (a bisect in its sorted schemas:
    a 10x file has ~31k; scanning them all was ~10 ms per request)."""
    hit = _sorted_schemas.get(id(index))
    if hit is None or hit[0] is not index:
        _sorted_schemas.clear()
        hit = _sorted_schemas[id(index)] = (index, sorted(index.by_schema))
    ordered = hit[1]
    found = ordered[bisect_left(ordered, typed) : bisect_left(ordered, typed + "\U0010ffff")]
    found.sort(key=_schema_order(index).__getitem__)  # the index's order, as a scan gave them
    return found


_orders: dict[int, tuple[NativeIndex, dict[str, int]]] = {}


def _schema_order(index: NativeIndex) -> dict[str, int]:
    hit = _orders.get(id(index))
    if hit is None or hit[0] is not index:
        _orders.clear()
        hit = _orders[id(index)] = (index, {s: i for i, s in enumerate(index.by_schema)})
    return hit[1]


def _covered(analysis: DocumentAnalysis | None) -> frozenset[str]:
    """The schemas the document's entries name (once per analysed version)."""
    if analysis is None:
        return frozenset()
    hit = _covered_by.get(id(analysis))
    if hit is None or hit[0] is not analysis:
        _covered_by.clear()
        names = (placed.result.schema_string for placed in analysis.entries)
        hit = _covered_by[id(analysis)] = (analysis, frozenset(name for name in names if name))
    return hit[1]


def schema_completions(
    lines: Sequence[str],
    line: int,
    column: int,
    ctx: TextContext,
    index: NativeIndex,
    analysis: DocumentAnalysis | None,
) -> Completions:
    """Schemas for `name:`: those without an entry first, closest to what was typed first; 100 at a time."""
    typed = ctx.prefix.lstrip("'\"")
    text = lines[line] if 0 <= line < len(lines) else ""
    end_column = max(len(text.split(" #")[0].rstrip()), column)
    covered = _covered(analysis)
    schemas = index.by_schema
    if typed:
        matches = _starting_with(index, typed)
        if len(matches) < MAX_SCHEMAS:
            name = typed.split("(")[0]
            extra = [s for s in schemas if name in s.split("(")[0] and not s.startswith(typed)]
            matches.extend(sorted(extra, key=len))
    else:
        matches = list(schemas)
    matches.sort(key=lambda s: (s in covered, not s.startswith(typed), s.split("(")[0], len(s)))
    items = []
    for i, schema in enumerate(matches[:MAX_SCHEMAS]):
        f = schemas[schema]
        detail = ("has an entry · " if schema in covered else "") + ", ".join(sorted(v.name for v in f.variants))
        items.append(CompletionItem(schema, FUNCTION, detail, f"{i:04d}", line, ctx.value_start, end_column, schema))
    return Completions(tuple(items), len(matches) > MAX_SCHEMAS)


__all__ = [
    "ENUM_MEMBER",
    "FIELD",
    "FUNCTION",
    "KEYWORD",
    "MAX_FUNCTIONS",
    "MAX_SCHEMAS",
    "VARIABLE",
    "CompletionItem",
    "Completions",
    "completions",
    "function_of",
    "schema_completions",
]
