"""formula-adl-no-tensor made certain: an unqualified ATen call in a backward formula is an error (not a
warning) where every argument is typed and none leads argument-dependent lookup into at::."""

from __future__ import annotations

from dataclasses import replace

from derivls.codes.formula import (
    FORMULA_ADL_NO_TENSOR,
)
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.exprtypes import _argument_kind, _arguments, _Calls
from derivls.derivatives.formulas.findings import ERROR, Finding

_BRACED = "braced"  # a braced-init-list argument: argument-dependent lookup ignores it


# Argument types none of whose associated namespaces is at:: (c10::, std::, none): an unqualified call with only
# such arguments finds no ATen function by argument-dependent lookup. (A std::optional may hold an at::Generator.)
_NO_AT_FAMILIES = argtypes.NO_TENSOR | {_BRACED}


def _certain_adl(c: _Calls, findings: list[Finding]) -> list[Finding]:
    """formula-adl-no-tensor findings made errors where the lookup certainly fails: no argument at all, or
    every argument typed (see _argument_kind) and none of a type argument-dependent lookup takes into at::
    (a braced list has no type of its own)."""
    at = {t.start: i for i, t in enumerate(c.tokens) if t.kind == "ident"}
    out = []
    for f in findings:
        i = at.get(f.start)
        if f.code == FORMULA_ADL_NO_TENSOR and i is not None and i + 1 in c.pairs:
            arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1])
            kinds = [
                (_BRACED, "a braced list", False)
                if c.tokens[start].text == "{" and c.pairs.get(start) == end - 1  # no associated namespace at all
                else _argument_kind(c, start, end)
                for start, end in arguments or ()
            ]
            if arguments is not None and all(k is not None and k[0] in _NO_AT_FAMILIES for k in kinds):
                types = ", ".join(k[1] for k in kinds if k is not None) or "no argument"
                f = replace(
                    f,
                    severity=ERROR,
                    message=f"'{c.tokens[i].text}' is an ATen function: without 'at::' a backward formula finds it "
                    f"only by argument-dependent lookup, and none of its arguments' types ({types}) belongs to "
                    f"at::, so the call does not compile: write 'at::{c.tokens[i].text}'.",
                )
        out.append(f)
    return out
