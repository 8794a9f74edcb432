"""formula-not-bool: a Tensor, a c10::Scalar or a list where C++ wants a bool (`grad ? a : b`, `!self`)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_NOT_BOOL,
)
from derivls.derivatives.formulas import argtypes, operators
from derivls.derivatives.formulas.exprtypes import _argument_kind, _Calls, _source
from derivls.derivatives.formulas.findings import ERROR, Finding, Rewrite


def _not_bool(c: _Calls) -> list[Finding]:
    """A `?:` condition, `!`'s or `&&`/`||`'s operand whose type has no conversion to bool (operators.py):
    Python's truthiness (`grad ? a : b` for `grad.defined() ? a : b`)."""
    findings = []
    tokens = c.tokens
    for cond in operators.unconvertible_conditions(tokens, c.pairs, lambda start, end: _argument_kind(c, start, end)):
        start, end = cond.span
        text = _source(tokens[start:end])
        rewrites: tuple[Rewrite, ...] = ()
        hint = ""
        if cond.kind[0] == argtypes.TENSOR:
            hint = f" Test whether it holds a Tensor with '{text}.defined()'."
            rewrites = (
                Rewrite(f"Use '{text}.defined()'", tokens[start].start, tokens[end - 1].end, f"{text}.defined()"),
            )
        findings.append(
            Finding(
                FORMULA_NOT_BOOL,
                ERROR,
                tokens[start].start,
                tokens[end - 1].end,
                f"'{text}' ({cond.kind[1]}) stands where C++ wants a bool, and it has no conversion to bool (C++ has no "
                f"Python truthiness).{hint}",
                rewrites=rewrites,
            )
        )
    return findings
