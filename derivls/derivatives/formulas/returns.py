"""What a formula's value must be, by where the generated code puts it (formula-result-type).

Backward formulas (gen_autograd_functions.py):
- for one input, DERIVATIVE_SINGLE: `auto grad_result = <formula>; copy_range(grad_inputs, x_ix, grad_result);`,
  and copy_range takes a `const at::Tensor&` or an `at::ArrayRef<at::Tensor>`: a Tensor or a list of them;
  for one `Tensor` or `Tensor?` input the formula is first wrapped, `any_grad_defined ? (<formula>) : Tensor()`
  (unless it says `not_implemented`): only a Tensor has a common type with that Tensor();
- for several, DERIVATIVE_MULTI: `auto grad_result = <formula>;` then `std::get<k>(grad_result)` for the k-th
  name: a std::tuple with at least that many elements.
Forward formulas (gen_variable_type.py, FW_DERIVATIVE_TEMPLATE): `r_new_fw_grad_opt = <formula>;` where that is a
`std::optional<at::Tensor>` for one Tensor output, a `std::optional<std::tuple<at::Tensor, …>>` of exactly as
many Tensors for several outputs.

For one list output (`Tensor[]`, not of a `_foreach_` function) it is a `std::optional<std::vector<at::Tensor>>`:
a Tensor cannot be assigned to it (`unbind.int`'s `result: self_t`, or its auto_element_wise expansion).

A `_foreach_` entry's formulas (an element of a list) are not judged, but for a forward formula whose value is
a number (`result_new_fw_grad_opts[i] = <formula>`: a std::optional<at::Tensor>);
nor is a value whose shape derivls does not know (see `Shape`), nor the literal 0.
"""

from __future__ import annotations

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas import argtypes

TENSOR, LIST, TUPLE, VALUE = "a Tensor", "a list of Tensors", "a std::tuple", "not a Tensor"


@frozen_dataclass
class Shape:
    kind: str  # TENSOR, LIST, TUPLE, VALUE
    cpp_type: str  # as derivls names it in a message
    size: int = 0  # a tuple's elements


# argtypes families that are one value, neither a Tensor nor a list of Tensors nor a tuple
_VALUES = argtypes.NO_TENSOR | {argtypes.OPTIONAL_VALUE}


def of_family(family: str, cpp_type: str) -> Shape | None:
    """The shape of a value of an argtypes family (None: not known; a std::optional<Tensor> is not judged)."""
    if family == argtypes.TENSOR:
        return Shape(TENSOR, cpp_type)
    if family == argtypes.TENSOR_LIST:
        return Shape(LIST, cpp_type)
    return Shape(VALUE, cpp_type) if family in _VALUES else None


def of_type(cpp_type: str) -> Shape | None:
    """The shape of a C++ return type as a declaration writes it (`std::tuple<Tensor, Tensor>`, `at::Tensor`)."""
    t = cpp_type.replace(" ", "")
    if t.startswith("std::tuple<") and t.endswith(">"):
        inner = t[len("std::tuple<") : -1]
        if "<" in inner:
            return None  # a tuple of templates (std::vector<Tensor>…): not counted
        elements = inner.split(",")
        if all(argtypes.category(e) == argtypes.TENSOR for e in elements):
            return Shape(TUPLE, cpp_type, len(elements))
        return None
    return of_family(argtypes.category(cpp_type), cpp_type)


def of_returns(returns: tuple[object, ...]) -> Shape | None:
    """The shape of what an ATen operator's C++ signature returns, from its schema's returns."""
    types = [str(getattr(r, "type", "")) for r in returns]
    if types and all(t == "Tensor" for t in types):
        if len(types) == 1:
            return Shape(TENSOR, "at::Tensor")
        return Shape(TUPLE, f"std::tuple<{', '.join(['at::Tensor'] * len(types))}>", len(types))
    if types == ["Tensor[]"]:
        return Shape(LIST, "std::vector<at::Tensor>")
    if len(types) == 1 and types[0] in _VALUE_RETURNS:
        return Shape(VALUE, _VALUE_RETURNS[types[0]])
    return None


# one return of these schema types is a number, in C++ (`dim(Tensor self) -> int`: `int64_t Tensor::dim()`)
_VALUE_RETURNS = {"int": "int64_t", "SymInt": "c10::SymInt", "float": "double", "bool": "bool"}


def problem(
    shape: Shape, backward: bool, names: tuple[str, ...], output: str | None, wrapped: bool = False
) -> str | None:
    """Why a formula of this shape does not compile where the generated code puts it; None if it may.
    `names`: the key's (inputs for a backward formula, outputs for a forward one); `output`: a forward formula's
    one output is TENSOR (an at::Tensor), LIST (a std::vector<at::Tensor>, not of a `_foreach_` function) or None
    (not judged); `wrapped`: a backward formula for one `Tensor` or `Tensor?` input, which Functions.cpp writes as
    `any_grad_defined ? (<formula>) : Tensor()`, where only a Tensor has a common type with the Tensor()."""
    n = len(names)
    if backward and n == 1 and wrapped:
        if shape.kind == TENSOR:
            return None
        return (
            f"The formula for one Tensor input ({names[0]}) is {_what(shape)}: Functions.cpp writes "
            f"`any_grad_defined ? (<formula>) : Tensor()`, and it has no common type with at::Tensor."
        )
    if backward and n == 1:
        if shape.kind not in (TUPLE, VALUE):
            return None
        return (
            f"The formula for one input ({names[0]}) is {_what(shape)}: Functions.cpp passes it to "
            f"copy_range(grad_inputs, {names[0]}_ix, grad_result), which takes a Tensor or a list of Tensors."
        )
    if backward:
        if shape.kind == TUPLE and shape.size >= n:
            return None
        return (
            f"The formula for {n} inputs ({', '.join(names)}) is {_what(shape)}: Functions.cpp takes "
            f"std::get<0>…std::get<{n - 1}>(grad_result), which needs a std::tuple of at least {n} Tensors."
        )
    if n == 1:
        if output is None or shape.kind == output:
            return None
        held = "at::Tensor" if output == TENSOR else "std::vector<at::Tensor>"
        return (
            f"The forward formula for {names[0]} is {_what(shape)}: the VariableType kernel assigns it to a "
            f"std::optional<{held}>"
            + (
                "."
                if output == TENSOR
                else f" ({names[0]} is a list of Tensors), which takes a std::vector<at::Tensor>."
            )
        )
    if shape.kind == TUPLE and shape.size == n:
        return None
    return (
        f"The forward formula for {n} outputs ({', '.join(names)}) is {_what(shape)}: the VariableType kernel "
        f"assigns it to a std::optional<std::tuple<…>> of exactly {n} Tensors."
    )


def describe(shape: Shape) -> str:
    """The shape as a message names it: `'int64_t' (not a Tensor)`."""
    return _what(shape)


def _what(shape: Shape) -> str:
    return f"'{shape.cpp_type}' ({shape.kind}{f' of {shape.size}' if shape.kind == TUPLE else ''})"
