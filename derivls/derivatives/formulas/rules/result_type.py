"""formula-result-type: the formula's value where the generated code cannot take it (a tuple for one input,
a Tensor for several, a number for a Tensor output; see returns.py)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_RESULT_TYPE,
)
from derivls.derivatives.formulas import argtypes, returns
from derivls.derivatives.formulas.exprtypes import _argument_kind, _Calls, _whole_call
from derivls.derivatives.formulas.findings import ERROR, Finding


def _result_type(c: _Calls) -> list[Finding]:
    """The whole formula's value where the generated code cannot put it (derivatives/formulas/returns.py): a tuple
    for one input, a Tensor for several, a number for a Tensor output… (Not called for a conditional.)"""
    tokens, n = c.tokens, len(c.tokens)
    if n == 0:
        return []
    callee, shape = _whole_call(c)
    if shape is None and callee is None:
        kind = _argument_kind(c, 0, n)
        if kind is None or kind[2]:
            return []  # not typed, or the literal 0
        shape = returns.of_family(kind[0], kind[1])
    if shape is None:
        return []
    output = None if c.scope.backward else c.scope.get(c.scope.targets[0])  # (a forward formula's one output)
    output_is_tensor = output is not None and argtypes.category(output.cpp_type) == argtypes.TENSOR
    why = returns.problem(shape, c.scope.backward, c.scope.targets, output_is_tensor)
    if why is None:
        return []
    start, end = (tokens[callee].start, tokens[callee].end) if callee is not None else (tokens[0].start, tokens[-1].end)
    return [Finding(FORMULA_RESULT_TYPE, ERROR, start, end, why)]
