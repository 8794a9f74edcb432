"""The `--context` campaign's edits (tests/formulas/mutations.py draws them): a formula's text changed into a
shape its place in the generated C++ may not hold (derivatives/formulas/rules/context.py), as a contributor's habits
from C++ statements and from Python write it.

    context-terminator  a statement's ';' after the formula                 f(x)          -> f(x);
    context-separator   ';' for the ',' between a call's arguments           f(a, b)       -> f(a; b)
    context-statement   a statement keyword or declaration before it         f(x)          -> return f(x);
                                                                             f(x)          -> auto g = f(x)
    context-comma       a top-level comma: a tuple's elements bare, or a     std::make_tuple(a, b) -> a, b
                        second value                                         f(x)          -> f(x), self
    context-python-end  Python at the end: a one-element tuple, a line       f(x)          -> f(x),
                        continuation, a comment                              f(x)          -> f(x) \\
                                                                             f(x)          -> f(x)  # why
(a `# comment` after a space is YAML's comment in a plain scalar: YAML drops it, and both judges accept it.)
"""

from __future__ import annotations

import random
from collections.abc import Callable

from derivls.derivatives.formulas.tokens import Token, matching_brackets, top_level

CONTEXT_KINDS = ("context-terminator", "context-separator", "context-statement", "context-comma", "context-python-end")

_Edit = tuple[int, int, Callable[[str, random.Random], str]]
_TUPLES = ("make_tuple", "forward_as_tuple", "tuple")


def context_sites(value: str, tokens: list[Token], arguments: list[str]) -> dict[str, list[_Edit]]:
    if not tokens:
        return {}
    pairs = matching_brackets(tokens)
    end = len(value)
    sites: dict[str, list[_Edit]] = {k: [] for k in CONTEXT_KINDS}
    sites["context-terminator"].append((end, end, lambda _w, _r: ";"))
    for open_, close in pairs.items():
        if tokens[open_].text != "(" or not open_ or tokens[open_ - 1].kind != "ident":
            continue
        depth = 0
        for j in range(open_ + 1, close):
            t = tokens[j]
            if t.text in "([{":
                depth += 1
            elif t.text in ")]}":
                depth -= 1
            elif t.text == "," and depth == 0:
                sites["context-separator"].append((t.start, t.end, lambda _w, _r: ";"))
    sites["context-statement"].append(
        (0, end, lambda w, r: r.choice(("return {};", "return {}", "auto value = {}")).format(w))
    )
    top = top_level(tokens)
    if len(tokens) > 5 and [t.text for t in tokens[:2]] == ["std", "::"] and tokens[2].text in _TUPLES:
        if tokens[3].text == "(" and pairs.get(3) == len(tokens) - 1:  # std::make_tuple(a, b) -> a, b
            inner = value[tokens[3].end : tokens[-1].start].strip()
            sites["context-comma"].append((0, end, lambda _w, _r, x=inner: x))
    if not any(tokens[j].text == "," for j in top):
        names = arguments or ["grad"]
        sites["context-comma"].append((end, end, lambda _w, r, n=names: ", " + r.choice(n)))
    sites["context-python-end"].append((end, end, lambda _w, r: r.choice((",", " \\", "  # the gradient"))))
    return {k: v for k, v in sites.items() if v}
