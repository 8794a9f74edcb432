"""formula-conditional-types: `c ? a : b` whose branches are typed and neither converts to the other."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_CONDITIONAL_TYPES,
)
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.exprtypes import _argument_kind, _Calls, _source
from derivls.derivatives.formulas.findings import ERROR, Finding

_ENDS_A_BRANCH = frozenset({",", ")", "]", "}", ";"})


def _conditional_types(c: _Calls) -> list[Finding]:
    """`cond ? a : b` where `a` and `b` are typed (see _argument_kind) and neither converts to the other's type:
    the conditional operator has no common type for them (`grad.defined() ? grad : 0`)."""
    findings: list[Finding] = []
    tokens = c.tokens
    for q, t in enumerate(tokens):
        if t.text != "?" or t.kind != "punct":
            continue
        colon, depth, nested, end = -1, 0, 0, len(tokens)
        for j in range(q + 1, len(tokens)):
            text = tokens[j].text
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}") and depth:
                depth -= 1
            elif depth == 0 and colon < 0 and text == "?":
                nested += 1
            elif depth == 0 and colon < 0 and text == ":":
                if nested:
                    nested -= 1
                else:
                    colon = j
            elif depth == 0 and colon >= 0 and text == "?":
                end = -1  # `a ? b : c ? d : e`: the second branch is a conditional itself (judged on its own)
                break
            elif depth == 0 and text in _ENDS_A_BRANCH:
                end = j
                break
        if colon < 0 or colon == q + 1 or end <= colon + 1:
            continue
        a, b = _argument_kind(c, q + 1, colon), _argument_kind(c, colon + 1, end)
        if a is None or b is None:
            continue
        if argtypes.never_converts(a[0], b[0], a[2]) and argtypes.never_converts(b[0], a[0], b[2]):
            first, second = _source(tokens[q + 1 : colon]), _source(tokens[colon + 1 : end])
            findings.append(
                Finding(
                    FORMULA_CONDITIONAL_TYPES,
                    ERROR,
                    tokens[q].start,
                    tokens[q].end,
                    f"The branches of '?:' have no common type: '{first}' ({a[1]}) and '{second}' ({b[1]}) convert "
                    "to neither other.",
                )
            )
    return findings
