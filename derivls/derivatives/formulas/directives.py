"""Text of a formula that would be a preprocessor directive, a pragma or assembler if it reached a compiler.

torchgen pastes a formula verbatim into generated C++: after a line break, `#include "/etc/passwd"` (or its
digraph `%:include`, its trigraph `??=include`) is a directive; `_Pragma("...")` is one in operator form,
`asm(".include ...")` makes the assembler read a file. No formula needs any of them. `hazards(formula)`
finds them outside string and character literals; formula-context reports them, and derivls's compile
and gradcheck refuse a unit that holds one (compile/safety.py).
"""

from __future__ import annotations

import re

from derivls.derivatives.formulas.tokens import Token, tokenize
from derivls.frozen import frozen_dataclass

DIRECTIVE_WORDS = frozenset({"_Pragma", "__pragma", "asm", "__asm", "__asm__"})
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
_MAYBE = re.compile(r"#|%:|\?\?|_Pragma|__pragma|\b(?:__)?asm(?:__)?\b")


@frozen_dataclass
class Hazard:
    start: int
    end: int
    text: str
    message: str


def hazards(formula: str) -> list[Hazard]:
    """The directive-like text of `formula` outside its literals (module doc), in order."""
    if _MAYBE.search(formula) is None:
        return []
    tokens, _ = tokenize(formula)
    return hazards_in(formula, tokens)


def hazards_in(formula: str, tokens: list[Token]) -> list[Hazard]:
    out: list[Hazard] = []
    for k, t in enumerate(tokens):
        if t.kind == "punct" and t.text == "#":
            out.append(Hazard(t.start, t.end, "#", "'#' starts a preprocessor directive or is a stray token"))
        elif t.kind == "punct" and t.text == "%" and k + 1 < len(tokens) and _adjacent(t, tokens[k + 1], ":"):
            out.append(Hazard(t.start, t.end + 1, "%:", "'%:' is the digraph of '#' (a preprocessor directive)"))
        elif t.kind == "punct" and t.text == "?" and (m := _TRIGRAPH.match(formula, t.start)) is not None:
            out.append(
                Hazard(t.start, m.end(), m.group(), f"'{m.group()}' is a trigraph (of a preprocessor character)")
            )
        elif t.kind == "ident" and t.text in DIRECTIVE_WORDS:
            what = "an assembler statement (it can read files)" if "asm" in t.text else "a pragma in operator form"
            out.append(Hazard(t.start, t.end, t.text, f"'{t.text}' is {what}"))
    return out


def _adjacent(t: Token, after: Token, text: str) -> bool:
    return after.kind == "punct" and after.text.startswith(text) and after.start == t.end


__all__ = ["DIRECTIVE_WORDS", "Hazard", "hazards", "hazards_in"]
