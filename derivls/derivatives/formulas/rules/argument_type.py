"""formula-argument-type: a call where, in every overload taking that many arguments, some argument can
never become its parameter."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_ARGUMENT_TYPE,
)
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.exprtypes import (
    MAX_SHOWN_OVERLOADS,
    _argument_kind,
    _arguments,
    _Calls,
    _overloads,
    _source,
    _typed_calls,
)
from derivls.derivatives.formulas.findings import ERROR, Finding
from derivls.derivatives.formulas.headers import (
    TypedOverload,
)


def _mismatch(kinds: list[tuple[str, str, bool] | None], overload: TypedOverload) -> int | None:
    """The first argument no implicit conversion takes to its parameter of `overload`, if any."""
    for k, kind in enumerate(kinds):
        if kind is not None and k < len(overload.families):
            family, _, zero = kind
            if argtypes.never_converts(family, overload.families[k], zero):
                return k
    return None


_WHAT = {
    True: "the Tensor method's C++ overloads",
    False: "the ATen function's C++ overloads",
    None: "FunctionsManual.h's declarations",
}


def _argument_types(c: _Calls) -> list[Finding]:
    """A call of a helper or an ATen operator (see _typed_calls) where every overload that takes this many
    arguments has a parameter the argument passed to it can never convert to (derivatives/formulas/argtypes.py:
    a Tensor for a number, an int list for a Tensor, …)."""
    findings: list[Finding] = []
    for i, method in _typed_calls(c):
        arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1])
        if not arguments:
            continue
        kinds = [_argument_kind(c, start, end) for start, end in arguments]
        if all(k is None for k in kinds):
            continue
        t = c.tokens[i]
        fitting = [o for o in _overloads(c, i, method) if o.low <= len(arguments) <= o.high]
        mismatches = [(o, _mismatch(kinds, o)) for o in fitting]
        if not fitting or any(k is None for _, k in mismatches):
            continue
        overload, k = mismatches[0]
        assert k is not None
        start, end = arguments[k]
        kind = kinds[k]
        assert kind is not None
        text = _source(c.tokens[start:end])
        if len(fitting) == 1:
            where = (c.tokens[start].start, c.tokens[end - 1].end)
            message = (
                f"'{text}' ({kind[1]}) does not convert to {overload.parameters[k].strip()}, argument {k + 1} of "
                f"'{t.text}' ({_WHAT[method]}):\n  {overload.text}"
            )
        else:
            where = (t.start, t.end)
            reasons = "\n".join(
                f"  {o.text}  — argument {m + 1} '{_source(c.tokens[arguments[m][0] : arguments[m][1]])}' "
                f"cannot be {o.parameters[m]}"
                for o, m in mismatches[:MAX_SHOWN_OVERLOADS]
                if m is not None
            )
            message = (
                f"No overload of '{t.text}' that takes {len(arguments)} arguments takes these ({_WHAT[method]}):\n"
                f"{reasons}"
            )
        findings.append(Finding(FORMULA_ARGUMENT_TYPE, ERROR, where[0], where[1], message, ()))
    return findings
