"""formula-int-to-symint: an int list passed to a `_symint` name where every overload that fits the call
takes SymIntArrayRef."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_INT_TO_SYMINT,
)
from derivls.derivatives.formulas.exprtypes import (
    _INT_LIST_METHODS,
    _INT_LISTS,
    _SYMINT_LIST_PARAMETERS,
    _arguments,
    _Calls,
    _is_list,
    _source,
)
from derivls.derivatives.formulas.findings import ERROR, Finding


def _int_to_symint(c: _Calls) -> list[Finding]:
    """A call of an ATen operator's `_symint` name given an int list where every C++ overload of that name
    that takes this many arguments has a SymIntArrayRef parameter (an int list does not convert to it)."""
    findings: list[Finding] = []
    for i, method in c.sites:
        t = c.tokens[i]
        arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1]) if t.text.endswith("_symint") else None
        if not arguments:
            continue
        fitting = [
            sig.arguments()
            for low, high, sig in c.headers.aten_overloads(t.text, method)
            if low <= len(arguments) <= high
        ]
        for k, (start, end) in enumerate(arguments):
            arg = c.tokens[start:end]
            if not fitting or not _is_list(arg, c.scope, c.declared, _INT_LIST_METHODS, _INT_LISTS):
                continue
            if not all(b[k].type in _SYMINT_LIST_PARAMETERS for b in fitting):
                continue
            what = _source(arg)
            plain = t.text[: -len("_symint")]
            findings.append(
                Finding(
                    FORMULA_INT_TO_SYMINT,
                    ERROR,
                    arg[0].start,
                    arg[-1].end,
                    f"'{t.text}' takes a SymIntArrayRef here, and '{what}' is a list of int64_t, which does not "
                    f"convert to it: pass a SymInt list (e.g. 'x.sym_sizes()') or call '{plain}'.",
                    (),
                )
            )
    return findings
