"""A C++ tokenizer for formula text: each token with its offsets in the formula.

Kinds: "ident", "number", "string", "char", "punct" (operators and brackets; `::`, `->` and the
other multi-character operators are one token). Unterminated literals and unbalanced brackets are
reported as `Problem`s; tokenizing never fails.

It reads literals as a C++20 compiler does, so that no literal can hide text from the directive gate
(directives.py, compile/safety.py): raw strings with every encoding prefix (`R"x(…)x"`, `u8R`, `uR`, `UR`,
`LR`; a `R"` whose delimiter is not valid swallows the rest as an unterminated literal), a digit separator
only before a digit or a letter (`1'000`; the `'` of `1'"` starts a character literal), the digraphs as
one token each (`<%` `%>` `<:` `:>` are brackets, `%:` and `%:%:` are `#` and `##`; `<::` is `<` `::`
unless a `:` or `>` follows). A trigraph (`??=`) and a backslash outside a literal (a line splice, a
universal character name) are left as they are: the gate refuses them, it never needs to read past them.
"""

from __future__ import annotations

import re

from derivls.base.frozen import frozen_dataclass

_PUNCT4 = ("%:%:",)
_PUNCT3 = ("<<=", ">>=", "...", "->*")
_PUNCT2 = (
    "::",
    "->",
    "==",
    "!=",
    "<=",
    ">=",
    "&&",
    "||",
    "<<",
    ">>",
    "++",
    "--",
    "+=",
    "-=",
    "*=",
    "/=",
    "%=",
    "&=",
    "|=",
    "^=",
    ".*",
    "%:",
    "<%",
    "%>",
    ":>",
)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}
DIGRAPHS = {"<%": "{", "%>": "}", "<:": "[", ":>": "]", "%:": "#", "%:%:": "##"}


@frozen_dataclass
class Token:
    kind: str
    text: str
    start: int
    end: int


@frozen_dataclass
class Problem:
    code: str  # "unbalanced-bracket" | "unterminated-literal"
    message: str
    start: int
    end: int


_OPS = "|".join(re.escape(op) for op in _PUNCT4 + _PUNCT3 + _PUNCT2) + r"|<:(?!:(?![:>]))"
# One pass of one regex (this runs on every formula of every entry): comments, literals (with an
# encoding prefix), identifiers, numbers, multi-character operators, any other character.
_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<open_comment>/\*)"
    r'|(?P<raw>(?:u8|u|U|L)?R"(?P<delimiter>[^ ()\\\t\v\f\n\r"]{0,16})\(.*?\)(?P=delimiter)")'
    r'|(?P<string>(?:u8|u|U|L)?"(?:[^"\\]|\\.)*")'
    r"|(?P<char>(?:u8|u|U|L)?'(?:[^'\\]|\\.)*')"
    r"|(?P<open_literal>(?:u8|u|U|L)?(?:R\"|[\"']))"
    r"|(?P<ident>[A-Za-z_]\w*)"
    r"|(?P<number>(?:\d|\.\d)(?:[eEpP][+-]|'[A-Za-z0-9_]|[\w.])*)"
    rf"|(?P<punct>{_OPS}|.)",
    re.S,
)


def tokenize(text: str) -> tuple[list[Token], list[Problem]]:
    tokens: list[Token] = []
    problems: list[Problem] = []
    append = tokens.append
    for m in _TOKEN.finditer(text):
        kind = m.lastgroup
        if kind == "space" or kind == "comment":
            continue
        if kind == "raw":
            kind = "string"
        start = m.start()
        if kind == "open_comment":
            problems.append(
                Problem("unterminated-literal", "This comment is never closed (missing '*/').", start, len(text))
            )
            break
        if kind == "open_literal":
            quote = m.group()[-1]
            what = "string" if quote == '"' else "character"
            problems.append(
                Problem(
                    "unterminated-literal", f"This {what} literal is never closed (missing {quote}).", start, len(text)
                )
            )
            append(Token("string" if quote == '"' else "char", text[start:], start, len(text)))
            break
        append(Token(kind, m.group(), start, m.end()))  # type: ignore[arg-type]
    brackets = _bracket_problems(tokens)
    if problems:  # an unclosed literal swallowed the rest of the formula: its brackets are not judged
        cut = min(p.start for p in problems)
        brackets = [b for b in brackets if b.start > cut and "never closed" not in b.message]
    problems.extend(brackets)
    return tokens, problems


def _bracket(t: Token) -> str:
    """A punctuator's text, a digraph as the bracket it spells."""
    return DIGRAPHS.get(t.text, t.text)


def _bracket_problems(tokens: list[Token]) -> list[Problem]:
    stack: list[tuple[Token, str]] = []
    problems = []
    for t in tokens:
        if t.kind != "punct":
            continue
        text = _bracket(t)
        if text in _OPEN:
            stack.append((t, text))
        elif text in _CLOSE:
            if stack and stack[-1][1] == _CLOSE[text]:
                stack.pop()
            elif stack:
                opened, bracket = stack.pop()
                problems.append(
                    Problem(
                        "unbalanced-bracket",
                        f"'{t.text}' closes '{opened.text}', which expects '{_OPEN[bracket]}'.",
                        t.start,
                        t.end,
                    )
                )
            else:
                problems.append(
                    Problem("unbalanced-bracket", f"'{t.text}' has no matching '{_CLOSE[text]}'.", t.start, t.end)
                )
    for t, bracket in stack:
        problems.append(
            Problem("unbalanced-bracket", f"'{t.text}' is never closed (missing '{_OPEN[bracket]}').", t.start, t.end)
        )
    return problems


def matching_brackets(tokens: list[Token]) -> dict[int, int]:
    """Index of each opening bracket token → index of its closing one (balanced pairs only)."""
    stack: list[tuple[int, str]] = []
    pairs: dict[int, int] = {}
    for i, t in enumerate(tokens):
        if t.kind != "punct":
            continue
        text = _bracket(t)
        if text in _OPEN:
            stack.append((i, text))
        elif text in _CLOSE and stack and stack[-1][1] == _CLOSE[text]:
            pairs[stack.pop()[0]] = i
    return pairs


def top_level(tokens: list[Token]) -> list[int]:
    """Indexes of the tokens outside any bracket (brackets themselves left out)."""
    out: list[int] = []
    depth = 0
    for j, t in enumerate(tokens):
        text = _bracket(t) if t.kind == "punct" else ""
        if text in _OPEN:
            depth += 1
        elif text in _CLOSE:
            depth -= 1
        elif depth == 0:
            out.append(j)
    return out
