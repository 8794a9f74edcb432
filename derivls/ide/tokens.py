"""Semantic tokens of formulas, as plain data: every name, number and string of the C++ in a
derivatives.yaml (locals, tangents and primals, outputs, helpers, ATen functions, methods …).

Positions are 0-based code points on the document; a server converts them to its client's encoding
and delta-encodes them. The legend (`TOKEN_TYPES`, `TOKEN_MODIFIERS`) uses LSP's standard token types
and modifiers where they fit and adds custom modifiers for what is particular to formulas:

    formula kind   type       modifiers
    argument       parameter
    tangent        parameter  tangent          (<input>_t, forward formulas)
    primal         parameter  primal           (<input>_p, forward formulas)
    output         variable   output           (result, resultN, named outputs)
    grad           variable   grad             (grad, grads, grad_<output>)
    local          variable                    (grad_input_mask, retain_variables, i, lambda parameters)
    helper         function                    (FunctionsManual.h)
    aten           function   defaultLibrary   (at:: functions)
    method         method
    namespace      namespace
    type           type
    keyword        keyword                     (C++ keywords; auto_element_wise, auto_linear)
    number         number
    string         string
    unknown        variable   unresolved       (a name nothing declares: see its diagnostic)
"""

from __future__ import annotations

from dataclasses import dataclass

from derivls.base.diagnostics import Span
from derivls.derivatives.document import offset_span
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.loader import DocumentAnalysis
from derivls.derivatives.results import EntryResult
from derivls.ide.formula_editor import KINDS, scalar_tokens, scope_for_key
from derivls.ide.formulas import FORMULA_KINDS, headers_of

AUTO_FORMULAS = ("auto_element_wise", "auto_linear")  # derivatives.yaml's own words: keywords

TOKEN_TYPES = ("parameter", "variable", "function", "method", "namespace", "type", "keyword", "number", "string")
TOKEN_MODIFIERS = ("tangent", "primal", "output", "grad", "defaultLibrary", "unresolved")

# formula kind (derivls.ide.formula_editor.KINDS) → (token type, modifiers)
LEGEND: dict[str, tuple[str, tuple[str, ...]]] = {
    "argument": ("parameter", ()),
    "tangent": ("parameter", ("tangent",)),
    "primal": ("parameter", ("primal",)),
    "output": ("variable", ("output",)),
    "grad": ("variable", ("grad",)),
    "local": ("variable", ()),
    "helper": ("function", ()),
    "aten": ("function", ("defaultLibrary",)),
    "method": ("method", ()),
    "namespace": ("namespace", ()),
    "type": ("type", ()),
    "keyword": ("keyword", ()),
    "number": ("number", ()),
    "string": ("string", ()),
    "unknown": ("variable", ("unresolved",)),
}
assert set(LEGEND) == set(KINDS), "every formula kind has a place in the legend"


@dataclass(frozen=True, slots=True)
class SemanticToken:
    """One token on one line (0-based code points)."""

    line: int
    start: int
    length: int
    kind: str  # a formula kind (KINDS)

    @property
    def token_type(self) -> str:
        return LEGEND[self.kind][0]

    @property
    def modifiers(self) -> tuple[str, ...]:
        return LEGEND[self.kind][1]


# id(EntryResult) → (the result, the headers, its tokens relative to its chunk): entries unchanged by an
# edit keep their EntryResult, so a document's tokens after a keystroke cost one entry's tokenizing.
_cache: dict[int, tuple[EntryResult, HeaderIndex | None, list[tuple[int, int, int, str]]]] = {}
MAX_CACHED = 20_000


def entry_tokens(result: EntryResult, headers: HeaderIndex | None) -> list[tuple[int, int, int, str]]:
    """(line, start, length, kind) of an entry's formula tokens, relative to its chunk, in order (cached)."""
    hit = _cache.get(id(result))
    if hit is not None and hit[0] is result and hit[1] is headers:
        return hit[2]
    tokens = []
    for span, kind in _placed_tokens(result, headers):
        if span.line != span.end_line or span.end_column <= span.column:
            continue  # a string literal folded over lines: LSP tokens are on one line
        tokens.append((span.line, span.column, span.end_column - span.column, kind))
    tokens.sort()
    if len(_cache) > MAX_CACHED:
        _cache.clear()
    _cache[id(result)] = (result, headers, tokens)
    return tokens


def _placed_tokens(result: EntryResult, headers: HeaderIndex | None) -> list[tuple[Span, str]]:
    """Every formula's tokens (entry_semantic_tokens), with auto_element_wise / auto_linear as keywords."""
    out: list[tuple[Span, str]] = []
    if result.canonical is None:
        return out
    for section in result.sections:
        for key in section.keys:
            if key.kind not in FORMULA_KINDS:
                continue
            scalar = key.item.value
            if isinstance(scalar.value, str) and scalar.value.strip() in AUTO_FORMULAS:
                begin = scalar.source.find(scalar.value.strip())
                out.append(
                    (offset_span(scalar.source, scalar.span, begin, begin + len(scalar.value.strip())), "keyword")
                )
                continue
            out.extend(scalar_tokens(scalar, scope_for_key(result, section, key), headers))
    return out


def semantic_tokens(analysis: DocumentAnalysis, first: int = 0, last: int | None = None) -> list[SemanticToken]:
    """The tokens of every formula on lines first..last (inclusive; None: to the end), in document order."""
    headers = headers_of(analysis)
    entries = analysis.entries
    first = max(first, 0)
    i = analysis.entries_from(first) if first else 0
    out: list[SemanticToken] = []
    for placed in entries[i:]:
        if last is not None and placed.line > last:
            break
        if placed.end_line < first:
            continue
        shift = placed.start_line
        for line, start, length, kind in entry_tokens(placed.result, headers):
            line += shift
            if line >= first and (last is None or line <= last):
                out.append(SemanticToken(line, start, length, kind))
    return out


__all__ = ["LEGEND", "TOKEN_MODIFIERS", "TOKEN_TYPES", "SemanticToken", "entry_tokens", "semantic_tokens"]
