"""Text of a formula that would be a preprocessor directive, a pragma or assembler if it reached a compiler.

torchgen pastes a formula verbatim into generated C++: after a line break, `#include "/etc/passwd"` (or its
digraph `%:include`, its trigraph `??=include`) is a directive; `_Pragma("...")` is one in operator form,
`asm(".include ...")` makes the assembler read a file, a backslash outside a literal joins lines (`_Pra`,
a backslash, a line break, `gma`). No formula needs any of them. `hazards(formula)` finds them outside string
and character literals (raw strings included: tokens.py reads them as the compiler does), a trigraph in a
literal too; formula-context reports them, and derivls's compile and gradcheck refuse a unit that holds one
(compile/safety.py).
"""

from __future__ import annotations

import bisect
import re

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas.tokens import Token, tokenize

DIRECTIVE_WORDS = frozenset({"_Pragma", "__pragma", "asm", "__asm", "__asm__"})
_TRIGRAPH = re.compile(r"\?\?[=/'()!<>\-]")
_MAYBE = re.compile(r"#|%:|\?\?|\\|_Pragma|__pragma|\b(?:__)?asm(?:__)?\b")


@frozen_dataclass
class Hazard:
    start: int
    end: int
    text: str
    message: str


def hazards(formula: str) -> list[Hazard]:
    """The directive-like text of `formula` (module doc), in order."""
    if _MAYBE.search(formula) is None:
        return []
    tokens, _ = tokenize(formula)
    return hazards_in(formula, tokens)


def hazards_in(formula: str, tokens: list[Token]) -> list[Hazard]:
    """Outside literals: `#` and its digraphs, a backslash (a line splice, a universal character name),
    `_Pragma`, `asm`; outside comments, literals included: a trigraph (a compiler that reads them, `??/` a backslash,
    would end a literal elsewhere than the tokenizer does)."""
    out: list[Hazard] = []
    for t in tokens:
        if t.kind == "punct" and t.text == "#":
            out.append(Hazard(t.start, t.end, "#", "'#' starts a preprocessor directive or is a stray token"))
        elif t.kind == "punct" and t.text in ("%:", "%:%:"):
            out.append(Hazard(t.start, t.start + 2, "%:", "'%:' is the digraph of '#' (a preprocessor directive)"))
        elif t.kind == "punct" and t.text == "\\":
            out.append(
                Hazard(t.start, t.end, "\\", "a backslash outside a literal joins lines or spells a name in escapes")
            )
        elif t.kind == "ident" and t.text in DIRECTIVE_WORDS:
            what = "an assembler statement (it can read files)" if "asm" in t.text else "a pragma in operator form"
            out.append(Hazard(t.start, t.end, t.text, f"'{t.text}' is {what}"))
    if "??" in formula:
        starts = [t.start for t in tokens]
        for m in _TRIGRAPH.finditer(formula):
            k = bisect.bisect_right(starts, m.start()) - 1
            if k < 0 or tokens[k].end <= m.start():
                continue  # (in a comment: between tokens)
            out.append(
                Hazard(m.start(), m.end(), m.group(), f"'{m.group()}' is a trigraph (of a preprocessor character)")
            )
        out.sort(key=lambda h: h.start)
    return out


__all__ = ["DIRECTIVE_WORDS", "Hazard", "hazards", "hazards_in"]
