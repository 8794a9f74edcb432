"""The C++ API as PyTorch's codegen spelled it in January 2021 (``tools/codegen/api/cpp.py`` then).

The 2021 autograd loader works on plain strings: a binding's type is e.g. ``const Tensor &``,
``IntArrayRef``, ``c10::optional<ArrayRef<double>>`` or ``const TensorOptions &``, with no
``at::`` prefixes, no SymInt and ``Scalar`` passed by value. Saved variables drop ``const ``
and `` &`` from it (``saved_type``). Argument naming and grouping are the non-faithful C++
signature of that time: out= arguments first, then the others, with dtype/layout/device/
pin_memory folded into one ``options`` argument.

``LegacyCType`` wraps such a string so the rest of derivls (bindings, saved attributes, dumps,
hovers) can carry 2021 types through the same model objects as torchgen 2.x ones.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING

from derivls.aten.cpp_types import Binding, CType, NamedCType
from derivls.aten.schema import (
    Argument,
    BaseTy,
    BaseType,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)

if TYPE_CHECKING:
    from derivls.aten.native import NativeFunction

__all__ = [
    "LegacyCType",
    "argument_type",
    "argumenttype_type",
    "cpp_arguments",
    "cpp_signature",
    "name",
    "return_names",
    "return_type",
    "returns_type",
    "saved_type",
    "signature_key",
    "valuetype_type",
]


def saved_type(cpp_type: str) -> str:
    """The 2021 loader's type of a saved argument: its C++ type without `const ` and ` &`."""
    return cpp_type.replace("const ", "").replace(" &", "")


@dataclass(frozen=True)
class LegacyCType(CType):
    """A 2021 C++ type, kept as the string that codegen used."""

    text: str

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return saved_type(self.text) if strip_ref else self.text

    def cpp_type_registration_declarations(self) -> str:
        return self.text

    def remove_const_ref(self) -> CType:
        return LegacyCType(saved_type(self.text))


# Base types whose C++ name was their schema name.
_SAME_NAME = frozenset(
    {
        BaseTy.bool,
        BaseTy.QScheme,
        BaseTy.Scalar,
        BaseTy.ScalarType,
        BaseTy.Generator,
        BaseTy.Storage,
        BaseTy.Layout,
        BaseTy.Device,
        BaseTy.MemoryFormat,
        BaseTy.Dimname,
        BaseTy.Stream,
    }
)


def valuetype_type(t: Type) -> str | None:
    """Value types look the same as arguments and returns; None if `t` is not one."""
    if isinstance(t, BaseType):
        if t.name == BaseTy.Tensor:
            return None
        if t.name == BaseTy.int:
            return "int64_t"
        if t.name == BaseTy.float:
            return "double"
        if t.name == BaseTy.str:
            return "std::string"
        if t.name in _SAME_NAME:
            return t.name.name
        raise ValueError(f"type {t} did not exist in the 2021 codegen")
    if isinstance(t, OptionalType):
        elem = valuetype_type(t.elem)
        return None if elem is None else f"c10::optional<{elem}>"
    if isinstance(t, ListType):
        if str(t.elem) == "bool":
            if t.size is None:
                raise ValueError("bool[] must have a size (e.g. bool[3])")
            return f"std::array<bool,{t.size}>"
        return None
    raise ValueError(f"type {t} did not exist in the 2021 codegen")


def argumenttype_type(t: Type, *, mutable: bool) -> str:
    r = valuetype_type(t)
    if r is not None:
        return r
    if isinstance(t, BaseType):
        if t.name == BaseTy.Tensor:
            return "Tensor &" if mutable else "const Tensor &"
        raise ValueError(f"base type should have been a value type: {t}")
    if isinstance(t, OptionalType):
        if str(t.elem) == "Tensor":
            # a mutable Tensor? was a plain Tensor & (a known discrepancy of the time)
            return "Tensor &" if mutable else "const c10::optional<Tensor> &"
        return f"c10::optional<{argumenttype_type(t.elem, mutable=mutable)}>"
    if isinstance(t, ListType):
        elem = str(t.elem)
        if elem == "int":
            return "IntArrayRef"
        if elem == "Tensor":
            return "TensorList"
        if elem == "Dimname":
            return "DimnameList"
        if elem == "Tensor?":
            return "const c10::List<c10::optional<Tensor>> &"
        return f"ArrayRef<{argumenttype_type(t.elem, mutable=mutable)}>"
    raise ValueError(f"type {t} did not exist in the 2021 codegen")


def argument_type(a: Argument) -> str:
    return argumenttype_type(a.type, mutable=a.is_write)


def returntype_type(t: Type, *, mutable: bool) -> str:
    r = valuetype_type(t)
    if r is not None:
        return r
    if isinstance(t, BaseType) and t.name == BaseTy.Tensor:
        return "Tensor &" if mutable else "Tensor"
    if isinstance(t, ListType):
        if t.size is not None:
            raise ValueError(f"fixed size list returns are not supported: {t}")
        return f"std::vector<{returntype_type(t.elem, mutable=mutable)}>"
    raise ValueError(f"unrecognized return type {t}")


def return_type(r: Return) -> str:
    return returntype_type(r.type, mutable=r.is_write)


def returns_type(rs: Sequence[Return]) -> str:
    if not rs:
        return "void"
    if len(rs) == 1:
        return return_type(rs[0])
    return f"std::tuple<{','.join(return_type(r) for r in rs)}>"


def name(func: FunctionSchema) -> str:
    """The C++ function name: `add`, `add_`, `add_out`."""
    n = str(func.name.name)
    return n + "_out" if func.is_out_fn() else n


def return_names(func: FunctionSchema) -> list[str]:
    """`self` for in-place ops, the out argument for out= ops, else the return's name
    (`<name>_return` when an argument has it), else `result` / `result0`, `result1`, …"""
    names: list[str] = []
    for i, r in enumerate(func.returns):
        if func.name.name.inplace:
            n = "self"
        elif func.is_out_fn():
            n = func.arguments.out[i].name
        elif r.name:
            conflict = any(r.name == a.name for a in func.schema_order_arguments())
            n = f"{r.name}_return" if conflict else r.name
        else:
            n = "result" if len(func.returns) == 1 else f"result{i}"
        names.append(n)
    return names


_JIT_TO_CPP_DEFAULT = {
    "False": "false",
    "True": "true",
    "None": "c10::nullopt",
    "Mean": "at::Reduction::Mean",
    "[]": "{}",
    "contiguous_format": "MemoryFormat::Contiguous",
    "long": "at::kLong",
}


def default_expr(d: str, t: Type) -> str:
    if d == "None" and str(t) == "Tensor?":
        return "{}"
    if isinstance(t, BaseType) and t.name is BaseTy.str and len(d) >= 2 and d[0] == d[-1] == "'":
        return '"' + d[1:-1].replace("\\'", "'").replace('"', '\\"') + '"'
    if isinstance(t, OptionalType):
        return "c10::nullopt" if d == "None" else default_expr(d, t.elem)
    if isinstance(t, ListType) and d.startswith("[") and d.endswith("]"):
        return "{" + d[1:-1] + "}"
    return _JIT_TO_CPP_DEFAULT.get(d, d)


def _binding(a: Argument | TensorOptionsArguments | SelfArgument) -> Binding:
    if isinstance(a, SelfArgument):
        return _binding(a.argument)
    if isinstance(a, TensorOptionsArguments):
        default = None
        if all(x.default == "None" for x in a.all()):
            default = "{}"
        elif a.dtype.default == "long":
            default = "at::kLong"
        return Binding("options", NamedCType("options", LegacyCType("const TensorOptions &")), a, default)
    default = default_expr(a.default, a.type) if a.default is not None else None
    return Binding(a.name, NamedCType(a.name, LegacyCType(argument_type(a))), a, default)


def cpp_arguments(f: NativeFunction | FunctionSchema) -> list[Binding]:
    """The 2021 loader's `cpp_arguments`: the non-method, non-faithful C++ signature."""
    func = f if isinstance(f, FunctionSchema) else f.func
    args = func.arguments
    return [_binding(a) for a in (*args.out, *args.non_out)]


def cpp_signature(f: NativeFunction | FunctionSchema) -> str:
    """`Tensor add(const Tensor & self, const Tensor & other, Scalar alpha=1)`, as declared in 2021."""
    func = f if isinstance(f, FunctionSchema) else f.func
    args = ", ".join(
        f"{b.type} {b.name}" + (f"={b.default}" if b.default is not None else "") for b in cpp_arguments(func)
    )
    return f"{returns_type(func.returns)} {name(func)}({args})"


def _stripped(a: Argument) -> str:
    """An argument as the 2021 `signature()` printed it: no alias annotation, default kept."""
    default = f"={a.default}" if a.default is not None else ""
    return f"{a.type} {a.name}{default}"


def signature_key(func: FunctionSchema) -> tuple:
    """What the 2021 `FunctionSchema.signature()` kept, as a hashable key.

    The overload name is dropped, in-place is turned off, out= arguments and alias annotations
    are stripped, return names are dropped; unlike torchgen 2.x, TensorOptions arguments stay and
    mutable arguments do not turn into returns."""
    op = func.name.name
    base = op.base + ("_functional" if getattr(op, "functional_overload", False) else "")
    args = func.arguments
    return (
        base,
        op.dunder_method,
        tuple(_stripped(a) for a in args.flat_positional),
        tuple(_stripped(a) for a in args.flat_kwarg_only),
        tuple(str(r.type) for r in func.returns),
    )
