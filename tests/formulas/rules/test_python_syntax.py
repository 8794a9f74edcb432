"""The rule in derivls/derivatives/formulas/rules/python_syntax.py, on the scope of real entries."""

from __future__ import annotations

from tests.formulas.rules.common import MAX_DIM, rewrites, where


def test_python_power_floor_division_conditional_and_namespace_dot_are_reported_with_their_cpp_spelling(
    scope_of, headers
):
    scope = scope_of(MAX_DIM, "self")
    assert rewrites("grad ** 2", scope, headers) == [("formula-python-syntax", "**", ["grad.pow(2)"])]
    assert rewrites("2 ** 3 * grad", scope, headers) == [("formula-python-syntax", "**", ["std::pow(2, 3)"])]
    assert rewrites("grad * 2 // 3", scope, headers) == [("formula-python-syntax", "//", ["/"])]
    assert rewrites("grad if keepdim else grad.neg()", scope, headers) == [
        ("formula-python-syntax", "if", ["keepdim ? grad : grad.neg()"])
    ]
    assert rewrites("torch.zeros_like(grad) + at.ones_like(grad)", scope, headers) == [
        ("formula-python-syntax", "torch", ["at::"]),
        ("formula-python-syntax", "at", ["at::"]),
    ]
    assert rewrites("math.pi * grad + math.sqrt(2.) * grad", scope, headers) == [
        ("formula-python-syntax", "math", ["M_PI"]),
        ("formula-python-syntax", "math", ["std::"]),
    ]
    assert rewrites("grad.sum([0, 1]) + at::zeros([2], grad.options())", scope, headers) == [
        ("formula-python-syntax", "[", ["{0, 1}"]),
        ("formula-python-syntax", "[", ["{2}"]),
    ]
    # C++ that looks alike: a comment the formula's own line break ends, a block comment, `if` in a lambda's body,
    # a dereference of what derivls does not type, a local named like a namespace's member
    assert where("grad // a comment\n * 2", scope, headers) == []
    assert where("grad * /*keepdim=*/2", scope, headers) == []
    assert where("fmap(grad, [&](const Tensor& t) { if (keepdim) { return t; } return t * 2; })", scope, headers) == []
    assert where("grad ** x", scope, headers) == [("formula-unknown-name", "x")]
    assert where("grads[0] * fmap(grads, [](const Tensor& t) { return t; })[0]", scope, headers) == []
    assert where("grad.std.sum()", scope, headers) == [("formula-member-not-called", "std")]  # a member, not std::
