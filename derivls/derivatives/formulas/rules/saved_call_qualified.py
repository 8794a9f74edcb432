"""formula-saved-call-qualified: `at::zeros_like(self)` and the like, which load_derivatives' substitution
of `zeros_like(self)` turns into `at::self_info.zeros()`."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_SAVED_CALL_QUALIFIED,
)
from derivls.derivatives.formulas import savedcalls
from derivls.derivatives.formulas.exprtypes import SAVED_CALLS_OF_ARGUMENTS
from derivls.derivatives.formulas.findings import ERROR, Finding
from derivls.derivatives.formulas.scope import (
    Scope,
)
from derivls.derivatives.formulas.tokens import Token


def _qualified_saved_call(formula: str, tokens: list[Token], i: int, scope: Scope) -> Finding | None:
    """`at::zeros_like(self)`: load_derivatives' substitution matches `zeros_like(self)` after the qualifier too,
    so the generated code reads `at::self_info.zeros()`, which does not compile."""
    t = tokens[i]
    name = savedcalls.replaced_argument(tokens, i, scope)
    if name is None:
        return None  # the pattern is that exact text, of an argument or output (saved.py's rules)
    first = i - 2 if i >= 2 and tokens[i - 2].kind == "ident" else i - 1
    qualifier = formula[tokens[first].start : tokens[i - 1].end]
    rule = SAVED_CALLS_OF_ARGUMENTS[t.text]
    saved = rule.result(name) if rule.result else name + str(rule.suffix)
    return Finding(
        FORMULA_SAVED_CALL_QUALIFIED,
        ERROR,
        tokens[first].start,
        t.end,
        f"load_derivatives saves '{name}' for '{t.text}({name})' and replaces that text with '{saved}', also "
        f"after '{qualifier}': the generated '{qualifier}{saved}' does not compile. Write '{t.text}({name})' "
        "without the qualifier.",
        (t.text,),
    )
