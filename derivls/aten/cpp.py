# Allowed past the 800-line module limit: an upstream port (torchgen.api.cpp, function by
# function in upstream's order, so a new release diffs against it directly).
"""The public C++ API types of ATen operators: a torch-free copy of torchgen.api.types + torchgen.api.cpp.

Names and ``cpp_type()`` strings are byte-for-byte those of torchgen 2.13, so the autograd
loader (``load_derivatives.cpp_arguments`` and friends) can be reproduced exactly.

torchgen reads two settings from thread-local state (``torchgen.local``), which its codegen
sets per NativeFunction: ``use_const_ref_for_mutable_tensors`` (the yaml flag) and
``use_ilistref_for_tensor_lists`` (true for structured-group members).  Here they are explicit
keyword arguments, falling back to ``parametrize(...)`` and then to False; ``cpp_arguments(f)``
and ``CppSignatureGroup.from_native_function(f)`` derive them from ``f`` like
``torchgen.context.with_native_function`` does.

The C++ types are in cpp_types.py (import them from there). This module is torchgen.api.cpp
and the C++ part of torchgen.api.types.signatures, in upstream's order so that it can be compared with
upstream function by function; `argument` keeps upstream's shape (one function, ~90 lines).
"""

from __future__ import annotations

import contextlib
import contextvars
from collections.abc import Iterator, Sequence

from derivls.aten.cpp_types import (
    ArgName,
    ArrayCType,
    ArrayRefCType,
    BaseCType,
    BaseTypeToCppMapping,
    Binding,
    ConstRefCType,
    CType,
    ListCType,
    MutRefCType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    SymIntT,
    TupleCType,
    VectorCType,
    boolT,
    dimnameListT,
    intArrayRefT,
    iTensorListRefT,
    longT,
    optionalIntArrayRefT,
    optionalSymIntArrayRefT,
    scalarT,
    symIntArrayRefT,
    tensorListT,
    tensorOptionsT,
    tensorT,
    voidT,
)
from derivls.aten.schema import (
    Argument,
    Arguments,
    BaseTy,
    BaseType,
    CustomClassType,
    FunctionSchema,
    ListType,
    OptionalType,
    Return,
    SelfArgument,
    TensorOptionsArguments,
    Type,
)
from derivls.base.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)

if TYPE_CHECKING:
    from derivls.aten.native import NativeFunction


# --------------------------------------------------------------------------------------
# torchgen.local, as context variables
# --------------------------------------------------------------------------------------

_USE_CONST_REF_FOR_MUTABLE_TENSORS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "use_const_ref_for_mutable_tensors", default=False
)
_USE_ILISTREF_FOR_TENSOR_LISTS: contextvars.ContextVar[bool] = contextvars.ContextVar(
    "use_ilistref_for_tensor_lists", default=False
)


@contextlib.contextmanager
def parametrize(*, use_const_ref_for_mutable_tensors: bool, use_ilistref_for_tensor_lists: bool) -> Iterator[None]:
    """Like torchgen.local.parametrize: the defaults for calls that don't pass the flags."""
    t1 = _USE_CONST_REF_FOR_MUTABLE_TENSORS.set(use_const_ref_for_mutable_tensors)
    t2 = _USE_ILISTREF_FOR_TENSOR_LISTS.set(use_ilistref_for_tensor_lists)
    try:
        yield
    finally:
        _USE_ILISTREF_FOR_TENSOR_LISTS.reset(t2)
        _USE_CONST_REF_FOR_MUTABLE_TENSORS.reset(t1)


def _const_ref(v: bool | None) -> bool:
    return _USE_CONST_REF_FOR_MUTABLE_TENSORS.get() if v is None else v


def _ilistref(v: bool | None) -> bool:
    return _USE_ILISTREF_FOR_TENSOR_LISTS.get() if v is None else v


# --------------------------------------------------------------------------------------
# torchgen.api.cpp
# --------------------------------------------------------------------------------------


def name(
    func: FunctionSchema,
    *,
    faithful_name_for_out_overloads: bool = False,
    symint_overload: bool = False,
) -> str:
    """The C++ API function name: `add`, `add_`, `add_out` / `add_outf`, `..._symint`."""
    n = str(func.name.name)
    if symint_overload:
        n += "_symint"
    if func.is_out_fn():
        n += "_outf" if faithful_name_for_out_overloads else "_out"
    return n


def valuetype_type(t: Type, *, binds: ArgName, mutable: bool = True, symint: bool = False) -> NamedCType | None:
    """Translation of value types (same for arguments and returns); None if not one."""
    if isinstance(t, BaseType):
        if t.name in (BaseTy.Tensor, BaseTy.Scalar):
            return None
        if t.name == BaseTy.SymInt:
            return NamedCType(binds, BaseCType(SymIntT if symint else longT))
        cty = BaseTypeToCppMapping.get(t.name)
        if cty is None:
            raise ValueError(f"type {t} has no C++ API translation")
        return NamedCType(binds, BaseCType(cty))
    if isinstance(t, OptionalType):
        elem = valuetype_type(t.elem, binds=binds, mutable=mutable, symint=symint)
        if elem is None:
            return None
        return NamedCType(binds, OptionalCType(elem.type))
    if isinstance(t, ListType):
        if str(t.elem) == "bool":
            if t.size is None:
                raise ValueError("bool[] must have a size (e.g. bool[3])")
            return NamedCType(binds, ArrayCType(BaseCType(boolT), t.size))
        return None
    if isinstance(t, CustomClassType):
        raise ValueError(f"custom class type {t} has no C++ API translation")
    raise ValueError(f"unrecognized type {t!r}")


def argumenttype_type(
    t: Type,
    *,
    mutable: bool,
    binds: ArgName,
    remove_non_owning_ref_types: bool = False,
    symint: bool = False,
    use_const_ref_for_mutable_tensors: bool | None = None,
    use_ilistref_for_tensor_lists: bool | None = None,
) -> NamedCType:
    """Translation of an argument type. remove_non_owning_ref_types gives owning types
    (std::vector<int64_t> instead of IntArrayRef)."""
    r = valuetype_type(t, binds=binds, mutable=mutable, symint=symint)
    if r is not None:
        return r
    const_ref = _const_ref(use_const_ref_for_mutable_tensors)

    if isinstance(t, BaseType):
        if t.name == BaseTy.Tensor:
            if mutable and not const_ref:
                return NamedCType(binds, MutRefCType(BaseCType(tensorT)))
            return NamedCType(binds, ConstRefCType(BaseCType(tensorT)))
        if t.name == BaseTy.Scalar:
            return NamedCType(binds, ConstRefCType(BaseCType(scalarT)))
        raise ValueError(f"base type should have been value type {t}")
    if isinstance(t, OptionalType):
        if str(t.elem) == "Tensor":
            if mutable and not const_ref:
                # torchgen: "TODO: fix this discrepancy" (a mutable Tensor? is a Tensor &)
                return NamedCType(binds, MutRefCType(BaseCType(tensorT)))
            return NamedCType(binds, ConstRefCType(OptionalCType(BaseCType(tensorT))))
        if str(t.elem) == "Scalar":
            return NamedCType(binds, ConstRefCType(OptionalCType(BaseCType(scalarT))))
        if isinstance(t.elem, ListType) and str(t.elem.elem) == "int":
            return NamedCType(binds, BaseCType(optionalIntArrayRefT))
        if isinstance(t.elem, ListType) and str(t.elem.elem) == "SymInt":
            return NamedCType(binds, BaseCType(optionalSymIntArrayRefT if symint else optionalIntArrayRefT))
        elem = argumenttype_type(
            t.elem,
            mutable=mutable,
            binds=binds,
            symint=symint,
            use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
        )
        return NamedCType(binds, OptionalCType(elem.type))
    if isinstance(t, ListType):
        elem_s = str(t.elem)
        if elem_s == "int":
            if remove_non_owning_ref_types:
                return NamedCType(binds, VectorCType(BaseCType(longT)))
            return NamedCType(binds, BaseCType(intArrayRefT))
        if elem_s == "SymInt":
            if remove_non_owning_ref_types:
                return NamedCType(binds, VectorCType(BaseCType(SymIntT if symint else longT)))
            return NamedCType(binds, BaseCType(symIntArrayRefT if symint else intArrayRefT))
        if elem_s == "Tensor":
            if _ilistref(use_ilistref_for_tensor_lists):
                return NamedCType(binds, ConstRefCType(BaseCType(iTensorListRefT)))
            return NamedCType(binds, BaseCType(tensorListT))
        if elem_s == "Scalar":
            return NamedCType(binds, ArrayRefCType(BaseCType(scalarT)))
        if elem_s == "Tensor?":
            return NamedCType(binds, ConstRefCType(ListCType(OptionalCType(BaseCType(tensorT)))))
        if elem_s == "Dimname":  # legacy
            return NamedCType(binds, BaseCType(dimnameListT))
        elem = argumenttype_type(
            t.elem,
            mutable=mutable,
            binds=binds,
            symint=symint,
            use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
        )
        return NamedCType(binds, ArrayRefCType(elem.type))
    raise ValueError(f"unrecognized type {t!r}")


def argument_type(
    a: Argument,
    *,
    binds: ArgName,
    symint: bool = False,
    use_const_ref_for_mutable_tensors: bool | None = None,
    use_ilistref_for_tensor_lists: bool | None = None,
) -> NamedCType:
    return argumenttype_type(
        a.type,
        mutable=a.is_write,
        symint=symint,
        binds=binds,
        use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
    )


def returntype_type(
    t: Type,
    *,
    mutable: bool,
    symint: bool = False,
    use_const_ref_for_mutable_tensors: bool | None = None,
) -> CType:
    """Translation of a single return type. As in torchgen, `symint` is ignored: returns
    always use SymInt."""
    r = valuetype_type(t, binds="__placeholder__", mutable=mutable, symint=True)
    if r is not None:
        return r.type
    if isinstance(t, BaseType):
        if t.name == BaseTy.Tensor:
            if mutable:
                if _const_ref(use_const_ref_for_mutable_tensors):
                    return ConstRefCType(BaseCType(tensorT))
                return MutRefCType(BaseCType(tensorT))
            # Note [Tensor Copy Returns]
            return BaseCType(tensorT)
        if t.name == BaseTy.Scalar:
            return BaseCType(scalarT)
    elif isinstance(t, ListType):
        if mutable:
            raise ValueError("native functions should never return a mutable tensor list; they should return void")
        elem = returntype_type(
            t.elem, mutable=False, use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors
        )
        if t.size is not None:
            raise ValueError(f"fixed size list returns not supported: {t}")
        return VectorCType(elem)
    elif isinstance(t, OptionalType):
        elem = returntype_type(
            t.elem, mutable=mutable, use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors
        )
        if str(t.elem) == "Tensor":
            return OptionalCType(elem)
    raise ValueError(f"unrecognized return type {t}")


def return_type(r: Return, *, symint: bool = False, use_const_ref_for_mutable_tensors: bool | None = None) -> CType:
    return returntype_type(
        r.type,
        mutable=r.is_write,
        symint=symint,
        use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
    )


def returns_type(
    rs: Sequence[Return],
    *,
    symint: bool = False,
    use_const_ref_for_mutable_tensors: bool | None = None,
) -> CType:
    if len(rs) == 0:
        return BaseCType(voidT)
    if len(rs) == 1:
        return return_type(rs[0], symint=symint, use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors)
    return TupleCType(
        tuple(
            return_type(r, symint=symint, use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors)
            for r in rs
        )
    )


def return_names(f: NativeFunction | FunctionSchema, *, fallback_name: str = "result") -> Sequence[str]:
    """C++ names of the returns: `self` for inplace ops, the out argument's name for out=
    ops, else the return's own name (`<name>_return` if an argument has that name), else
    `result` / `result0`, `result1`, ..."""
    func = f if isinstance(f, FunctionSchema) else f.func
    returns: list[str] = []
    for i, r in enumerate(func.returns):
        if func.name.name.inplace:
            if i != 0:
                raise ValueError("illegal inplace function with multiple returns")
            n = "self"
        elif func.is_out_fn():
            n = func.arguments.out[i].name
        elif r.name:
            name_conflict = any(r.name == a.name for a in func.schema_order_arguments())
            n = f"{r.name}_return" if name_conflict else r.name
        else:
            n = fallback_name if len(func.returns) == 1 else f"{fallback_name}{i}"
        returns.append(n)
    return returns


JIT_TO_CPP_DEFAULT = {
    "False": "false",
    "True": "true",
    "None": "::std::nullopt",  # type directed in general, see default_expr
    "Mean": "at::Reduction::Mean",
    "[]": "{}",
    "contiguous_format": "c10::MemoryFormat::Contiguous",
    "long": "at::kLong",
}


def default_expr(d: str, t: Type, *, symint: bool) -> str:
    """A schema default as a C++ expression."""
    if d == "None" and str(t) == "Tensor?":
        return "{}"
    if isinstance(t, BaseType) and t.name is BaseTy.str:
        # schema allows single quotes, C++ needs double
        if len(d) >= 2 and d[0] == "'" and d[-1] == "'":
            s = ""
            i = 1
            while i + 1 < len(d):
                if d[i] != "\\":
                    s += '\\"' if d[i] == '"' else d[i]
                    i += 1
                else:
                    s += "'" if d[i + 1] == "'" else d[i : i + 2]
                    i += 2
            return f'"{s}"'
    if isinstance(t, OptionalType):
        if d == "None":
            return "::std::nullopt"
        return default_expr(d, t.elem, symint=symint)
    if isinstance(t, ListType):
        if d.startswith("[") and d.endswith("]"):
            return "{" + d[1:-1] + "}"
        if symint and d.isdigit() and str(t.elem) == "SymInt":
            return f"c10::SymInt({d})"
        if t.size is None:
            # sized lists may have scalar defaults (int[2] stride=1); unsized may not
            raise ValueError(f"Expected a list default '[...]' but found: '{d}'")
    return JIT_TO_CPP_DEFAULT.get(d, d)


# (id(argument), symint, has TensorOptions, default dropped, const ref, ilistref) -> (argument, binding)
_ARGUMENT_BINDINGS: dict[tuple[int, bool, bool, bool, bool, bool], tuple[Argument, Binding]] = {}


def argument(
    a: Argument | TensorOptionsArguments | SelfArgument,
    *,
    cpp_no_default_args: set[str] | frozenset[str],
    method: bool,
    faithful: bool,
    symint: bool = False,
    has_tensor_options: bool,
    use_const_ref_for_mutable_tensors: bool | None = None,
    use_ilistref_for_tensor_lists: bool | None = None,
) -> list[Binding]:
    """One schema argument as C++ bindings (TensorOptions: one `options` binding unless faithful;
    self: none for methods)."""

    def sub_argument(a: Argument | TensorOptionsArguments | SelfArgument) -> list[Binding]:
        return argument(
            a,
            cpp_no_default_args=cpp_no_default_args,
            method=method,
            faithful=faithful,
            symint=symint,
            has_tensor_options=has_tensor_options,
            use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
        )

    if isinstance(a, Argument):
        # Arguments are shared objects (schema.Argument.parse), and with both settings given
        # (not read from `parametrize`) the binding depends on these alone.
        key = None
        if use_const_ref_for_mutable_tensors is not None and use_ilistref_for_tensor_lists is not None:
            key = (
                id(a),
                symint,
                has_tensor_options,
                a.name in cpp_no_default_args,
                use_const_ref_for_mutable_tensors,
                use_ilistref_for_tensor_lists,
            )
            hit = _ARGUMENT_BINDINGS.get(key)
            if hit is not None:
                return [hit[1]]
        binds: ArgName
        if a.name == "memory_format" and has_tensor_options:
            binds = SpecialArgName.possibly_redundant_memory_format
        else:
            binds = a.name
        default: str | None = None
        if a.name not in cpp_no_default_args and a.default is not None:
            default = default_expr(a.default, a.type, symint=symint)
        binding = Binding(
            nctype=argument_type(
                a,
                binds=binds,
                symint=symint,
                use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
                use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
            ),
            name=a.name,
            default=default,
            argument=a,
        )
        if key is not None:
            _ARGUMENT_BINDINGS[key] = (a, binding)  # the argument kept alive: its id stays its own
        return [binding]
    if isinstance(a, TensorOptionsArguments):
        if faithful:
            return sub_argument(a.dtype) + sub_argument(a.layout) + sub_argument(a.device) + sub_argument(a.pin_memory)
        default = None
        if "options" in cpp_no_default_args:
            raise ValueError("'options' should not be in cpp_no_default_args")
        if all(x.default == "None" for x in a.all()):
            default = "{}"
        elif a.dtype.default == "long":
            default = "at::kLong"  # torchgen: "TODO: this is wrong"
        return [
            Binding(
                nctype=NamedCType("options", BaseCType(tensorOptionsT)),
                name="options",
                default=default,
                argument=a,
            )
        ]
    if isinstance(a, SelfArgument):
        if method:
            return []  # the caller provides the implicit `this`
        return sub_argument(a.argument)
    raise ValueError(f"unexpected argument {a!r}")


def arguments(
    arguments: Arguments,
    *,
    faithful: bool,
    symint: bool = False,
    method: bool,
    cpp_no_default_args: set[str] | frozenset[str],
    use_const_ref_for_mutable_tensors: bool | None = None,
    use_ilistref_for_tensor_lists: bool | None = None,
) -> list[Binding]:
    """All C++ bindings: faithful = schema order, no defaults; otherwise out arguments first."""
    # Argument lists are shared objects (schema.Arguments.parse); with both settings given (not
    # read from `parametrize`) the bindings depend on these alone: computed once per key.
    key = None
    if use_const_ref_for_mutable_tensors is not None and use_ilistref_for_tensor_lists is not None:
        key = (
            id(arguments),
            faithful,
            symint,
            method,
            frozenset(cpp_no_default_args),
            use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists,
        )
        hit = _ARGUMENTS_BINDINGS.get(key)
        if hit is not None:
            return list(hit[1])
    bindings = _arguments(
        arguments,
        faithful=faithful,
        symint=symint,
        method=method,
        cpp_no_default_args=cpp_no_default_args,
        use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
    )
    if key is not None:
        _ARGUMENTS_BINDINGS[key] = (arguments, tuple(bindings))  # the list kept alive: its id stays its own
    return bindings


# (id(arguments), faithful, symint, method, cpp_no_default_args, const ref, ilistref) ->
# (arguments, their bindings)
_ARGUMENTS_BINDINGS: dict[
    tuple[int, bool, bool, bool, frozenset[str], bool, bool], tuple[Arguments, tuple[Binding, ...]]
] = {}


def _arguments(
    arguments: Arguments,
    *,
    faithful: bool,
    symint: bool,
    method: bool,
    cpp_no_default_args: set[str] | frozenset[str],
    use_const_ref_for_mutable_tensors: bool | None,
    use_ilistref_for_tensor_lists: bool | None,
) -> list[Binding]:
    args: list[Argument | TensorOptionsArguments | SelfArgument] = []
    if faithful:
        args.extend(arguments.non_out)
        args.extend(arguments.out)
    else:
        args.extend(arguments.out)
        args.extend(arguments.non_out)
    return [
        r.no_default() if faithful else r
        for a in args
        for r in argument(
            a,
            faithful=faithful,
            symint=symint,
            method=method,
            has_tensor_options=arguments.tensor_options is not None,
            cpp_no_default_args=cpp_no_default_args,
            use_const_ref_for_mutable_tensors=use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=use_ilistref_for_tensor_lists,
        )
    ]


# --------------------------------------------------------------------------------------
# torchgen.api.types.signatures (the C++ API part)
# --------------------------------------------------------------------------------------


@frozen_dataclass
class CppSignature:
    """One overload in the C++ API."""

    func: FunctionSchema
    method: bool
    faithful: bool
    # SymInt-taking functions keep an int64_t signature for BC; the SymInt one is *_symint
    symint: bool
    cpp_no_default_args: frozenset[str]
    fallback_binding: bool = False
    # torchgen reads these from torchgen.local; a signature made from a NativeFunction
    # carries the values that function implies
    use_const_ref_for_mutable_tensors: bool | None = None
    use_ilistref_for_tensor_lists: bool | None = None

    def arguments(self) -> Sequence[Binding]:
        return arguments(
            self.func.arguments,
            faithful=self.faithful,
            symint=self.symint,
            method=self.method,
            cpp_no_default_args=self.cpp_no_default_args,
            use_const_ref_for_mutable_tensors=self.use_const_ref_for_mutable_tensors,
            use_ilistref_for_tensor_lists=self.use_ilistref_for_tensor_lists,
        )

    def name(self, *, suppress_symint_suffix: bool = False) -> str:
        n = name(
            self.func,
            faithful_name_for_out_overloads=self.faithful,
            symint_overload=False if suppress_symint_suffix else self.symint,
        )
        if self.fallback_binding:
            n = f"__dispatch_{n}"
        return n

    def _returns_type(self) -> str:
        return returns_type(
            self.func.returns,
            symint=self.symint,
            use_const_ref_for_mutable_tensors=self.use_const_ref_for_mutable_tensors,
        ).cpp_type()

    def decl(
        self,
        *,
        name: str | None = None,
        prefix: str = "",
        is_redispatching_fn: bool = False,
        suppress_symint_suffix: bool = False,
    ) -> str:
        cpp_args = [a.decl() for a in self.arguments()]
        if is_redispatching_fn:
            cpp_args = ["c10::DispatchKeySet dispatchKeySet"] + cpp_args
        if name is None:
            name = prefix + self.name(suppress_symint_suffix=suppress_symint_suffix)
        return f"{self._returns_type()} {name}({', '.join(cpp_args)})"

    def defn(self, *, name: str | None = None, prefix: str = "", is_redispatching_fn: bool = False) -> str:
        cpp_args = [a.defn() for a in self.arguments()]
        if is_redispatching_fn:
            cpp_args = ["c10::DispatchKeySet dispatchKeySet"] + cpp_args
        if name is None:
            name = prefix + self.name()
        return f"{self._returns_type()} {name}({', '.join(cpp_args)})"

    def ptr_type(self) -> str:
        args_types_str = ", ".join(a.type for a in self.arguments())
        return f"{self._returns_type()} (*)({args_types_str})"

    def type(self) -> str:
        args_types_str = ", ".join(a.type for a in self.arguments())
        return f"{self._returns_type()} ({args_types_str})"


@frozen_dataclass
class CppSignatureGroup:
    """The user-visible signature, the faithful one (when there are TensorOptions or out
    arguments), and their SymInt versions (when the schema has SymInts)."""

    func: FunctionSchema
    signature: CppSignature
    faithful_signature: CppSignature | None
    symint_signature: CppSignature | None
    symint_faithful_signature: CppSignature | None

    def most_faithful_signature(self) -> CppSignature:
        return self.faithful_signature if self.faithful_signature else self.signature

    def signatures(self, *, symint: bool = True) -> Iterator[CppSignature]:
        yield self.signature
        if self.faithful_signature:
            yield self.faithful_signature
        if symint:
            if self.symint_signature:
                yield self.symint_signature
            if self.symint_faithful_signature:
                yield self.symint_faithful_signature

    @staticmethod
    def from_native_function(f: NativeFunction, *, method: bool, fallback_binding: bool = False) -> CppSignatureGroup:
        func = f.func

        def make_sig(*, faithful: bool, symint: bool) -> CppSignature:
            return CppSignature(
                func=func,
                faithful=faithful,
                symint=symint,
                method=method,
                fallback_binding=fallback_binding,
                cpp_no_default_args=frozenset(f.cpp_no_default_args),
                # what torchgen.context.native_function_manager sets
                use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
                use_ilistref_for_tensor_lists=f.part_of_structured_group,
            )

        def make_sigs(*, symint: bool) -> tuple[CppSignature, CppSignature | None]:
            faithful_signature: CppSignature | None = None
            if func.arguments.tensor_options is not None or len(func.arguments.out) > 0:
                faithful_signature = make_sig(faithful=True, symint=symint)
            return make_sig(faithful=False, symint=symint), faithful_signature

        signature, faithful_signature = make_sigs(symint=False)
        symint_signature: CppSignature | None = None
        symint_faithful_signature: CppSignature | None = None
        if func.has_symint():
            symint_signature, symint_faithful_signature = make_sigs(symint=True)
        return CppSignatureGroup(
            func=func,
            signature=signature,
            faithful_signature=faithful_signature,
            symint_signature=symint_signature,
            symint_faithful_signature=symint_faithful_signature,
        )


def cpp_arguments(f: NativeFunction) -> Sequence[Binding]:
    """Exactly torchgen/packaged/autograd/load_derivatives.py's cpp_arguments: the
    non-method, non-faithful C++ signature, the SymInt one when the schema has SymInts.

    That is ``CppSignatureGroup.from_native_function(f, method=False)``'s symint_signature
    (else its signature) ``.arguments()``, computed without building the group."""
    return arguments(
        f.func.arguments,
        faithful=False,
        symint=f.func.has_symint(),
        method=False,
        cpp_no_default_args=frozenset(f.cpp_no_default_args),
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=f.part_of_structured_group,
    )
