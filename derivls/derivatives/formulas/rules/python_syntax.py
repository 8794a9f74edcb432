"""formula-python-syntax: Python written where C++ is compiled (`**`, `//`, `a if c else b`, `torch.f`;
the reading is syntax.py's)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_PYTHON_SYNTAX,
)
from derivls.derivatives.formulas import syntax
from derivls.derivatives.formulas.exprtypes import _argument_kind, _Calls
from derivls.derivatives.formulas.findings import ERROR, Finding, Rewrite
from derivls.derivatives.formulas.scope import (
    Scope,
)
from derivls.derivatives.formulas.tokens import Token

_PYTHON_MARKS = ("**", "//", "if", "torch.", "at.", "std.", "c10.", "math.", "[")  # (a superset: syntax.py judges)


def _python_syntax(
    formula: str, tokens: list[Token], pairs: dict[int, int], scope: Scope, declared: set[str], calls: _Calls | None
) -> list[Finding]:
    """Python written where C++ is compiled (derivatives/formulas/syntax.py): `**`, `//`, `a if c else b`, `torch.f`."""
    kind = (lambda start, end: _argument_kind(calls, start, end)) if calls is not None else (lambda start, end: None)
    return [
        Finding(
            FORMULA_PYTHON_SYNTAX,
            ERROR,
            s.start,
            s.end,
            s.message,
            rewrites=(Rewrite(*s.fix),) if s.fix is not None else (),
        )
        for s in syntax.python_slips(formula, tokens, pairs, kind, declared, scope.locals)
    ]
