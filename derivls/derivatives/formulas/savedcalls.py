"""The calls load_derivatives takes out of a backward formula, judged as the build compiles them.

saved.py's rules `f\\({}\\)` (torchgen's `saved_variables`) replace `to_args_sizes(x)`,
`to_args_sizes_symint(x)`, `to_args_scalartypes(x)` and `TensorGeometry(x)` of an argument or output `x`
by a saved attribute (`x_args_sizes`, `x_geometry`…) whose value VariableType.cpp computes from the kernel's
`x` (`grad_fn->tensors_args_sizes = to_args_sizes(tensors);`). So, in a backward formula:

- the `x` of such a call must be of a C++ type the call takes: the *kernel's* type (a `Tensor?` is a
  `const std::optional<at::Tensor> &` there, an `int[]` an at::IntArrayRef), not the node's;
- a `to_args_*` call of any other form (`to_args_sizes()`, `to_args_sizes(tensors, 1)`) is left in the
  formula, and Functions.cpp declares no such function (VariableTypeUtils.h is VariableType.cpp's);
- `TensorGeometry(…)` left in the formula constructs one, and its constructors take 0, 1 or 3 arguments.

`zeros_like(x)` is replaced too (by `x_info.zeros()`; `x_info` is a TypeAndSize, made from the kernel's `x`,
which must be a Tensor); any other `zeros_like(…)` is the ATen function's, judged as such (resolve.py).

A forward formula is compiled in VariableType.cpp itself: there the calls are C++ calls, judged by the same
types and counts.

The types each call takes were read off g++: tests/compile/test_saved_calls.py compiles every call of
`CALLS` with an argument of every type of `JUDGED` and checks that g++ accepts exactly the `takes`.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping

from derivls.base.diagnostics import Code
from derivls.base.frozen import frozen_dataclass
from derivls.codes.formula import FORMULA_ARGUMENT_COUNT, FORMULA_ARGUMENT_TYPE, FORMULA_UNKNOWN_NAME
from derivls.derivatives.formulas.tokens import Token

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from derivls.derivatives.formulas.scope import Local, Scope

_TENSOR = frozenset({"const at::Tensor &", "at::Tensor", "at::Tensor &"})
_TENSOR_LIST = frozenset({"at::TensorList", "const at::ITensorListRef &", "::std::vector<at::Tensor>"})


@frozen_dataclass
class SavedCall:
    name: str
    declarations: tuple[str, ...]  # as the header declares them (for the message)
    counts: tuple[int, ...]  # how many arguments some declaration takes
    takes: frozenset[str]  # the kernel's C++ types of the one argument it may be given
    takes_what: str  # the same, in words
    # also an ATen function (`zeros_like`): a call load_derivatives does not replace is that function's,
    # judged as such (resolve.py)
    aten: bool = False


_TO_ARGS = "(VariableTypeUtils.h)"
CALLS: dict[str, SavedCall] = {
    c.name: c
    for c in (
        SavedCall(
            "to_args_sizes",
            ("std::vector<std::vector<int64_t>> to_args_sizes(at::ITensorListRef tensors) " + _TO_ARGS,),
            (1,),
            _TENSOR | _TENSOR_LIST,
            "a Tensor or a list of Tensors",
        ),
        SavedCall(
            "to_args_sizes_symint",
            ("std::vector<std::vector<c10::SymInt>> to_args_sizes_symint(at::ITensorListRef tensors) " + _TO_ARGS,),
            (1,),
            _TENSOR | _TENSOR_LIST,
            "a Tensor or a list of Tensors",
        ),
        SavedCall(
            "to_args_scalartypes",
            ("std::vector<c10::ScalarType> to_args_scalartypes(at::ITensorListRef tensors) " + _TO_ARGS,),
            (1,),
            _TENSOR | _TENSOR_LIST,
            "a Tensor or a list of Tensors",
        ),
        SavedCall(
            "TensorGeometry",
            (
                "TensorGeometry()",
                "explicit TensorGeometry(c10::SymIntArrayRef sizes)",
                "explicit TensorGeometry(const TensorBase& t)",
                "explicit TensorGeometry(std::vector<at::SymInt> sizes, std::vector<at::SymInt> strides, "
                "at::SymInt storage_offset)",
            ),
            (0, 1, 3),
            _TENSOR | {"c10::SymIntArrayRef", "c10::SymInt"},
            "a Tensor, a SymInt[] or a SymInt",
        ),
        SavedCall(  # saved as `x_info` (`grad_fn->x_info = x;`), replaced by `x_info.zeros()`
            "zeros_like",
            ("it saves a TypeAndSize, made by TypeAndSize(const at::Tensor& t) of function.h",),
            (1,),
            _TENSOR,
            "a Tensor",
            aten=True,
        ),
    )
}

# The kernel types whose verdicts were read off g++ (each VariableType kernel parameter or output type of
# 2.13's native functions): an argument of one of these that a call does not take is an error; of any other
# type, it is not judged.
JUDGED = (
    _TENSOR
    | _TENSOR_LIST
    | frozenset(
        {
            "bool",
            "int64_t",
            "double",
            "c10::SymInt",
            "c10::SymBool",
            "c10::SymIntArrayRef",
            "at::IntArrayRef",
            "at::OptionalIntArrayRef",
            "at::OptionalSymIntArrayRef",
            "const at::Scalar &",
            "at::Scalar",
            "at::ArrayRef<at::Scalar>",
            "at::ScalarType",
            "at::Layout",
            "at::Device",
            "at::MemoryFormat",
            "at::TensorOptions",
            "c10::string_view",
            "const ::std::optional<at::Tensor> &",
            "const c10::List<::std::optional<at::Tensor>> &",
            "::std::optional<double>",
            "::std::optional<int64_t>",
            "::std::optional<bool>",
            "::std::optional<c10::SymInt>",
            "::std::optional<at::ScalarType>",
            "::std::optional<at::Layout>",
            "::std::optional<at::Device>",
            "::std::optional<at::MemoryFormat>",
            "::std::optional<at::Generator>",
            "::std::optional<c10::string_view>",
            "::std::optional<at::ArrayRef<double>>",
            "const ::std::optional<at::Scalar> &",
            "::std::array<bool,2>",
            "::std::array<bool,3>",
            "::std::array<bool,4>",
        }
    )
)


@frozen_dataclass
class Slip:
    code: Code  # formula-argument-type, formula-argument-count, formula-unknown-name
    start: int  # offsets into the formula: the called name (a count) or the argument (a type)
    end: int
    message: str


def saved_call_slips(
    formula: str,
    tokens: list[Token],
    pairs: Mapping[int, int],
    scope: Scope,
    split: Callable[[list[Token], int, int], list[tuple[int, int]] | None],
) -> list[Slip]:
    """The calls of `CALLS` in `formula` that do not compile where the build puts them. `split(tokens, open,
    close)`: the token ranges of a call's arguments (None where they cannot be told apart)."""
    out: list[Slip] = []
    for i, t in enumerate(tokens):
        call = CALLS.get(t.text) if t.kind == "ident" else None
        if call is None or i + 1 not in pairs or (i and tokens[i - 1].text in (".", "->")):
            continue
        saved = replaced_argument(tokens, i, scope)
        if saved is not None:
            if i and tokens[i - 1].text == "::":
                continue  # `at::TensorGeometry(self)`: formula-saved-call-qualified
            # replaced by a saved attribute: VariableType.cpp evaluates the call on the kernel's `saved`
            slip = _argument_type(call, tokens[i + 2], scope.kernel.get(saved), saved=True)
            if slip is not None:
                out.append(slip)
            continue
        ranges = split(tokens, i + 1, pairs[i + 1])
        if ranges is None or call.aten:
            continue  # (zeros_like left in the formula: the ATen function)
        single = len(ranges) == 1 and ranges[0][1] - ranges[0][0] == 1 and tokens[ranges[0][0]].kind == "ident"
        name = tokens[ranges[0][0]].text if single else ""
        if len(ranges) not in call.counts:
            slip = _count(call, t, len(ranges), scope.backward)
        elif scope.backward and call.name != "TensorGeometry":
            slip = _undeclared(call, t, formula[t.start : tokens[pairs[i + 1]].end])
        elif not scope.backward and single:
            slip = _argument_type(call, tokens[ranges[0][0]], scope.get(name), saved=False)
        else:
            slip = None
        if slip is not None:
            out.append(slip)
    return out


def replaced_argument(tokens: list[Token], i: int, scope: Scope) -> str | None:
    """The argument or output `x` when load_derivatives replaces the call `f(x)` at tokens[i] (`f` in CALLS) by
    a saved attribute: a backward formula, and `f(x)` written with nothing between its tokens (saved.py's
    rule is that text, and matches after a qualifier too); else None."""
    if not scope.backward or i + 3 >= len(tokens) or tokens[i + 1].text != "(" or tokens[i + 3].text != ")":
        return None
    name, open_, argument, close = tokens[i : i + 4]
    adjacent = name.end == open_.start and open_.end == argument.start and argument.end == close.start
    if argument.kind != "ident" or not adjacent:
        return None
    return argument.text if argument.text in scope.arguments or argument.text in scope.outputs else None


def _argument_type(call: SavedCall, argument: Token, local: Local | None, *, saved: bool) -> Slip | None:
    """`saved`: the call is load_derivatives' to save (a backward formula's), `local` the kernel's argument."""
    if local is None or local.cpp_type not in JUDGED or local.cpp_type in call.takes:
        return None
    where = (
        f"load_derivatives saves '{call.name}({argument.text})' for the backward pass, computed in VariableType.cpp "
        f"on the kernel's '{argument.text}' ({local.cpp_type})"
        if saved
        else f"'{argument.text}' is {local.cpp_type} here"
    )
    return Slip(
        FORMULA_ARGUMENT_TYPE,
        argument.start,
        argument.end,
        f"{where}: {call.name} takes {call.takes_what} ({'; '.join(call.declarations)}).",
    )


def _count(call: SavedCall, name: Token, count: int, backward: bool) -> Slip:
    *most, last = (str(c) for c in call.counts)
    counts = f"{', '.join(most)} or {last}" if most else last
    saved = (
        f" (load_derivatives replaces only '{call.name}(<argument>)' of an argument or output; any other call stays "
        "in the formula)"
        if backward
        else ""
    )
    return Slip(
        FORMULA_ARGUMENT_COUNT,
        name.start,
        name.end,
        f"'{call.name}' takes {counts} argument{'s' if call.counts != (1,) else ''}, not {count}{saved}: "
        + "; ".join(call.declarations)
        + ".",
    )


def _undeclared(call: SavedCall, name: Token, text: str) -> Slip:
    return Slip(
        FORMULA_UNKNOWN_NAME,
        name.start,
        name.end,
        f"'{text}' stays in the formula: load_derivatives replaces only '{call.name}(<argument>)' of an argument "
        f"or output (by a value it saves), and Functions.cpp, where the formula is compiled, declares no "
        f"'{call.name}' (VariableTypeUtils.h is VariableType.cpp's).",
    )


__all__ = ["CALLS", "JUDGED", "SavedCall", "Slip", "replaced_argument", "saved_call_slips"]
