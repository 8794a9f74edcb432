"""operators.py on its own: which operands C++ precedence makes certain, and which pairs no operator takes.

Operands are typed by name here (a stand-in for resolve._argument_kind): `t*` a Tensor, `s*` a c10::Scalar,
`n*` and literals a number, `o*` a std::optional<double>, `l*` an int list; anything else is not typed.
"""

from __future__ import annotations

from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.operators import unconvertible_conditions, unmatched_operations
from derivls.derivatives.formulas.tokens import matching_brackets, tokenize

FAMILIES = {
    "t": (argtypes.TENSOR, "at::Tensor"),
    "s": (argtypes.SCALAR, "c10::Scalar"),
    "n": (argtypes.NUMBER, "double"),
    "o": (argtypes.OPTIONAL_NUMBER, "std::optional<double>"),
    "l": (argtypes.INT_LIST, "at::IntArrayRef"),
}


def judged(formula: str, conditions: bool = False) -> list[str]:
    """The text of each unmatched operation (`left op right`), or of each operand that is no condition."""
    tokens, _ = tokenize(formula)

    def kind(start: int, end: int):
        if end - start != 1:
            return None
        t = tokens[start]
        if t.kind == "number":
            return argtypes.NUMBER, "a number", t.text == "0"
        family = FAMILIES.get(t.text[0]) if t.kind == "ident" else None
        return (*family, False) if family else None

    pairs = matching_brackets(tokens)
    if conditions:
        return [formula[tokens[c.span[0]].start : tokens[c.span[1] - 1].end] for c in
                unconvertible_conditions(tokens, pairs, kind)]  # fmt: skip
    return [
        formula[tokens[o.left[0]].start : tokens[o.right[1] - 1].end] for o in unmatched_operations(tokens, pairs, kind)
    ]


def test_a_scalar_beside_a_tensor_is_matched_beside_anything_else_not():
    assert judged("t1 * s1 + s1 * t1 - t1 / s1") == []
    assert judged("s1 + 1") == ["s1 + 1"]
    assert judged("n1 < s1") == ["n1 < s1"]
    assert judged("s1 * s2") == ["s1 * s2"]
    assert judged("s1 == 0") == []  # the literal 0 (a null pointer constant) is not judged


def test_an_optional_or_a_list_takes_no_arithmetic_but_compares():
    assert judged("t1 * o1") == ["t1 * o1"]
    assert judged("l1 + n1") == ["l1 + n1"]
    assert judged("o1 > n1 ? t1 : t2") == []
    assert judged("l1 == l2 ? t1 : t2") == []


def test_an_operand_is_judged_only_when_precedence_makes_it_all_of_its_side():
    assert judged("t1 * s1 * s2") == []  # (t1 * s1) * s2: a Tensor times a Scalar
    assert judged("s1 * s2 * t1") == ["s1 * s2"]
    assert judged("t1 + s1 * 2") == ["s1 * 2"]  # * binds tighter
    assert judged("s1 * 2 + t1") == ["s1 * 2"]
    assert judged("t1 + s1 + 2") == []  # (t1 + s1) + 2
    assert judged("2 < s1 * t1") == []  # 2 < (s1 * t1): a Tensor
    assert judged("x * s1 + 2") == []  # x is not typed: x * s1 is unknown, and so is its sum


def test_brackets_negation_and_casts():
    assert judged("t1 * (s1 - 1)") == ["s1 - 1"]
    assert judged("(s1 - 1) * t1") == ["s1 - 1"]
    assert judged("-s1 * t1") == []
    assert judged("-s1 * 2") == ["-s1 * 2"]
    assert judged("(double)s1 * 2") == []  # a cast's operand is not all of its side
    assert judged("f(s1) * 2 + g(s1 + 2)") == ["s1 + 2"]


def test_a_tensor_a_scalar_or_a_list_is_no_condition():
    assert judged("t1 ? t1 : t2", conditions=True) == ["t1"]
    assert judged("!s1 || l1 && n1", conditions=True) == ["s1", "l1"]
    assert judged("o1 ? n1 : n2", conditions=True) == []  # std::optional's explicit operator bool
    assert judged("n1 > 0 ? t1 : t2", conditions=True) == []  # the condition is an operation: not judged
