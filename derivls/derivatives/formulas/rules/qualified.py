"""formula-unknown-qualified: `at::x`, `std::x`, `c10::x` that the namespace does not have."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_UNKNOWN_QUALIFIED,
)
from derivls.derivatives.formulas.findings import ERROR, Finding, _closest
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import KNOWN_AT, KNOWN_C10, KNOWN_STD
from derivls.derivatives.formulas.tokens import Token


def _qualified(tokens: list[Token], i: int, headers: HeaderIndex | None) -> list[Finding]:
    t = tokens[i]
    if i < 2 or tokens[i - 2].kind != "ident" or (i >= 3 and tokens[i - 3].text == "::"):
        return []  # ::x, a::b::x: only one-level at::/std::/c10:: names are checked
    namespace = tokens[i - 2].text
    if namespace == "at":
        if headers is None or not headers.native_complete or headers.is_at_name(t.text):
            return []
        cands = set(headers.at_functions) | KNOWN_AT
    elif namespace == "std":
        if t.text in KNOWN_STD:
            return []
        cands = set(KNOWN_STD)
        if _closest(t.text, cands) == ():
            return []  # a std name we do not list and nothing close to it: not judged
    elif namespace == "c10":
        if t.text in KNOWN_C10 or (headers is not None and t.text in KNOWN_AT):
            return []
        cands = set(KNOWN_C10)
        if _closest(t.text, cands) == ():
            return []
    else:
        return []
    return [
        Finding(
            FORMULA_UNKNOWN_QUALIFIED,
            ERROR,
            t.start,
            t.end,
            f"'{namespace}::{t.text}' is not declared.",
            tuple(f"{s}" for s in _closest(t.text, cands)),
        )
    ]
