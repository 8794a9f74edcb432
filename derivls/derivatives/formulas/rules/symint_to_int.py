"""formula-symint-to-int: a SymInt list passed to an ATen function or method under its plain name, which
takes IntArrayRef there (the `_symint` name takes SymIntArrayRef)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_SYMINT_TO_INT,
)
from derivls.derivatives.formulas.exprtypes import (
    _SYMINT_LIST_METHODS,
    _SYMINT_LISTS,
    _arguments,
    _Calls,
    _is_list,
    _source,
)
from derivls.derivatives.formulas.findings import ERROR, Finding, Rewrite


def _symint_to_int(c: _Calls) -> list[Finding]:
    """A call of an ATen operator's plain C++ name (see _call_sites) given a SymInt list as an argument:
    torchgen declares it with IntArrayRef (and OptionalIntArrayRef) where the schema says `SymInt[]`, and
    `f_symint` with SymIntArrayRef; nothing converts the one into the other."""
    findings: list[Finding] = []
    for i, method in c.sites:
        t = c.tokens[i]
        if t.text.endswith("_symint"):
            continue
        table = c.headers.method_schemas if method else c.headers.at_functions
        for start, end in _arguments(c.tokens, i + 1, c.pairs[i + 1]) or ():
            if not _is_list(c.tokens[start:end], c.scope, c.declared, _SYMINT_LIST_METHODS, _SYMINT_LISTS):
                continue
            what = _source(c.tokens[start:end])
            twin = t.text + "_symint"
            has_twin = twin in table
            fix = f"call '{twin}', which takes SymIntArrayRef" if has_twin else "pass an IntArrayRef (e.g. 'x.sizes()')"
            rewrites = (Rewrite(f"Call '{twin}'", t.start, t.end, twin),) if has_twin else ()
            findings.append(
                Finding(
                    FORMULA_SYMINT_TO_INT,
                    ERROR,
                    t.start,
                    t.end,
                    f"'{t.text}' takes IntArrayRef (its C++ name without '_symint'), and '{what}' is a list of "
                    f"SymInt, which does not convert to it: {fix}.",
                    (),
                    rewrites,
                )
            )
            break
    return findings
