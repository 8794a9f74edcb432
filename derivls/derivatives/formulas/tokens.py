"""A C++ tokenizer for formula text: each token with its offsets in the formula.

Kinds: "ident", "number", "string", "char", "punct" (operators and brackets; `::`, `->` and the
other multi-character operators are one token). Unterminated literals and unbalanced brackets are
reported as `Problem`s; tokenizing never fails.
"""

from __future__ import annotations

import re

from derivls.frozen import frozen_dataclass

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
)
_OPEN = {"(": ")", "[": "]", "{": "}"}
_CLOSE = {v: k for k, v in _OPEN.items()}


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


_OPS = "|".join(re.escape(op) for op in _PUNCT3 + _PUNCT2)
# One pass of one regex (this runs on every formula of every entry): comments, literals (with an
# encoding prefix), identifiers, numbers, multi-character operators, any other character.
_TOKEN = re.compile(
    r"(?P<space>\s+)"
    r"|(?P<comment>//[^\n]*|/\*.*?\*/)"
    r"|(?P<open_comment>/\*)"
    r'|(?P<string>(?:u8|u|U|L)?"(?:[^"\\]|\\.)*")'
    r"|(?P<char>(?:u8|u|U|L)?'(?:[^'\\]|\\.)*')"
    r"|(?P<open_literal>(?:u8|u|U|L)?[\"'])"
    r"|(?P<ident>[A-Za-z_]\w*)"
    r"|(?P<number>(?:\d|\.\d)(?:[eEpP][+-]|[\w.']|(?<=[eEpP])[+-])*)"
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


def _bracket_problems(tokens: list[Token]) -> list[Problem]:
    stack: list[Token] = []
    problems = []
    for t in tokens:
        if t.kind != "punct":
            continue
        if t.text in _OPEN:
            stack.append(t)
        elif t.text in _CLOSE:
            if stack and stack[-1].text == _CLOSE[t.text]:
                stack.pop()
            elif stack:
                opened = stack[-1]
                problems.append(
                    Problem(
                        "unbalanced-bracket",
                        f"'{t.text}' closes '{opened.text}', which expects '{_OPEN[opened.text]}'.",
                        t.start,
                        t.end,
                    )
                )
                stack.pop()
            else:
                problems.append(
                    Problem("unbalanced-bracket", f"'{t.text}' has no matching '{_CLOSE[t.text]}'.", t.start, t.end)
                )
    for t in stack:
        problems.append(
            Problem("unbalanced-bracket", f"'{t.text}' is never closed (missing '{_OPEN[t.text]}').", t.start, t.end)
        )
    return problems


def matching_brackets(tokens: list[Token]) -> dict[int, int]:
    """Index of each opening bracket token → index of its closing one (balanced pairs only)."""
    stack: list[int] = []
    pairs: dict[int, int] = {}
    for i, t in enumerate(tokens):
        if t.kind != "punct":
            continue
        if t.text in _OPEN:
            stack.append(i)
        elif t.text in _CLOSE and stack and tokens[stack[-1]].text == _CLOSE[t.text]:
            pairs[stack.pop()] = i
    return pairs


def top_level(tokens: list[Token]) -> list[int]:
    """Indexes of the tokens outside any bracket (brackets themselves left out)."""
    out: list[int] = []
    depth = 0
    for j, t in enumerate(tokens):
        if t.kind == "punct" and t.text in _OPEN:
            depth += 1
        elif t.kind == "punct" and t.text in _CLOSE:
            depth -= 1
        elif depth == 0:
            out.append(j)
    return out
