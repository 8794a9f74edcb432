"""Signature help inside a formula, as plain data: the helper (FunctionsManual.h), `at::` function or
Tensor method (native_functions.yaml) whose call the cursor is in, every overload, and which
parameter the cursor is on. Parameter labels are [start, end) offsets into the signature's label."""

from __future__ import annotations

from dataclasses import dataclass

from derivls.derivatives.loader import DocumentAnalysis
from derivls.ide import formula_editor as editor
from derivls.ide.formulas import formula_at, headers_of


@dataclass(frozen=True, slots=True)
class Signature:
    label: str  # the declaration or schema
    parameters: tuple[tuple[int, int], ...]  # each parameter's [start, end) in `label`
    names: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class SignatureHelp:
    callee: str
    kind: str  # "helper" | "aten" | "method"
    signatures: tuple[Signature, ...]
    active_signature: int
    active_parameter: int


def _top_level_parts(label: str) -> list[tuple[int, int]]:
    """[start, end) of each top-level comma-separated part inside the label's first (…) (trimmed)."""
    open_ = label.find("(")
    if open_ < 0:
        return []
    parts: list[tuple[int, int]] = []
    depth, start = 0, open_ + 1
    for i in range(open_ + 1, len(label)):
        c = label[i]
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            if depth == 0:  # the closing parenthesis of the parameter list
                parts.append((start, i))
                break
            depth -= 1
        elif c == "," and depth == 0:
            parts.append((start, i))
            start = i + 1
    trimmed = []
    for s, e in parts:
        while s < e and label[s].isspace():
            s += 1
        while e > s and label[e - 1].isspace():
            e -= 1
        if e > s:
            trimmed.append((s, e))
    return trimmed


def parameter_ranges(label: str, names: tuple[str, ...], kind: str) -> tuple[tuple[int, int], ...]:
    """Where each of `names` (a signature's parameters, as signature_help counts them) is in `label`."""
    parts = [(s, e) for s, e in _top_level_parts(label) if label[s:e] != "*"]
    if kind == "method" and parts and label[parts[0][0] : parts[0][1]].split()[-1:] == ["self"]:
        parts = parts[1:]
    if len(parts) == len(names):
        return tuple(parts)
    ranges = []  # the label does not split like the names: find each name in order
    cursor = label.find("(") + 1
    for name in names:
        k = label.find(name, cursor) if name else -1
        if k < 0:
            ranges.append((cursor, cursor))
            continue
        ranges.append((k, k + len(name)))
        cursor = k + len(name)
    return tuple(ranges)


def signature_help(analysis: DocumentAnalysis, line: int, column: int) -> SignatureHelp | None:
    """Signature help at (line, column) (0-based code points), None outside a known call of a formula."""
    at = formula_at(analysis, line, column, past_end=True)
    headers = headers_of(analysis)
    if at is None or headers is None:
        return None
    found = editor.signature_help(at.formula, at.offset, at.scope, headers)
    if found is None:
        return None
    signatures = tuple(
        Signature(s.label, parameter_ranges(s.label, s.parameters, found.kind), s.parameters) for s in found.signatures
    )
    return SignatureHelp(found.callee, found.kind, signatures, found.active_signature, found.active_parameter)


__all__ = ["Signature", "SignatureHelp", "parameter_ranges", "signature_help"]
