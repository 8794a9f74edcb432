"""Completion: schemas in `name:`, keys of an entry, dispatch keys, and words of formulas.

The context comes from the text (so completion works while the entry being typed does not
parse); the function an entry is about comes from its `name:` and the native index.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from lsprotocol import types

from derivls.derivatives import query
from derivls.derivatives.query import TextContext

if TYPE_CHECKING:
    from derivls.aten.native import NativeFunction, NativeIndex
    from derivls.server.main import DerivlsServer

MAX_SCHEMAS = 100
MAX_FUNCTIONS = 100


def completion(ls: DerivlsServer, params: types.CompletionParams) -> types.CompletionList | None:
    doc = ls.current(params.text_document.uri)
    if doc is None or doc.lines is None:
        return None
    lines = doc.lines
    line, column = lines.column(params.position)
    ctx = query.text_context(lines.lines, line, column)
    index = doc.analyzer.index if doc.analyzer is not None else None
    if ctx.kind == "name":
        if index is None:
            return None
        return _schemas(ls, doc, index, ctx, line, column)
    if ctx.kind == "none":
        return None
    profile = getattr(doc.analyzer, "profile", "torchgen")  # whose C++ types the details show
    legacy = profile == "legacy"  # 2021: no forward formulas, dispatch sections or named gradients
    f = _function(index, ctx, profile)
    start = lines.position(line, ctx.prefix_start)
    end = lines.position(line, column)
    edit_range = types.Range(start=start, end=end)
    rest = lines.line(line)[column:]
    needs_colon = ":" not in rest
    items: list[types.CompletionItem] = []

    def add(
        label: str,
        kind: types.CompletionItemKind,
        detail: str | None = None,
        insert: str | None = None,
        sort: str = "1",
    ) -> None:
        if ctx.prefix and not label.startswith(ctx.prefix) and ctx.prefix.lower() not in label.lower():
            return
        items.append(
            types.CompletionItem(
                label=label,
                kind=kind,
                detail=detail,
                sort_text=f"{sort}{label}",
                filter_text=label,
                text_edit=types.TextEdit(range=edit_range, new_text=insert if insert is not None else label),
            )
        )

    if ctx.kind in ("entry_key", "formula_key", "dispatch_key"):
        used = query.used_keys(lines.lines, ctx.entry_line or 0, line, ctx.in_dispatch)
        colon = ": " if needs_colon else ""
        if ctx.kind == "dispatch_key":
            for key in query.DISPATCH_KEYS:
                if key not in used:
                    add(key, types.CompletionItemKind.EnumMember, "dispatch key", key + (":" if needs_colon else ""))
            return types.CompletionList(is_incomplete=False, items=items)
        if f is not None:
            for a in query.arg_facts(f, profile):
                if a.name not in used:
                    add(a.name, types.CompletionItemKind.Field, _arg_detail(a), a.name + colon)
            for o in query.output_facts(f, profile) if not legacy else ():
                if o.name not in used:
                    add(
                        o.name,
                        types.CompletionItemKind.Field,
                        f"output: {o.schema_type} (forward formula)",
                        o.name + colon,
                        sort="2",
                    )
        elif "result" not in used and not legacy:
            add("result", types.CompletionItemKind.Field, "the output (forward formula)", "result" + colon, sort="2")
        if ctx.kind == "entry_key":
            for key in ("output_differentiability",) if legacy else ("output_differentiability", "dispatch"):
                if key not in used:
                    add(key, types.CompletionItemKind.Keyword, None, key + colon, sort="3")
        return types.CompletionList(is_incomplete=False, items=items)

    # formulas
    forward = False
    if ctx.formula_key and f is not None and not legacy:
        first = ctx.formula_key.split(",")[0].strip()
        forward = first not in {a.name for a in query.arg_facts(f, profile)}
    if f is not None:
        outputs = query.output_facts(f, profile)
        if not forward:
            add("grad", types.CompletionItemKind.Variable, "gradient of the (first) output")
            if len(outputs) > 1:
                for o in outputs:
                    add(
                        f"grads[{o.index}]", types.CompletionItemKind.Variable, f"gradient of {o.name}: {o.schema_type}"
                    )
            for o in outputs if not legacy else ():
                if o.schema_name is not None and o.schema_type.startswith("Tensor"):
                    add(f"grad_{o.schema_name}", types.CompletionItemKind.Variable, f"gradient of {o.name}")
            add("grad_input_mask", types.CompletionItemKind.Variable, "which inputs need a gradient", sort="3")
            add("retain_variables", types.CompletionItemKind.Variable, "graph retained for another backward", sort="3")
        for a in query.arg_facts(f, profile):
            add(a.name, types.CompletionItemKind.Variable, _arg_detail(a))
            if forward and a.schema_type is not None and "Tensor" in a.schema_type:
                add(f"{a.name}_p", types.CompletionItemKind.Variable, f"primal of {a.name}")
                add(f"{a.name}_t", types.CompletionItemKind.Variable, f"tangent of {a.name}")
        for o in outputs:
            add(o.name, types.CompletionItemKind.Variable, f"output: {o.schema_type}", sort="2")
        if forward:
            add("auto_element_wise", types.CompletionItemKind.Keyword, "derive from the backward formula", sort="3")
            add("auto_linear", types.CompletionItemKind.Keyword, "the function applied to the tangents", sort="3")
    else:
        add("grad", types.CompletionItemKind.Variable, "gradient of the output")
        add("result", types.CompletionItemKind.Variable, "the output", sort="2")
    if not forward:
        add("non_differentiable", types.CompletionItemKind.Keyword, "no gradient for these inputs", sort="3")
    incomplete = False
    if ctx.prefix and len(ctx.prefix) >= 2:
        from derivls.server import definition

        names: set[str] = set()
        for path in definition.manual_files(ls, doc):
            names.update(definition._definitions(path))
        matches = sorted(n for n in names if n.startswith(ctx.prefix))
        incomplete = len(matches) > MAX_FUNCTIONS
        for name in matches[:MAX_FUNCTIONS]:
            add(name, types.CompletionItemKind.Function, "FunctionsManual", sort="4")
    return types.CompletionList(is_incomplete=incomplete, items=items)


def _arg_detail(a: query.ArgFact) -> str:
    return f"{a.schema_type or 'TensorOptions'} ({a.cpp_type})"


def _function(index: NativeIndex | None, ctx: TextContext, profile: str = "torchgen") -> NativeFunction | None:
    if index is None or not ctx.schema:
        return None
    f, canonical = query.resolve_schema(index, ctx.schema, profile)
    return canonical or f


def _schemas(
    ls: DerivlsServer, doc, index: NativeIndex, ctx: TextContext, line: int, column: int
) -> types.CompletionList:
    lines = doc.lines
    typed = ctx.prefix.lstrip("'\"")
    text = lines.line(line)
    end_column = len(text.split(" #")[0].rstrip())
    edit_range = types.Range(
        start=lines.position(line, ctx.value_start), end=lines.position(line, max(end_column, column))
    )
    covered: set[str] = set()
    if doc.analysis is not None:
        for placed in doc.analysis.entries:
            value = placed.result.schema_string
            if value:
                covered.add(value)
    schemas = index.by_schema
    if typed:
        matches = [s for s in schemas if s.startswith(typed)]
        if len(matches) < MAX_SCHEMAS:
            name = typed.split("(")[0]
            extra = [s for s in schemas if name in s.split("(")[0] and not s.startswith(typed)]
            matches.extend(sorted(extra, key=len))
    else:
        matches = list(schemas)
    matches.sort(key=lambda s: (s in covered, not s.startswith(typed), s.split("(")[0], len(s)))
    incomplete = len(matches) > MAX_SCHEMAS
    items = []
    for i, schema in enumerate(matches[:MAX_SCHEMAS]):
        f = schemas[schema]
        items.append(
            types.CompletionItem(
                label=schema,
                kind=types.CompletionItemKind.Function,
                detail=("has an entry · " if schema in covered else "") + ", ".join(sorted(v.name for v in f.variants)),
                sort_text=f"{i:04d}",
                filter_text=schema,
                text_edit=types.TextEdit(range=edit_range, new_text=schema),
            )
        )
    return types.CompletionList(is_incomplete=incomplete, items=items)


__all__ = ["completion"]
