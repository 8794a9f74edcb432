"""The loader checks both loader generations (2021, torchgen) share, and their helpers: locating a name
in a formula, `schema-not-found` with its fixes, the checks that need no schema, saved-variable errors."""

from __future__ import annotations

from collections.abc import Callable, Iterable, Sequence

from derivls.aten.native import NativeIndex
from derivls.aten.schema import FunctionSchema
from derivls.base.diagnostics import Diagnostic, Edit, Fix, Related, Span, error
from derivls.codes.loader import (
    GRADS_MIXED,
    GRADS_SOLELY_ZERO,
    MISSING_NAME,
    NAME_NOT_STRING,
    NAMED_GRADS_MIXED,
    SCHEMA_NOT_FOUND,
    UNSUPPORTED_SCHEMA,
)
from derivls.derivatives.document import Entry, FormulaItem, Scalar, locate_in, offset_span
from derivls.derivatives.model import Derivative, SavedAttribute
from derivls.derivatives.results import split_name_params, used_gradient_indices
from derivls.derivatives.saved import (
    SavedVariableError,
    check_unsupported_calls,
    ident_pattern,
    plain_name,
    uses_ident,
)


def ident_spans(scalar: Scalar, name: str) -> list[Span]:
    pattern = ident_pattern(name)
    spans = []
    for m in pattern.finditer(scalar.source):
        begin = m.start() + len(m.group(1))
        spans.append(offset_span(scalar.source, scalar.span, begin, begin + len(name)))
    return spans


def first_ident(scalar: Scalar, name: str) -> Span:
    spans = ident_spans(scalar, name)
    return spans[0] if spans else scalar.span


def closest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    import difflib  # only when there is a mistake to suggest a fix for

    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6)


def schema_not_found(
    name: Scalar,
    specification: str,
    defn_name: str,
    index: NativeIndex,
    native_path: str | None,
    cpp_name: Callable[[FunctionSchema], str],
) -> Diagnostic:
    """`name:` matches no schema: list the functions of that name, closest first, each a quick fix."""
    import difflib

    candidates = [schema for schema, f in index.by_schema.items() if cpp_name(f.func) == defn_name]
    ranked = sorted(candidates, key=lambda s: -difflib.SequenceMatcher(None, specification, s).ratio())
    if ranked:
        hint = "Available signatures:\n" + "\n".join(ranked)
    else:
        names = closest(defn_name, {cpp_name(f.func) for f in index.by_schema.values()})
        hint = f"No ATen function is named '{defn_name}'." + (
            f" Did you mean {', '.join(repr(n) for n in names)}?" if names else ""
        )
    related = tuple(
        Related(native_path, line - 1, schema) for schema in ranked[:20] if (line := index.line_of(schema)) is not None
    )
    return error(
        name.span,
        SCHEMA_NOT_FOUND,
        f"Could not find ATen function for schema: {specification}. {hint}",
        related=related,
        fixes=tuple(Fix(f"Replace with '{s}'", (Edit(name.span, s),), i == 0) for i, s in enumerate(ranked[:10])),
    )


def schema_free_checks(entry: Entry) -> list[Diagnostic]:
    """The checks that need no schema, so an entry whose name is wrong still shows its other mistakes."""
    found = []
    for section in entry.sections:
        for item in section.items:
            if not isinstance(item.value.value, str):
                continue
            try:
                check_unsupported_calls(item.value.value)
            except SavedVariableError as e:
                found.append(saved_variable_diagnostic(item, e))
    return found


def saved_variable_diagnostic(item: FormulaItem, e: SavedVariableError) -> Diagnostic:
    span = item.value.locate(e.token)
    fixes: tuple[Fix, ...] = ()
    if e.fix is not None and span != item.value.span:
        fixes = (Fix(f"Use '{e.fix}'", (Edit(span, e.fix),), True),)
    return error(span, e.code, f"{e} (in the formula for '{item.key.value}')", fixes=fixes)


def literal_spans(scalar: Scalar, needle: str) -> list[Span]:
    spans = []
    start = 0
    while (span := locate_in(scalar.source, scalar.span, needle, start)) is not None:
        spans.append(span)
        start = scalar.source.find(needle, start) + len(needle)
    return spans


def name_fixes(key: Scalar, wrong: str, candidates: Sequence[str]) -> tuple[Fix, ...]:
    span = key.locate(wrong)
    return tuple(
        Fix(f"Replace '{wrong}' with '{c}'", (Edit(span, c),), i == 0) for i, c in enumerate(closest(wrong, candidates))
    )


def first_line(span: Span) -> Span:
    return Span(span.line, span.column, span.line, span.column + 1)


def guess_has_derivatives(entry: Entry) -> bool:
    """Without a schema we cannot tell arguments from outputs; assume a backward formula unless all say otherwise."""
    for section in entry.sections:
        for item in section.items:
            key, value = item.key.value, item.value.value
            if not isinstance(key, str) or not isinstance(value, str):
                continue
            first = key.split(",")[0].strip()
            if value.lower().strip() == "non_differentiable" or first.startswith("result"):
                continue
            return True
    return False


def dedup_saved(saved: Iterable[SavedAttribute]) -> tuple[SavedAttribute, ...]:
    """Saved attributes, the first of each name."""
    seen: set[str] = set()
    result = []
    for var in saved:
        name = plain_name(var.nctype)
        if name not in seen:
            seen.add(name)
            result.append(var)
    return tuple(result)


def unique(diagnostics: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
    """Each diagnostic once (two checks may find the same mistake at the same place), in order."""
    return tuple(dict.fromkeys(diagnostics))


def entry_name(entry: Entry, diagnostics: list[Diagnostic]) -> tuple[Scalar | None, str | None, str | None]:
    """(`name:`, the schema it spells, the function name), or Nones with a diagnostic."""
    name = entry.name
    if name is None:
        diagnostics.append(
            error(
                first_line(entry.span),
                MISSING_NAME,
                "This entry has no 'name:' key; write the ATen schema it is for, e.g. "
                "'name: abs(Tensor self) -> Tensor'.",
            )
        )
        return None, None, None
    if not isinstance(name.value, str):
        diagnostics.append(
            error(
                name.span,
                NAME_NOT_STRING,
                "'name:' must be an ATen schema string, e.g. 'abs(Tensor self) -> Tensor'.",
            )
        )
        return None, None, None
    specification = name.value
    defn_name = split_name_params(specification)
    if defn_name is None:
        diagnostics.append(
            error(
                name.span,
                UNSUPPORTED_SCHEMA,
                f"'{specification}' is not a function schema: expected 'name.overload(args) -> returns'.",
            )
        )
        return None, None, None
    return name, specification, defn_name


def grad_usage_checks(defn_name: str, derivatives: Sequence[tuple[Derivative, FormulaItem]]) -> list[Diagnostic]:
    """load_derivatives' check_grad_usage (both loader generations): no mixing of `grad` and `grads`, no lone
    `grads[0]`; and (torchgen's only: a 2021 formula has no named gradients) no named gradients beside them."""
    out: list[Diagnostic] = []
    grads = ident_pattern("grads")
    grad_items = [item for d, item in derivatives if uses_ident(d.formula, "grad")]
    # (every match of `grads` contains the word: most formulas skip its regex)
    grads_items = [item for d, item in derivatives if "grads" in d.formula and grads.search(d.formula)]
    num_grads_uses = sum(len(grads.findall(d.formula)) for d, _ in derivatives if "grads" in d.formula)
    indices = [i for d, _ in derivatives for i in used_gradient_indices(d.formula)]
    named_items = [item for d, item in derivatives if d.named_gradients]
    only_indexed = num_grads_uses == len(indices)

    if grad_items and num_grads_uses > 0:
        edits = tuple(Edit(s, "grads[0]") for item in grad_items for s in ident_spans(item.value, "grad"))
        out.append(
            error(
                first_ident(grads_items[0].value, "grads"),
                GRADS_MIXED,
                f"The derivatives of {defn_name} mix 'grad' and 'grads'; use one. 'grad' is 'grads[0]'.",
                fixes=(Fix("Replace 'grad' with 'grads[0]'", edits, True),) if edits else (),
            )
        )
    elif only_indexed and indices and set(indices) == {0}:
        edits = tuple(Edit(s, "grad") for item in grads_items for s in literal_spans(item.value, "grads[0]"))
        out.append(
            error(
                grads_items[0].value.locate("grads[0]"),
                GRADS_SOLELY_ZERO,
                f"The derivatives of {defn_name} only refer to 'grads[0]'. If the first output is the only "
                "differentiable one, write 'grad'; otherwise the declaration is likely wrong.",
                fixes=(Fix("Replace 'grads[0]' with 'grad'", edits, True),) if edits else (),
            )
        )
    if named_items and (grad_items or num_grads_uses > 0):
        offender = (grad_items or grads_items)[0]
        word = "grad" if grad_items else "grads"
        out.append(
            error(
                first_ident(offender.value, word),
                NAMED_GRADS_MIXED,
                f"The derivatives of {defn_name} mix named gradients (grad_<output>) with 'grad' or 'grads[i]'; "
                "use only one way to refer to gradients.",
            )
        )
    return out
