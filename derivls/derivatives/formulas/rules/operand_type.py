"""formula-operand-type: `a op b` that no operator takes (a c10::Scalar beside anything but a Tensor, a
std::optional or a list in arithmetic; see operators.py)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_OPERAND_TYPE,
)
from derivls.derivatives.formulas import argtypes, operators
from derivls.derivatives.formulas.exprtypes import _HAS_VALUE, _argument_kind, _Calls, _may_hold_a_culprit, _source
from derivls.derivatives.formulas.findings import ERROR, Finding, Rewrite


def _operand_types(c: _Calls) -> list[Finding]:
    """`a op b` (arithmetic or comparison) that no operator takes: a c10::Scalar beside anything but a Tensor, a
    std::optional or a list in arithmetic (derivatives/formulas/operators.py; operands typed as _argument_kind
    types arguments)."""
    findings: list[Finding] = []
    tokens = c.tokens
    if not _may_hold_a_culprit(c):
        return findings
    for o in operators.unmatched_operations(tokens, c.pairs, lambda start, end: _argument_kind(c, start, end)):
        sides = [_source(tokens[start:end]) for start, end in (o.left, o.right)]
        (first, second), culprit = o.kinds, o.kinds[o.culprit]
        start, end = (o.left, o.right)[o.culprit]
        rewrites: tuple[Rewrite, ...] = ()
        if end - start == 1 and tokens[start].kind == "ident":  # a name: convert it where it stands
            name = tokens[start].text
            fix = ".toDouble()" if culprit[0] == argtypes.SCALAR else ".value()" if culprit[0] in _HAS_VALUE else ""
            if fix:
                title = f"Use '{name}{fix}'"
                rewrites = (Rewrite(title, tokens[start].start, tokens[start].end, name + fix),)
        findings.append(
            Finding(
                FORMULA_OPERAND_TYPE,
                ERROR,
                tokens[o.op].start,
                tokens[o.op].end,
                f"No operator '{tokens[o.op].text}' takes '{sides[0]}' ({first[1]}) and '{sides[1]}' ({second[1]}): "
                f"{o.reason}.",
                rewrites=rewrites,
            )
        )
    return findings
