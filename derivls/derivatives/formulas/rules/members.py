"""formula-unknown-method and formula-member-not-called on a receiver whose type is known: `x.name(` /
`x->name(` that its type does not have, `x.name` without a call where `name` is a member function."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_MEMBER_NOT_CALLED,
    FORMULA_UNKNOWN_METHOD,
)
from derivls.derivatives.formulas.exprtypes import MEMBERS, _known_receiver, _saved_arrow
from derivls.derivatives.formulas.findings import ERROR, Finding, Rewrite, _closest
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import OPTIONAL_METHODS
from derivls.derivatives.formulas.scope import (
    ARRAYREF,
    OPTIONAL_TENSOR,
    OPTIONAL_VALUE,
    PRIMITIVE,
    SCALAR,
    TENSOR,
    VECTOR,
    Local,
    Scope,
)
from derivls.derivatives.formulas.tokens import Token


def _arrow_member(
    tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Finding | None:
    """`x->name`: on a forward formula's `Tensor?` argument (a std::optional) it reaches the Tensor, so `name`
    must be a Tensor method; a Tensor, a list, a Scalar or a number is not a pointer at all (a backward
    formula's `Tensor?` argument is unpacked into a Tensor). In a backward formula, `x->sym_sizes()` as that
    exact text is load_derivatives' to rewrite (saved.py: `x_sym_sizes_opt`), not judged."""
    if scope.backward and _saved_arrow(tokens, i):
        return None
    local = _known_receiver(tokens, i, scope, headers, declared)
    if local is None:
        return None
    holds, t, receiver = local.holds, tokens[i], local.name
    if holds == OPTIONAL_TENSOR and not headers.is_tensor_method(t.text, False):
        message = f"'{receiver}->' reaches the Tensor in the std::optional, and Tensor has no method '{t.text}'."
        cands = headers.tensor_method_names()
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, _closest(t.text, cands))
    if holds in (TENSOR, VECTOR, ARRAYREF, SCALAR, PRIMITIVE):
        message = f"'{receiver}' is not a pointer (it is a {_holds_what(holds)} here): use '{receiver}.{t.text}'."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, ())
    return None


def _described(local: Local) -> str:
    """What a VECTOR, ARRAYREF, SCALAR or OPTIONAL_VALUE local is, for a message."""
    if local.holds == VECTOR:
        return "a std::vector in a backward formula (what the node saves for it)"
    if local.holds == ARRAYREF:
        return f"a c10::ArrayRef in a forward formula (the kernel's {local.cpp_type or 'ArrayRef'})"
    if local.holds == OPTIONAL_VALUE:
        return f"a {local.cpp_type.removeprefix('::') or 'std::optional'} here"
    return "a c10::Scalar here"


def _holds_what(holds: str) -> str:
    return {
        TENSOR: "Tensor",
        VECTOR: "std::vector",
        ARRAYREF: "c10::ArrayRef",
        SCALAR: "c10::Scalar",
        PRIMITIVE: "number",
    }.get(holds, holds)


def _receiver_method(
    tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Finding | None:
    """`x.name` where `x` is a local whose type derivls knows exactly (scope.Local.holds) and that type has
    no member `name`: a Tensor that is not an optional, or a forward formula's `Tensor?` argument (a
    std::optional) used as a Tensor; also an element `x[...]` of a list whose elements derivls knows
    (see _element). Receivers that are other expressions, members or declared in the formula are not
    judged. (A `_foreach_` entry's formulas are judged like any other: torchgen writes them as they are,
    only `result` in a forward one that never indexes it becomes `result[i]`, and outputs are not judged
    in a forward formula.)"""
    local = _known_receiver(tokens, i, scope, headers, declared)
    if local is None:
        return _uncalled_method(tokens, i, headers)
    receiver, t = local.name, tokens[i]
    if local.holds == TENSOR:
        if headers.is_tensor_method(t.text, scope.backward):
            return _not_called(tokens, i, local)
        cands = headers.tensor_method_names()
        message = f"'{receiver}' is a Tensor here, and Tensor has no method '{t.text}'."
        if scope.backward and t.text in OPTIONAL_METHODS and local.kind != "result":
            message += (
                " In a backward formula an optional Tensor (Tensor?) is the saved Tensor, unpacked: undefined"
                f" when it was absent (test it with '{receiver}.defined()')."
            )
        rewrites: tuple[Rewrite, ...] = ()
        if t.text == "value" and [x.text for x in tokens[i + 1 : i + 3]] == ["(", ")"] and local.kind != "result":
            # a Tensor? in a backward formula is already the Tensor (undefined when absent)
            title = f"Remove '.value()' ('{receiver}' is a Tensor here)"
            rewrites = (Rewrite(title, tokens[i - 1].start, tokens[i + 2].end, ""),)
        suggestions = () if rewrites else _closest(t.text, cands)  # not `values()`: `.value()` was meant
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, suggestions, rewrites)
    if local.holds == PRIMITIVE:
        message = f"'{receiver}' is a {local.cpp_type or 'number'} here, which has no members."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, ())
    if local.holds in (VECTOR, ARRAYREF, SCALAR, OPTIONAL_VALUE):
        members = MEMBERS[local.holds]
        # (`x.sym_sizes()` of a list is saved by the codegen too, but computed by the kernel on its
        # ArrayRef, which has no such member either)
        if t.text in members:
            return _not_called(tokens, i, local)
        message = f"'{receiver}' is {_described(local)}, which has no member '{t.text}'."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, _closest(t.text, members))
    if t.text in OPTIONAL_METHODS:
        return _not_called(tokens, i, local)
    what = "a method" if headers.is_tensor_method(t.text, False) else "no method"
    message = (
        f"'{receiver}' is an optional Tensor (Tensor?) in a forward formula: a std::optional<at::Tensor>, "
        f"which has no member '{t.text}' (Tensor has {what} '{t.text}': call it through "
        f"'{receiver}->{t.text}' or '{receiver}.value().{t.text}')."
    )
    arrow = Rewrite(f"Use '{receiver}->{t.text}'", tokens[i - 1].start, t.end, f"->{t.text}")
    return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, (), (arrow,) if what == "a method" else ())


# Python's Tensor attributes that C++ spells otherwise (a method call)
PYTHON_ATTRIBUTES = {"shape": "sym_sizes()", "ndim": "dim()"}


def _not_called(tokens: list[Token], i: int, local: Local) -> Finding | None:
    """`x.name` not followed by a call, where `name` is a member function of what `x` holds: C++ has no
    properties (`self.numel`, `grad.dtype`); every member of the receivers derivls knows is a function."""
    what = {TENSOR: "an at::Tensor", OPTIONAL_TENSOR: "a std::optional<at::Tensor>"}.get(local.holds)
    return _uncalled(tokens, i, f"a member function of {what or _described(local)} ('{local.name}')")


# data members of a type a formula meets (std::pair's): `x.first` is no method named without a call
DATA_MEMBERS = frozenset({"first", "second"})


def _uncalled_method(tokens: list[Token], i: int, headers: HeaderIndex) -> Finding | None:
    """`(…).name` or `f(…).name` not followed by a call, on a receiver derivls does not type, where `name` is a
    method (headers.is_method: a Tensor's or a listed type's) and no data member: whatever the receiver is, C++
    has no properties."""
    if not headers.has_tensor_methods or not headers.native_complete:
        return None
    if tokens[i].text in DATA_MEMBERS or not headers.is_method(tokens[i].text):
        return None
    return _uncalled(tokens, i, "a method (at::Tensor has it, or a type a formula meets)")


def _uncalled(tokens: list[Token], i: int, what: str) -> Finding | None:
    """formula-member-not-called for the member tokens[i] (`what` it is), unless a call or template arguments follow."""
    if i + 1 < len(tokens) and tokens[i + 1].text in ("(", "<"):
        return None
    t = tokens[i]
    return Finding(
        FORMULA_MEMBER_NOT_CALLED,
        ERROR,
        t.start,
        t.end,
        f"'{t.text}' is {what}: C++ has no properties; call it, '.{t.text}()'.",
        rewrites=(Rewrite(f"Call '{t.text}()'", t.start, t.end, f"{t.text}()"),),
    )
