"""Binary operators whose operands have no operator between them (formula-operand-type).

A formula is C++: `1 - weight` where `weight` is a `Scalar` argument does not compile, because
c10::Scalar has no arithmetic or comparison operators of its own (only at::Tensor's operators take one,
beside a Tensor), and a std::optional or a list has no arithmetic operators at all. Python habits make
these easy to write (`other > 0.` for `other.toDouble() > 0.`, `grad * eps` for an `eps` that is a
`float?`).

Only operations whose two operands are certain are judged: `a op b` where `a` and `b` are postfix
expressions (a name, a literal, a call, a member, a subscript, a parenthesized expression, maybe
negated) and the operators around them bind less tightly than `op` (so `a * b` in `x + a * b` is judged,
`x * a` in `x * a * b` is judged too, `a * b` in `x * a * b` is not: its left operand is `x * a`).
The operands' types are the caller's (`kind`: see exprtypes._argument_kind); an operand it cannot type is
never judged.
"""

from __future__ import annotations

from collections.abc import Callable

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.tokens import Token

# C++ precedence of the binary operators (higher binds tighter); judged: the arithmetic and comparison ones.
_PRECEDENCE = {
    "*": 13, "/": 13, "%": 13,
    "+": 12, "-": 12,
    "<<": 11, ">>": 11,
    "<": 9, ">": 9, "<=": 9, ">=": 9,
    "==": 8, "!=": 8,
    "&": 7, "^": 6, "|": 5, "&&": 4, "||": 3,
}  # fmt: skip
ARITHMETIC = frozenset("+ - * /".split())
COMPARISON = frozenset("< > <= >= == !=".split())
# What may stand before an operand that is all of the left side: an opening bracket, a separator, the start.
_OPENS = frozenset({"(", "[", "{", ",", "?", ":", ";", "=", "return"})
# What may follow an operand that is all of the right side (besides a binary operator of lower precedence).
_CLOSES = frozenset({")", "]", "}", ",", "?", ":", ";"})
_ENDS_AN_OPERAND = frozenset({"ident", "number", "string", "char"})
_OPTIONALS = frozenset(
    {
        argtypes.OPTIONAL,
        argtypes.OPTIONAL_NUMBER,
        argtypes.OPTIONAL_STRING,
        argtypes.OPTIONAL_VALUE,
        argtypes.OPTIONAL_TENSOR,
    }
)
# no arithmetic operators at all: a std::optional, a list
_NO_ARITHMETIC = _OPTIONALS | {argtypes.INT_LIST, argtypes.SYMINT_LIST, argtypes.TENSOR_LIST}

# the families an operand of an unmatched operation has (one side at least)
CULPRITS = _NO_ARITHMETIC | {argtypes.SCALAR}

Kind = tuple[str, str, bool]  # (argtypes family, the C++ type to name, whether it is the literal 0)


@frozen_dataclass
class Operation:
    """`tokens[left[0]:left[1]] tokens[op] tokens[right[0]:right[1]]`, which no operator takes; `culprit` is
    the side (0 left, 1 right) whose type has no such operator."""

    op: int
    left: tuple[int, int]
    right: tuple[int, int]
    kinds: tuple[Kind, Kind]
    culprit: int
    reason: str


def unmatched_operations(
    tokens: list[Token], pairs: dict[int, int], kind: Callable[[int, int], Kind | None]
) -> list[Operation]:
    """The judged binary operations of a formula's tokens that no operator takes (see the module's doc);
    `pairs`: tokens.matching_brackets."""
    found: list[Operation] = []
    b = Brackets(pairs)
    for j, t in enumerate(tokens):
        if t.kind != "punct" or (t.text not in ARITHMETIC and t.text not in COMPARISON) or not _binary(tokens, j):
            continue
        precedence = _PRECEDENCE[t.text]
        left = _left_operand(tokens, b, j, precedence)
        right = _right_operand(tokens, b, j, precedence) if left is not None else None
        if left is None or right is None:
            continue
        first, second = _typed(tokens, b, left, kind), _typed(tokens, b, right, kind)
        if first is None or second is None:
            continue
        problem = _problem(t.text, first, second)
        if problem is not None:
            culprit, reason = problem
            found.append(Operation(j, left, right, (first, second), culprit, reason))
    return found


class Brackets:
    """Balanced bracket pairs both ways (unbalanced ones have no entry: what they hold is not judged)."""

    def __init__(self, pairs: dict[int, int]) -> None:
        self.closing = pairs
        self.opening = {close: open_ for open_, close in pairs.items()}


def _problem(op: str, a: Kind, b: Kind) -> tuple[int, str] | None:
    for side, (family, cpp_type, _) in enumerate((a, b)):
        if op in ARITHMETIC and family in _NO_ARITHMETIC:
            what = "a std::optional: take its value first" if family in _OPTIONALS else "a list"
            return side, f"{cpp_type} has no arithmetic operators ({what})"
    for side, (family, _, _) in enumerate((a, b)):
        other = (b, a)[side]
        if family == argtypes.SCALAR and other[0] != argtypes.TENSOR and not other[2]:
            return side, (
                "c10::Scalar has no arithmetic or comparison operators of its own, only at::Tensor's take one (beside a "
                "Tensor): convert it first (`.toDouble()`, `.to<int64_t>()`…)"
            )
    return None


def _binary(tokens: list[Token], j: int) -> bool:
    """Whether the operator tokens[j] is binary: it follows what ends an operand."""
    if j == 0 or j + 1 >= len(tokens):
        return False
    before = tokens[j - 1]
    return (before.kind in _ENDS_AN_OPERAND and before.text != "return") or before.text in (")", "]")


def _left_operand(tokens: list[Token], b: Brackets, j: int, precedence: int) -> tuple[int, int] | None:
    """The range of the operand before tokens[j] when it is all of the left side; None when unsure."""
    start = postfix_start(tokens, b, j - 1)
    if start is None:
        return None
    if start > 0 and tokens[start - 1].text == "-" and not _binary(tokens, start - 1):
        start -= 1  # a negated operand (unary minus binds tighter than any binary operator)
    if start == 0:
        return start, j
    before = tokens[start - 1]
    if before.text in _OPENS:
        return start, j
    other = _PRECEDENCE.get(before.text) if before.kind == "punct" else None
    if other is not None and other < precedence and _binary(tokens, start - 1):
        return start, j
    return None


def _right_operand(tokens: list[Token], b: Brackets, j: int, precedence: int) -> tuple[int, int] | None:
    """The range of the operand after tokens[j] when it is all of the right side; None when unsure."""
    start = j + 1
    if tokens[start].text == "-" and tokens[start].kind == "punct":
        start += 1  # negated
    end = postfix_end(tokens, b, start)
    if end is None or end == start:
        return None
    if end == len(tokens):
        return j + 1, end
    after = tokens[end]
    if after.text in _CLOSES:
        return j + 1, end
    other = _PRECEDENCE.get(after.text) if after.kind == "punct" else None
    if other is not None and other <= precedence:
        return j + 1, end
    return None


def postfix_start(tokens: list[Token], b: Brackets, last: int) -> int | None:
    """Where the postfix expression (`a`, `a.b(c)[d]`, `(…)`, `at::f(x)`) ending at tokens[last] starts."""
    k = last
    while k >= 0:
        t = tokens[k]
        if t.kind == "punct" and t.text in (")", "]"):
            k = b.opening.get(k, -1)
            if k < 0:
                return None
            if k > 0 and (tokens[k - 1].kind == "ident" or tokens[k - 1].text in (")", "]")):
                k -= 1  # a call or a subscript: its callee or list before it
                continue
        elif t.kind not in _ENDS_AN_OPERAND:
            return None
        if k >= 2 and tokens[k - 1].text in (".", "->", "::") and tokens[k - 1].kind == "punct":
            k -= 2
            continue
        return k
    return None


def postfix_end(tokens: list[Token], b: Brackets, first: int) -> int | None:
    """Where (exclusive) the postfix expression starting at tokens[first] ends."""
    k = first
    if k >= len(tokens):
        return None
    t = tokens[k]
    if t.kind == "punct" and t.text == "(":
        k = b.closing.get(k, -1)
        if k < 0:
            return None
    elif t.kind not in _ENDS_AN_OPERAND:
        return None
    k += 1
    while k < len(tokens):
        t = tokens[k]
        if t.kind == "punct" and t.text in ("(", "["):
            k = b.closing.get(k, -1)
            if k < 0:
                return None
            k += 1
        elif (
            t.kind == "punct" and t.text in (".", "->", "::") and k + 1 < len(tokens) and tokens[k + 1].kind == "ident"
        ):
            k += 2
        else:
            break
    return k


def _typed(
    tokens: list[Token], b: Brackets, span: tuple[int, int], kind: Callable[[int, int], Kind | None]
) -> Kind | None:
    start, end = span
    if tokens[start].text == "-" and tokens[start].kind == "punct":
        if end - start == 2 and tokens[start + 1].kind == "number":
            return kind(start, end)
        start += 1  # -x has x's type (c10::Scalar has a unary minus; std::optional and lists have none)
        inner = kind(start, end)
        return None if inner is None or inner[0] in _NO_ARITHMETIC else inner
    if end - start >= 3 and tokens[start].text == "(" and b.closing.get(start) == end - 1:
        return _typed(tokens, b, (start + 1, end - 1), kind)
    return kind(start, end)


# What does not convert to bool, even contextually (at::Tensor, c10::Scalar, ArrayRef and std::vector have no
# `operator bool`; std::optional's is explicit, which a condition may use; numbers and pointers convert)
_NOT_BOOL = frozenset({argtypes.TENSOR, argtypes.SCALAR, argtypes.INT_LIST, argtypes.SYMINT_LIST, argtypes.TENSOR_LIST})


@frozen_dataclass
class Condition:
    """tokens[span[0]:span[1]] stands where C++ wants a bool (a `?:`'s condition, `!`'s, `&&`'s or `||`'s
    operand) and its type (`kind`) has no conversion to bool."""

    span: tuple[int, int]
    kind: Kind


def unconvertible_conditions(
    tokens: list[Token], pairs: dict[int, int], kind: Callable[[int, int], Kind | None]
) -> list[Condition]:
    """The operands of a formula that must convert to bool and cannot (Python's truthiness: `grad ? a : b`,
    `!self`, `grad && x`). Only operands that are all of their side (see the module's doc) are judged."""
    b = Brackets(pairs)
    spans: list[tuple[int, int]] = []
    for j, t in enumerate(tokens):
        if t.kind != "punct":
            continue
        if t.text == "?" and j > 0:
            start = postfix_start(tokens, b, j - 1)
            if start is not None and (start == 0 or tokens[start - 1].text in _OPENS):
                spans.append((start, j))
        elif t.text == "!" and j + 1 < len(tokens):
            end = postfix_end(tokens, b, j + 1)
            if end is not None:
                spans.append((j + 1, end))
        elif t.text in ("&&", "||") and _binary(tokens, j):
            precedence = _PRECEDENCE[t.text]
            for side in (_left_operand(tokens, b, j, precedence), _right_operand(tokens, b, j, precedence)):
                if side is not None:
                    spans.append(side)
    found = []
    for span in dict.fromkeys(spans):
        k = _typed(tokens, b, span, kind)
        if k is not None and k[0] in _NOT_BOOL:
            found.append(Condition(span, k))
    return found
