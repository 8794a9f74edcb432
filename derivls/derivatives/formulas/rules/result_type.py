"""formula-result-type: the formula's value where the generated code cannot take it (a tuple for one input,
a Tensor for several, a number for a Tensor output, a Tensor for a list output; see returns.py)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_RESULT_TYPE,
)
from derivls.derivatives.formulas import argtypes, returns
from derivls.derivatives.formulas.exprtypes import _argument_kind, _Calls, _known_receiver, _whole_call
from derivls.derivatives.formulas.findings import ERROR, Finding
from derivls.derivatives.formulas.scope import OPTIONAL_TENSOR, TENSOR, Scope


def _result_type(c: _Calls) -> list[Finding]:
    """The whole formula's value where the generated code cannot put it (derivatives/formulas/returns.py): a tuple
    for one input, a Tensor for several, a number for a Tensor output or a `_foreach_` function's element…
    (Not called for a conditional, nor for a `_foreach_` function's backward formula.)"""
    tokens, n = c.tokens, len(c.tokens)
    if n == 0:
        return []
    callee, shape = _whole_call(c)
    if shape is None and callee == 2:
        shape = _member_value(c, callee)
    if shape is None:  # (a call of no ATen operator or helper: a hand-written Tensor member, `x.sym_sizes()`)
        kind = _argument_kind(c, 0, n)
        if kind is None or kind[2]:
            return []  # not typed, or the literal 0
        shape = returns.of_family(kind[0], kind[1])
    if shape is None:
        return []
    start, end = (tokens[callee].start, tokens[callee].end) if callee is not None else (tokens[0].start, tokens[-1].end)
    if c.scope.foreach:  # a forward formula of one element: only a number is sure not to be a Tensor
        if shape.kind != returns.VALUE or len(c.scope.targets) != 1:
            return []
        element = (
            f"The forward formula for {c.scope.targets[0]} (one element of a `_foreach_` function's list) is "
            f"{returns.describe(shape)}: the VariableType kernel assigns it to "
            f"{c.scope.targets[0]}_new_fw_grad_opts[i], a std::optional<at::Tensor>."
        )
        return [Finding(FORMULA_RESULT_TYPE, ERROR, start, end, element)]
    output = None if c.scope.backward else c.scope.get(c.scope.targets[0])  # (a forward formula's one output)
    family = argtypes.category(output.cpp_type) if output is not None else None
    held = {argtypes.TENSOR: returns.TENSOR, argtypes.TENSOR_LIST: returns.LIST}.get(family or "")
    why = returns.problem(shape, c.scope.backward, c.scope.targets, held, _undefined_grad_wrapped(c))
    if why is None:
        return []
    return [Finding(FORMULA_RESULT_TYPE, ERROR, start, end, why)]


def _member_value(c: _Calls, callee: int) -> returns.Shape | None:
    """`x.f(…)` on a known Tensor where every member `f` (hand-written in TensorBody.h / TensorBase.h, or
    declared by torchgen for an operator) returns a value that is no Tensor (`dim`, `numel`, `is_complex`:
    written by hand, and operators too); None when one of them may be something else."""
    tokens = c.tokens
    if tokens[callee - 1].text != ".":
        return None
    receiver = _known_receiver(tokens, callee, c.scope, c.headers, c.declared)
    if receiver is None or receiver.holds != TENSOR:
        return None
    name = tokens[callee].text
    shapes: set[returns.Shape | None] = set()
    for member in c.headers.hand_written_members(name):
        written = member.returns.replace("at::", "")
        shapes.add(returns.of_family(argtypes.category(written), written))
    for _, _, sig in c.headers.aten_overloads(name, True):
        shapes.add(returns.of_returns(tuple(sig.func.returns)))
    if not shapes or any(shape is None or shape.kind != returns.VALUE for shape in shapes):
        return None
    types = sorted({shape.cpp_type for shape in shapes if shape is not None})
    return returns.Shape(returns.VALUE, " or ".join(types))


def _undefined_grad_wrapped(c: _Calls) -> bool:
    """Whether Functions.cpp writes this backward formula as `any_grad_defined ? (<formula>) : Tensor()`
    (gen_autograd_functions.py's emit_derivative): one input, a `Tensor` or `Tensor?` argument, and no
    `not_implemented` in the formula; not for a `_foreach_` function (its formulas are not judged)."""
    scope = c.scope
    if not scope.backward or len(scope.targets) != 1 or scope.foreach:
        return False
    target = scope.kernel.get(scope.targets[0])
    if target is None or target.kind != "argument" or target.holds not in (TENSOR, OPTIONAL_TENSOR):
        return False
    return not any("not_implemented" in t.text for t in c.tokens)


def auto_result_type(formula: str, scope: Scope) -> list[Finding]:
    """`auto_element_wise` / `auto_linear` where the expansion's value is not what the VariableType kernel takes:
    - auto_element_wise for one list output (not of a `_foreach_` function): the expansion,
      `(<backward formula, grad → <input>_t.conj()>).conj()`, is at best an at::Tensor, assigned to a
      std::optional<std::vector<at::Tensor>>;
    - auto_linear for a `_foreach_` function with a list output: the expansion calls the function itself
      (`at::_foreach_add(self_t, scalars)`), a std::vector<at::Tensor>, assigned to one element's
      std::optional<at::Tensor>. (Elsewhere it is the output's own type.)"""
    if scope.backward or len(scope.targets) != 1:
        return []
    name = scope.targets[0]
    output = scope.get(name)
    if output is None or argtypes.category(output.cpp_type) != argtypes.TENSOR_LIST:
        return []
    if formula == "auto_element_wise" and not scope.foreach:
        why = (
            f"auto_element_wise for {name}, a list of Tensors: the expansion `(…).conj()` is at::Tensor, and the "
            f"VariableType kernel assigns it to a std::optional<std::vector<at::Tensor>>. Write a formula that "
            f"gives a std::vector<at::Tensor> (auto_linear, when the function is linear, gives one)."
        )
    elif formula == "auto_linear" and scope.foreach:
        why = (
            f"auto_linear of a foreach function: the expansion calls the function itself on the tangents, a "
            f"std::vector<at::Tensor>, and the VariableType kernel assigns it to one element of {name}, a "
            f"std::optional<at::Tensor>. Write the formula for one element (`self_t`, `self_p`, `{name}[i]`)."
        )
    else:
        return []
    return [Finding(FORMULA_RESULT_TYPE, ERROR, 0, len(formula), why)]
