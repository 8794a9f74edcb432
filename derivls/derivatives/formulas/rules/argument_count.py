"""formula-argument-count: a call of a FunctionsManual helper, an ATen operator, a <cmath> function or
fmap with a number of arguments none of its overloads takes."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_ARGUMENT_COUNT,
)
from derivls.derivatives.formulas.declarations import Declaration
from derivls.derivatives.formulas.exprtypes import (
    MAX_SHOWN_OVERLOADS,
    _argument_count,
    _Calls,
    _method_sites,
    _overloads,
)
from derivls.derivatives.formulas.findings import ERROR, Finding
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import CMATH_ARITY
from derivls.derivatives.formulas.tokens import Token


def _aten_arity(c: _Calls) -> list[Finding]:
    """A call of an ATen operator or a hand-written Tensor member (see _method_sites) with a number of
    arguments none of the C++ overloads under that name takes."""
    findings: list[Finding] = []
    for i, method in _method_sites(c):
        count = _argument_count(c.tokens, i + 1, c.pairs[i + 1])
        overloads = _overloads(c, i, method)
        if count is None or not overloads or any(o.low <= count <= o.high for o in overloads):
            continue
        t = c.tokens[i]
        ranges = sorted({(o.low, o.high) for o in overloads})
        takes = " or ".join(_arity_text(low, high) for low, high in ranges)
        where = "Tensor method" if method else "ATen function"
        shown = "\n".join(f"  {o.text}" for o in overloads[:MAX_SHOWN_OVERLOADS])
        more = f"\n  … and {len(overloads) - MAX_SHOWN_OVERLOADS} more" if len(overloads) > MAX_SHOWN_OVERLOADS else ""
        findings.append(
            Finding(
                FORMULA_ARGUMENT_COUNT,
                ERROR,
                t.start,
                t.end,
                f"'{t.text}' is called with {count} argument{'s' if count != 1 else ''}, but the {where}'s C++ "
                f"overloads take {takes}:\n{shown}{more}",
                (),
            )
        )
    return findings


def _helper_arity(tokens: list[Token], i: int, close: int, overloads: list[Declaration]) -> Finding | None:
    """`helper(args)` with a number of arguments no overload of the FunctionsManual helper takes."""
    count = _argument_count(tokens, i + 1, close)
    if count is None:
        return None
    ranges = sorted({d.arity for d in overloads})
    if any(low <= count <= high for low, high in ranges):
        return None
    t = tokens[i]
    takes = " or ".join(_arity_text(low, high) for low, high in ranges)
    overload = "its overloads take" if len(overloads) > 1 else "it takes"
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        t.start,
        t.end,
        f"'{t.text}' is called with {count} argument{'s' if count != 1 else ''}, but {overload} {takes} "
        f"(FunctionsManual.h).",
        (),
        related=tuple((d.path, d.line, d.text) for d in overloads[:10]),
    )


def _math_arity(
    tokens: list[Token], i: int, close: int, headers: HeaderIndex | None, qualified: bool
) -> Finding | None:
    """`sqrt(…)`, `std::pow(…)`…: a <cmath> function called with a number of arguments none of its overloads
    takes, nor (unqualified: found by argument-dependent lookup) the ATen function's or a helper's of that name."""
    count = _argument_count(tokens, i + 1, close)
    name = tokens[i].text
    ranges: set[tuple[int, float]] = {CMATH_ARITY[name]}
    if not qualified and headers is not None:
        if name in headers.at_functions and headers.native_complete:
            ranges |= {(low, high) for low, high, _ in headers.aten_overloads(name, False)}
        elif name in headers.at_functions:
            return None  # an excerpt of native_functions.yaml: its overloads are not known
        ranges |= {d.arity for d in headers.helpers.get(name, ())}
    if count is None or any(low <= count <= high for low, high in ranges):
        return None
    t = tokens[i]
    takes = " or ".join(_arity_text(low, high) for low, high in sorted(ranges))
    what = f"std::{name}" if qualified else f"'{name}' (<cmath>, or an ATen function found through a Tensor argument)"
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        t.start,
        t.end,
        f"'{name}' is called with {count} argument{'s' if count != 1 else ''}, but {what} takes {takes}.",
        (),
    )


def _fmap_arity(tokens: list[Token], i: int, close: int) -> Finding | None:
    """`fmap(xs, fn)` (ATen/core/functional.h, a using-declaration of Functions.cpp): called without template
    arguments it takes exactly two (its other overloads, `fmap<R>(xs)`, need the result type written)."""
    count = _argument_count(tokens, i + 1, close)
    if count is None or count == 2:
        return None
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        tokens[i].start,
        tokens[i].end,
        f"'fmap' is called with {count} argument{'s' if count != 1 else ''}, but fmap(inputs, fn) takes 2 "
        "(ATen/core/functional.h: template<class F, class T> auto fmap(const T& inputs, const F& fn); "
        "fmap<R>(inputs) names its result type R).",
    )


def _arity_text(low: int, high: float) -> str:
    if high == float("inf"):
        return f"{low} or more"
    return f"{low}" if low == high else f"{low} to {int(high)}"
