"""A C++ tokenizer for formula text: each token with its offsets in the formula.

Kinds: "ident", "number", "string", "char", "punct" (operators and brackets; `::`, `->` and the
other multi-character operators are one token). Unterminated literals and unbalanced brackets are
reported as `Problem`s; tokenizing never fails.
"""

from __future__ import annotations

from dataclasses import dataclass

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


@dataclass(frozen=True, slots=True)
class Token:
    kind: str
    text: str
    start: int
    end: int


@dataclass(frozen=True, slots=True)
class Problem:
    code: str  # "unbalanced-bracket" | "unterminated-literal"
    message: str
    start: int
    end: int


def _is_ident_start(c: str) -> bool:
    return c.isalpha() or c == "_"


def _is_ident_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def tokenize(text: str) -> tuple[list[Token], list[Problem]]:
    tokens: list[Token] = []
    problems: list[Problem] = []
    i, n = 0, len(text)
    while i < n:
        c = text[i]
        if c.isspace():
            i += 1
            continue
        if text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
            continue
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            if j < 0:
                problems.append(Problem("unterminated-literal", "This comment is never closed (missing '*/').", i, n))
                i = n
            else:
                i = j + 2
            continue
        if _is_ident_start(c):
            j = i + 1
            while j < n and _is_ident_char(text[j]):
                j += 1
            # a string literal's encoding prefix (u8"", L'') belongs to the literal
            if j < n and text[j] in "\"'" and text[i:j] in ("u8", "u", "U", "L", "R", "u8R", "uR", "UR", "LR"):
                i = _literal(text, i, j, tokens, problems)
                continue
            tokens.append(Token("ident", text[i:j], i, j))
            i = j
            continue
        if c.isdigit() or (c == "." and i + 1 < n and text[i + 1].isdigit()):
            j = i + 1
            while j < n and (
                _is_ident_char(text[j])
                or text[j] == "."
                or text[j] == "'"
                or (text[j] in "+-" and text[j - 1] in "eEpP" and not text[i:j].startswith("0x"))
            ):
                j += 1
            tokens.append(Token("number", text[i:j], i, j))
            i = j
            continue
        if c in "\"'":
            i = _literal(text, i, i, tokens, problems)
            continue
        for op in _PUNCT3 + _PUNCT2:
            if text.startswith(op, i):
                tokens.append(Token("punct", op, i, i + len(op)))
                i += len(op)
                break
        else:
            tokens.append(Token("punct", c, i, i + 1))
            i += 1
    brackets = _bracket_problems(tokens)
    if problems:  # an unclosed literal swallowed the rest of the formula: its brackets are not judged
        cut = min(p.start for p in problems)
        brackets = [b for b in brackets if b.start > cut and "never closed" not in b.message]
    problems.extend(brackets)
    return tokens, problems


def _literal(text: str, start: int, quote_at: int, tokens: list[Token], problems: list[Problem]) -> int:
    quote = text[quote_at]
    kind = "string" if quote == '"' else "char"
    j = quote_at + 1
    n = len(text)
    while j < n and text[j] != quote:
        j += 2 if text[j] == "\\" else 1
    if j >= n:
        what = "string" if quote == '"' else "character"
        problems.append(
            Problem("unterminated-literal", f"This {what} literal is never closed (missing {quote}).", start, n)
        )
        tokens.append(Token(kind, text[start:n], start, n))
        return n
    tokens.append(Token(kind, text[start : j + 1], start, j + 1))
    return j + 1


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
