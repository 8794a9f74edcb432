"""The one call the loader makes per entry: formula diagnostics for an analysed entry.

`entry_diagnostics(result, index, native_path)` returns the located diagnostics of formula
semantics (resolve.py) and of the autograd codegen's own checks (checks.py) for one EntryResult.
It is a pure function of the entry (and the workspace's indexes), so the loader's per-entry cache
keeps incremental edits cheap.
"""

from __future__ import annotations

import itertools
from collections.abc import Container

from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import Diagnostic, Edit, Fix, Related, Severity, Span
from derivls.codes.setup import FORMULA_SOURCES_MISSING
from derivls.derivatives.document import Scalar, offset_span
from derivls.derivatives.formulas.findings import Finding
from derivls.derivatives.formulas.headercache import header_index_for
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.resolve import resolve
from derivls.derivatives.formulas.rules.context import in_context
from derivls.derivatives.formulas.rules.result_type import auto_result_type
from derivls.derivatives.formulas.scope import build_scope

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import EntryResult


def value_offsets(scalar: Scalar) -> list[int]:
    """For each offset of the scalar's value (a str), the offset in its source text (plus one past the end).

    Plain multi-line scalars fold newlines+indent into one space; quoted ones have quotes and escapes;
    characters are matched in order, whitespace of the value matching any run of source whitespace.
    """
    value: str = scalar.value
    source = scalar.source
    mapping: list[int] = []
    j = 1 if source[:1] in ("'", '"') else 0
    for c in value:
        if c.isspace():
            mapping.append(min(j, len(source)))
            while j < len(source) and source[j].isspace():
                j += 1
            continue
        k = source.find(c, j)
        if k < 0:
            k = j
        mapping.append(k)
        j = k + 1
    mapping.append(min(j, len(source)))
    return mapping


def finding_span(scalar: Scalar, finding_start: int, finding_end: int, mapping: list[int] | None = None) -> Span:
    if scalar.source == scalar.value:
        return offset_span(scalar.source, scalar.span, finding_start, finding_end)
    mapping = mapping or value_offsets(scalar)
    begin = mapping[min(finding_start, len(mapping) - 1)]
    end = mapping[min(max(finding_end - 1, finding_start), len(mapping) - 1)] + 1
    if finding_end == finding_start:
        end = begin
    return offset_span(scalar.source, scalar.span, begin, end)


def _diagnostic(scalar: Scalar, f: Finding, mapping: list[int] | None) -> Diagnostic:
    span = finding_span(scalar, f.start, f.end, mapping)
    fixes = tuple(Fix(f"Replace with '{s}'", (Edit(span, s),), k == 0) for k, s in enumerate(f.suggestions))
    fixes += tuple(
        Fix(r.title, (Edit(finding_span(scalar, r.start, r.end, mapping), r.text),), not fixes and k == 0)
        for k, r in enumerate(f.rewrites)
    )
    related = tuple(Related(path, line, text) for path, line, text in f.related)
    return Diagnostic(span, f.severity, f.code, f.message, related=related, fixes=fixes)


def entry_diagnostics(result: EntryResult, index: NativeIndex | None, native_path: str | None) -> list[Diagnostic]:
    if result.canonical is None or index is None:
        return []
    headers = header_index_for(index, native_path)
    out: list[Diagnostic] = []
    for section in result.sections:
        for key in section.keys:
            if key.kind not in ("backward", "forward"):
                continue
            scalar = key.item.value
            formula = scalar.value
            if not isinstance(formula, str):
                continue
            scope = build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)
            if formula in ("auto_element_wise", "auto_linear"):
                found = auto_result_type(formula, scope)
                out.extend(
                    _diagnostic(scalar, f, None if scalar.source == formula else value_offsets(scalar)) for f in found
                )
                continue
            findings = resolve(formula, scope, headers) + in_context(formula, scope, section)
            if findings:
                mapping = None if scalar.source == formula else value_offsets(scalar)
                out.extend(_diagnostic(scalar, f, mapping) for f in findings)
    return out


_codegen_cache: dict[int, tuple[EntryResult, frozenset[object], list[Diagnostic]]] = {}
_NOTHING: list[Diagnostic] = []  # not to be changed (callers copy what they keep)
_NO_GROUP: frozenset[object] = frozenset()


def codegen_diagnostics(result: EntryResult, index: NativeIndex | None, owned: Container[object]) -> list[Diagnostic]:
    """The codegen-stage checks of one entry (spans relative to its chunk, like its own diagnostics).

    `owned`: the canonical schemas of every entry of the file. An in-place/out= overload with an entry
    of its own takes that entry's formulas, so only this entry's group ∩ owned matters: the result is
    cached per entry on exactly that, and a file pass after an edit costs a lookup per entry."""
    if result.canonical is None or index is None:
        return []
    if any(d.severity == Severity.ERROR and not d.code.startswith("formula-") for d in result.diagnostics):
        return []  # the codegen runs only on what load_derivatives accepted
    from derivls.derivatives.formulas.checks import codegen_checks
    from derivls.derivatives.formulas.overloads import overload_group

    group = overload_group(result.canonical, index)
    mine = frozenset(f.func for f in group if f.func in owned) if group else frozenset()
    hit = _codegen_cache.get(id(result))
    if hit is not None and hit[0] is result and hit[1] == mine:
        return hit[2]
    found = codegen_checks(result, index, mine) or _NOTHING  # most find nothing: one shared empty list, set
    _remember(result, mine or _NO_GROUP, found)
    return found


def remembered_codegen(result: EntryResult) -> tuple[frozenset[object], list[Diagnostic]] | None:
    """What codegen_diagnostics last computed for `result`: (the `mine` set, the diagnostics), if anything."""
    hit = _codegen_cache.get(id(result))
    return (hit[1], hit[2]) if hit is not None and hit[0] is result else None


def remember_codegen(result: EntryResult, mine: frozenset[object], found: list[Diagnostic]) -> None:
    """Seed codegen_diagnostics' memo: `found` are its diagnostics for `result` against `mine`
    (derivls.derivatives.entrycache: read from disk with the result)."""
    _remember(result, mine, found)


MEMO_LIMIT = 20_000


def _remember(result: EntryResult, mine: frozenset[object], found: list[Diagnostic]) -> None:
    """Memo one result's codegen-stage diagnostics. Over MEMO_LIMIT, the older half goes (results of
    earlier versions of the file, mostly): a whole clear would drop what the current pass just
    computed, and the entry cache would then write records without it."""
    if len(_codegen_cache) >= MEMO_LIMIT:
        for key in list(itertools.islice(_codegen_cache, len(_codegen_cache) // 2)):
            del _codegen_cache[key]
    _codegen_cache.pop(id(result), None)  # re-inserted last: the newest
    _codegen_cache[id(result)] = (result, mine, found)


def setup_diagnostics(headers: HeaderIndex) -> list[Diagnostic]:
    """The one notice for a workspace whose C++ sources are missing (what is not checked, and why)."""
    if not headers.problems:
        return []
    tried = ", ".join(str(p) for p in headers.sources.tried) or "(no PyTorch checkout or torch wheel layout around it)"
    return [
        Diagnostic(
            Span(0, 0, 0, 1),
            Severity.INFORMATION,
            FORMULA_SOURCES_MISSING,
            f"{' and '.join(headers.problems)} not found (looked at: {tried}); formula names that need "
            "them (helpers, Tensor methods) are not checked.",
        )
    ]


def workspace_diagnostics(index: NativeIndex | None, native_path: str | None) -> list[Diagnostic]:
    """The set-up diagnostics of the formula pass for a workspace (the notice when C++ sources are missing)."""
    return setup_diagnostics(header_index_for(index, native_path))
