"""Python written where C++ is compiled (formula-python-syntax).

Formulas are C++ expressions, and their authors write Python all day. What Python reads one way and C++
another — or not at all — fails the build, often far from the formula:
- `a ** b`: C++ has no power operator; it reads `a * (*b)`, and neither a Tensor nor a number can be
  dereferenced;
- `a // b`: `//` starts a C++ comment that runs to the end of the line, so the generated code loses the rest
  of the formula and the `;` the template writes after it (only where no line break follows in the formula);
- `a if c else b`: C++ writes `c ? a : b` (`if` in an expression is only valid inside a lambda's body);
- `torch.f(…)`, `at.f`, `std.f`, `c10.f`, `math.f`: namespaces' members are named with `::` (`math.pi` is
  `M_PI`);
- `f(x, [0, 1])`: a list is braced in C++ (`{0, 1}`); `[` where an expression starts opens a lambda.

Each finding carries the fix where it is mechanical. Operand typing is the caller's (`kind`, as for
operators.py): `**` is judged only when what follows it is typed and is no pointer.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Container

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.operators import Brackets, Kind, postfix_end, postfix_start
from derivls.derivatives.formulas.tokens import Token, top_level

_NAMESPACES = {"torch": "at::", "at": "at::", "std": "std::", "c10": "c10::", "math": "std::"}
# Python's math constants, as C++ (<cmath>'s macros, <limits>)
_MATH_CONSTANTS = {"pi": "M_PI", "e": "M_E", "inf": "std::numeric_limits<double>::infinity()"}
_COMMENTS_AND_LITERALS = re.compile(r'//[^\n]*|/\*.*?\*/|"(?:[^"\\\n]|\\.)*"|\'(?:[^\'\\\n]|\\.)*\'', re.S)


@frozen_dataclass
class Slip:
    """A Python construct at formula[start:end]; `fix`: (title, start, end, replacement) or None."""

    start: int
    end: int
    message: str
    fix: tuple[str, int, int, str] | None = None


def python_slips(
    formula: str,
    tokens: list[Token],
    pairs: dict[int, int],
    kind: Callable[[int, int], Kind | None],
    *own: Container[str],
) -> list[Slip]:
    """The Python constructs of a formula (see the module's doc). `own`: the names that are the formula's (its
    locals, its declarations: one named `std` is no namespace)."""
    slips = _line_comments(formula)
    b = Brackets(pairs)
    depth = 0  # of braces: a lambda's body holds statements
    for j, t in enumerate(tokens):
        if t.kind == "punct":
            if t.text == "{":
                depth += 1
            elif t.text == "}":
                depth -= 1
            elif t.text == "*" and j + 1 < len(tokens) and tokens[j + 1].text == "*" and tokens[j + 1].start == t.end:
                slips.extend(_power(formula, tokens, b, j, kind))
            elif t.text == "[" and j in pairs and (slip := _list(formula, tokens, pairs, j)) is not None:
                slips.append(slip)
            continue
        if t.kind != "ident":
            continue
        if t.text == "if" and depth == 0:
            slips.append(_conditional(formula, tokens, j))
        elif j + 2 < len(tokens) and tokens[j + 1].text == "." and names_a_namespace(tokens, j, *own):
            qualifier, member = _NAMESPACES[t.text], tokens[j + 2]
            constant = _MATH_CONSTANTS.get(member.text) if t.text == "math" else None
            if constant is not None:
                message = f"'math.{member.text}' is Python: C++ writes '{constant}'."
                fix = (f"Use '{constant}'", t.start, member.end, constant)
            else:
                message = (
                    f"'{t.text}.' is Python: C++ names a namespace's members with '::' (write "
                    f"'{qualifier}{member.text}')."
                )
                fix = (f"Use '{qualifier}'", t.start, tokens[j + 1].end, qualifier)
            slips.append(Slip(t.start, t.end, message, fix))
    return slips


def names_a_namespace(tokens: list[Token], j: int, *own: Container[str]) -> bool:
    """Whether tokens[j] is a namespace's name (torch, at, std, c10, math) followed by `.` and a name: not a member
    (`x.std`), not a name the formula has (`own`: its locals, its declarations)."""
    t = tokens[j]
    return (
        t.kind == "ident"
        and t.text in _NAMESPACES
        and not any(t.text in names for names in own)
        and j + 2 < len(tokens)
        and tokens[j + 1].text == "."
        and tokens[j + 2].kind == "ident"
        and (j == 0 or tokens[j - 1].text not in (".", "->", "::"))
    )


def _line_comments(formula: str) -> list[Slip]:
    if "//" not in formula:
        return []
    slips = []
    for m in _COMMENTS_AND_LITERALS.finditer(formula):
        if m.group().startswith("//") and "\n" not in formula[m.end() :]:
            slips.append(
                Slip(
                    m.start(),
                    m.start() + 2,
                    "'//' starts a C++ comment that runs to the end of the line: the generated code loses the rest "
                    "of the formula and the ';' after it. (Python's floor division? '/' of two integers truncates; "
                    'for Tensors, at::floor_divide or div(…, "floor").)',
                    ("Use '/'", m.start(), m.start() + 2, "/"),
                )
            )
    return slips


def _power(
    formula: str, tokens: list[Token], b: Brackets, j: int, kind: Callable[[int, int], Kind | None]
) -> list[Slip]:
    """`a ** b`: tokens[j] and tokens[j + 1] are the two `*`."""
    end = postfix_end(tokens, b, j + 2)
    right = kind(j + 2, end) if end is not None else None
    if right is None or right[0] == argtypes.STRING:
        return []  # `*b` may be a dereference of a pointer after all
    start = postfix_start(tokens, b, j - 1) if j > 0 else None
    left = kind(start, j) if start is not None else None
    fix = None
    if start is not None and end is not None and left is not None:
        a, c = formula[tokens[start].start : tokens[j - 1].end], formula[tokens[j + 2].start : tokens[end - 1].end]
        if left[0] == argtypes.TENSOR:
            fix = (f"Use '{a}.pow({c})'", tokens[start].start, tokens[end - 1].end, f"{a}.pow({c})")
        elif left[0] == argtypes.NUMBER and right[0] == argtypes.NUMBER:
            fix = (f"Use 'std::pow({a}, {c})'", tokens[start].start, tokens[end - 1].end, f"std::pow({a}, {c})")
    return [
        Slip(
            tokens[j].start,
            tokens[j + 1].end,
            "C++ has no power operator: 'a ** b' reads 'a * (*b)', and "
            f"{right[1]} cannot be dereferenced. Use pow: 'a.pow(b)' for a Tensor, 'std::pow(a, b)' for numbers.",
            fix,
        )
    ]


# what follows a lambda's introducer `[…]`
_LAMBDA_AFTER = frozenset({"(", "{", "<", "mutable", "constexpr", "noexcept", "->"})


def _list(formula: str, tokens: list[Token], pairs: dict[int, int], j: int) -> Slip | None:
    """`[a, b]` where an expression starts (not a subscript) and no lambda follows: Python's list literal."""
    before = tokens[j - 1] if j else None
    if before is not None and (before.kind in ("ident", "number", "string", "char") or before.text in (")", "]")):
        return None  # a subscript (`auto [a, b]` too)
    close = pairs[j]
    if close + 1 < len(tokens) and tokens[close + 1].text in _LAMBDA_AFTER:
        return None
    inner = formula[tokens[j].end : tokens[close].start]
    return Slip(
        tokens[j].start,
        tokens[j].end,
        f"'[{inner}]' is Python's list: C++ reads '[' here as a lambda's start. A list argument is a braced list, "
        f"'{{{inner}}}'.",
        (f"Use '{{{inner}}}'", tokens[j].start, tokens[close].end, f"{{{inner}}}"),
    )


def _conditional(formula: str, tokens: list[Token], j: int) -> Slip:
    """`a if c else b` (tokens[j] is `if`, outside any braces); the fix rewrites it when it is the whole formula."""
    fix = None
    top = top_level(tokens)
    elses = [k for k in top if tokens[k].text == "else"]
    ifs = [k for k in top if tokens[k].text == "if"]
    if ifs == [j] and len(elses) == 1 and 0 < j < elses[0] - 1 < len(tokens) - 2:
        e = elses[0]
        a = formula[tokens[0].start : tokens[j - 1].end]
        c = formula[tokens[j + 1].start : tokens[e - 1].end]
        other = formula[tokens[e + 1].start : tokens[-1].end]
        text = f"{c} ? {a} : {other}"
        fix = (f"Use '{text}'", tokens[0].start, tokens[-1].end, text)
    return Slip(
        tokens[j].start,
        tokens[j].end,
        "'a if c else b' is Python: C++ writes the conditional expression 'c ? a : b'.",
        fix,
    )
