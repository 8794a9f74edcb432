"""Formulas as code for an editor, as plain data (no LSP types): semantic tokens, the declaration(s)
of a helper, the schema(s) of an `at::` function or Tensor method, and signature help inside a call.

Offsets are into the formula text (the YAML scalar's value); `scalar_tokens` maps them onto the
document for a `Scalar` (multi-line and quoted scalars included).
"""

from __future__ import annotations

from dataclasses import dataclass

from derivls.derivatives.formulas.declarations import Declaration
from derivls.derivatives.formulas.exprtypes import declared_names
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import KEYWORDS, KNOWN_AT, KNOWN_C10, KNOWN_STD
from derivls.derivatives.formulas.scope import Scope
from derivls.derivatives.formulas.tokens import Token, matching_brackets, tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.base.diagnostics import Span
    from derivls.derivatives.document import Scalar

# Token kinds, in the order a client legend can list them.
KINDS = (
    "argument",  # an input of the function, by its name
    "tangent",  # <input>_t (forward formulas)
    "primal",  # <input>_p (forward formulas)
    "output",  # result, result0…, a named output
    "grad",  # grad, grads, grad_<output>
    "local",  # other locals of the generated code (grad_input_mask, retain_variables, i), lambda parameters
    "helper",  # a FunctionsManual.h function
    "aten",  # an at:: function (qualified or found through a Tensor argument)
    "method",  # a member after `.` / `->`
    "namespace",  # at, std, c10, torch and other qualifiers
    "type",  # Tensor, Scalar, ScalarType, … and other names of the documented lists
    "keyword",
    "number",
    "string",
    "unknown",
)
_LOCAL_KINDS = {
    "argument": "argument",
    "output": "output",
    "grad": "grad",
    "tangent": "tangent",
    "primal": "primal",
    "generated": "local",
}


@dataclass(frozen=True, slots=True)
class SemanticToken:
    start: int
    end: int
    kind: str


def semantic_tokens(formula: str, scope: Scope, headers: HeaderIndex | None) -> list[SemanticToken]:
    tokens, _ = tokenize(formula)
    declared = declared_names(tokens, matching_brackets(tokens))
    out = []
    for i, t in enumerate(tokens):
        kind = _classify(tokens, i, scope, headers, declared)
        if kind is not None:
            out.append(SemanticToken(t.start, t.end, kind))
    return out


def _classify(tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex | None, declared: set[str]) -> str | None:
    t = tokens[i]
    if t.kind in ("number", "string", "char"):
        return "number" if t.kind == "number" else "string"
    if t.kind != "ident":
        return None
    if t.text in KEYWORDS:
        return "keyword"
    prev = tokens[i - 1].text if i else ""
    nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
    if prev in (".", "->"):
        return "method"
    if nxt == "::":
        return "namespace" if t.text in ("at", "std", "c10", "torch", "native", "_ops") else "type"
    if prev == "::":
        namespace = tokens[i - 2].text if i >= 2 else ""
        if namespace == "at" and headers is not None and t.text in headers.at_functions:
            return "aten"
        if namespace in ("at", "c10", "std") and (t.text in KNOWN_AT or t.text in KNOWN_C10 or t.text in KNOWN_STD):
            return "aten" if nxt == "(" and namespace == "at" else "type"
        return "type" if nxt != "(" else "aten" if namespace == "at" else "helper"
    if t.text in declared:
        return "local"
    local = scope.get(t.text)
    if local is not None:
        return _LOCAL_KINDS.get(local.kind, "local")
    if headers is not None:
        if t.text in headers.helpers:
            return "helper"
        if t.text in headers.at_functions and nxt == "(":
            return "aten"
        if headers.is_unqualified(t.text):
            return "type" if t.text[:1].isupper() or nxt != "(" else "helper"
    return "unknown"


def scalar_tokens(scalar: Scalar, scope: Scope, headers: HeaderIndex | None) -> list[tuple[Span, str]]:
    """Semantic tokens of a formula scalar, on the document (spans relative to its chunk, like the scalar's)."""
    from derivls.derivatives.formulas.entry_formulas import finding_span, value_offsets

    formula = scalar.value
    if not isinstance(formula, str):
        return []
    mapping = None if scalar.source == formula else value_offsets(scalar)
    return [(finding_span(scalar, t.start, t.end, mapping), t.kind) for t in semantic_tokens(formula, scope, headers)]


def helper_declarations(name: str, headers: HeaderIndex) -> list[Declaration]:
    """Every overload of a FunctionsManual.h helper, in header order (empty if it is not one)."""
    return list(headers.helpers.get(name, ()))


def call_schemas(name: str, headers: HeaderIndex, *, method: bool) -> list[str]:
    """The native_functions.yaml schemas of an `at::` function (method=False) or Tensor method (True)."""
    table = headers.method_schemas if method else headers.at_functions
    return list(table.get(name, ()))


@dataclass(frozen=True, slots=True)
class Signature:
    label: str  # the declaration or schema
    parameters: tuple[str, ...]  # parameter names, in order


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    callee: str
    kind: str  # "helper" | "aten" | "method"
    signatures: tuple[Signature, ...]
    active_signature: int
    active_parameter: int


def _schema_parameters(schema: str, method: bool) -> tuple[str, ...]:
    inner = schema[schema.index("(") + 1 : schema.rindex(") ->") if ") ->" in schema else len(schema)]
    names = []
    for part in inner.split(","):
        part = part.strip()
        if not part or part == "*":
            continue
        head = part.split("=")[0].split()
        if head:
            names.append(head[-1])
    if method and names and names[0] == "self":
        names = names[1:]
    return tuple(names)


def signature_help(formula: str, offset: int, scope: Scope, headers: HeaderIndex) -> SignatureHelp | None:
    """The innermost call around `offset` whose callee is a helper, an at:: function or a Tensor method."""
    tokens, _ = tokenize(formula)
    pairs = matching_brackets(tokens)
    stack: list[int] = []
    for i, t in enumerate(tokens):
        if t.start >= offset:
            break
        if t.text in ("(", "[", "{"):
            stack.append(i)
        elif t.text in (")", "]", "}") and stack:
            stack.pop()
    for open_index in reversed(stack):
        if tokens[open_index].text != "(" or open_index == 0 or tokens[open_index - 1].kind != "ident":
            continue
        callee = tokens[open_index - 1]
        prev = tokens[open_index - 2].text if open_index >= 2 else ""
        kind, signatures = _signatures(callee.text, prev, scope, headers)
        if not signatures:
            continue
        close = pairs.get(open_index, len(tokens))
        active = _active_argument(tokens, open_index, close, offset)
        best = next((k for k, s in enumerate(signatures) if active < len(s.parameters)), 0)
        return SignatureHelp(callee.text, kind, tuple(signatures), best, active)
    return None


def _signatures(name: str, prev: str, scope: Scope, headers: HeaderIndex) -> tuple[str, list[Signature]]:
    if prev in (".", "->"):
        members = [Signature(m.text, m.names) for m in headers.hand_written_members(name) if not m.template]
        schemas = [Signature(s, _schema_parameters(s, True)) for s in headers.method_schemas.get(name, ())]
        return "method", members + schemas
    if prev != "::" and name in headers.helpers:
        return "helper", [Signature(d.text, d.parameters) for d in headers.helpers[name]]
    if name in headers.at_functions and scope.get(name) is None:
        return "aten", [Signature(s, _schema_parameters(s, False)) for s in headers.at_functions[name]]
    return "", []


_TEMPLATES = frozenset(
    "tuple vector array optional get static_cast to numeric_limits pair ArrayRef OptionalArrayRef make_tuple".split()
)


def _active_argument(tokens: list[Token], open_index: int, close: int, offset: int) -> int:
    """Which argument (0-based) `offset` is in; `<…>` counts as brackets only after a known template name."""
    depth = 0
    active = 0
    angles: list[int] = []
    for k in range(open_index + 1, close):
        t = tokens[k]
        if t.start >= offset:
            break
        if t.text == "<" and tokens[k - 1].text in _TEMPLATES:
            angles.append(depth)
            depth += 1
        elif t.text == ">" and angles and angles[-1] == depth - 1:
            angles.pop()
            depth -= 1
        elif t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}") and depth:
            depth -= 1
        elif t.text == "," and depth == 0:
            active += 1
    return active


def scope_for_key(result: object, section: object, key: object) -> Scope:
    """The scope of one formula of an analysed entry (EntryResult, SectionResult, KeyResult)."""
    from derivls.derivatives.formulas.scope import build_scope

    return build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)  # type: ignore[attr-defined]


def entry_semantic_tokens(result: object, headers: HeaderIndex | None) -> list[tuple[Span, str]]:
    """Semantic tokens of every valid formula of an analysed entry (spans relative to its chunk)."""
    out: list[tuple[Span, str]] = []
    if getattr(result, "canonical", None) is None:
        return out
    for section in result.sections:  # type: ignore[attr-defined]
        for key in section.keys:
            if key.kind in ("backward", "forward"):
                out.extend(scalar_tokens(key.item.value, scope_for_key(result, section, key), headers))
    return out
