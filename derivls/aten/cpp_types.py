"""C++ types of the ATen API: a torch-free copy of torchgen.api.types (types_base and types); see cpp.py."""

from __future__ import annotations

from enum import Enum, auto

from derivls.aten.schema import Argument, BaseTy, SelfArgument, TensorOptionsArguments
from derivls.base.frozen import frozen_dataclass

# torchgen.api.types.types_base
# --------------------------------------------------------------------------------------


class SpecialArgName(Enum):
    possibly_redundant_memory_format = auto()


ArgName = str | SpecialArgName


@frozen_dataclass
class BaseCppType:
    """A non-templated, fully qualified C++ type name; use the singletons below."""

    ns: str | None
    name: str

    def __str__(self) -> str:
        if self.ns is None or self.ns == "":
            return self.name
        return f"{self.ns}::{self.name}"


byteT = BaseCppType("", "uint8_t")
charT = BaseCppType("", "int8_t")
shortT = BaseCppType("", "int16_t")
# deliberately no `intT` (torchgen: too easy to confuse with JIT int, which is int64_t)
int32T = BaseCppType("", "int32_t")
longT = BaseCppType("", "int64_t")
doubleT = BaseCppType("", "double")
floatT = BaseCppType("", "float")
boolT = BaseCppType("", "bool")
voidT = BaseCppType("", "void")


class CType:
    """Base of the C++ type structure (an ABC in torchgen)."""

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        raise NotImplementedError

    def cpp_type_registration_declarations(self) -> str:
        # Dropped from torchgen after 2022 (it spelled RegistrationDeclarations.yaml types);
        # kept, with that era's rules, for callers written against older torchgen.
        raise NotImplementedError

    def remove_const_ref(self) -> CType:
        return self


@frozen_dataclass
class BaseCType(CType):
    type: BaseCppType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return str(self.type)

    def cpp_type_registration_declarations(self) -> str:
        return str(self.type).replace("at::", "")

    def remove_const_ref(self) -> CType:
        return self


@frozen_dataclass
class ConstRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=strip_ref)
        return f"const {self.elem.cpp_type()} &"

    def cpp_type_registration_declarations(self) -> str:
        return f"const {self.elem.cpp_type_registration_declarations()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@frozen_dataclass
class VectorCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        # strip_ref is deliberately not passed down (as in torchgen)
        return f"::std::vector<{self.elem.cpp_type()}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"::std::vector<{self.elem.cpp_type_registration_declarations()}>"

    def remove_const_ref(self) -> CType:
        return VectorCType(self.elem.remove_const_ref())


@frozen_dataclass
class ArrayCType(CType):
    elem: CType
    size: int

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::array<{self.elem.cpp_type()},{self.size}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"::std::array<{self.elem.cpp_type_registration_declarations()},{self.size}>"

    def remove_const_ref(self) -> CType:
        return ArrayCType(self.elem.remove_const_ref(), self.size)


@frozen_dataclass
class TupleCType(CType):
    # torchgen types this as a list; stored as a tuple so the CType stays hashable
    elems: tuple[CType, ...]

    def __post_init__(self) -> None:
        if not isinstance(self.elems, tuple):
            object.__setattr__(self, "elems", tuple(self.elems))

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::tuple<{','.join([e.cpp_type() for e in self.elems])}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"::std::tuple<{','.join([e.cpp_type_registration_declarations() for e in self.elems])}>"

    def remove_const_ref(self) -> CType:
        return TupleCType(tuple(e.remove_const_ref() for e in self.elems))


@frozen_dataclass
class MutRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        if strip_ref:
            return self.elem.cpp_type(strip_ref=strip_ref)
        return f"{self.elem.cpp_type()} &"

    def cpp_type_registration_declarations(self) -> str:
        return f"{self.elem.cpp_type_registration_declarations()} &"

    def remove_const_ref(self) -> CType:
        return self.elem.remove_const_ref()


@frozen_dataclass(slots=True, extra_slots=("_without_const_ref",))
class NamedCType:
    """A C++ type plus what it means (e.g. this bool is `pin_memory`)."""

    name: ArgName
    type: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return self.type.cpp_type(strip_ref=strip_ref)

    def cpp_type_registration_declarations(self) -> str:
        return self.type.cpp_type_registration_declarations()

    _without_const_ref = None  # lazily filled cache (not a field)

    def remove_const_ref(self) -> NamedCType:
        r = self._without_const_ref
        if r is None:
            r = NamedCType(self.name, self.type.remove_const_ref())
            object.__setattr__(self, "_without_const_ref", r)
        return r

    def with_name(self, name: str) -> NamedCType:
        return NamedCType(name, self.type)


@frozen_dataclass
class Binding:
    """A C++ binding site for a formal parameter."""

    name: str
    nctype: NamedCType
    argument: Argument | TensorOptionsArguments | SelfArgument
    default: str | None = None

    def rename(self, name: str) -> Binding:
        return Binding(name=name, nctype=self.nctype, argument=self.argument, default=self.default)

    @property
    def type(self) -> str:
        return self.nctype.cpp_type()

    def no_default(self) -> Binding:
        return Binding(name=self.name, nctype=self.nctype, default=None, argument=self.argument)

    def decl(self, *, func_ptr_cast: bool = False) -> str:
        mb_default = ""
        if self.default is not None:
            mb_default = f"={self.default}"
        if func_ptr_cast:
            return f"{self.type}"
        return f"{self.type} {self.name}{mb_default}"

    def defn(self) -> str:
        return f"{self.type} {self.name}"

    def with_name(self, name: str) -> Binding:
        return Binding(name=name, nctype=self.nctype, argument=self.argument, default=self.default)


@frozen_dataclass
class Expr:
    """A C++ expression and the type it provides."""

    expr: str
    type: NamedCType


# --------------------------------------------------------------------------------------
# torchgen.api.types.types
# --------------------------------------------------------------------------------------

TENSOR_LIST_LIKE_CTYPES = [
    "at::TensorList",
    "const c10::List<::std::optional<at::Tensor>> &",
    "const at::ITensorListRef &",
]

halfT = BaseCppType("at", "Half")
complexHalfT = BaseCppType("c10", "complex<c10::Half>")
complexFloatT = BaseCppType("c10", "complex<float>")
complexDoubleT = BaseCppType("c10", "complex<double>")
bfloat16T = BaseCppType("at", "BFloat16")
float8_e5m2T = BaseCppType("at", "Float8_e5m2")
float8_e5m2fnuzT = BaseCppType("at", "Float8_e5m2fnuz")
float8_e4m3fnT = BaseCppType("at", "Float8_e4m3fn")
float8_e4m3fnuzT = BaseCppType("at", "Float8_e4m3fnuz")
float8_e8m0fnuT = BaseCppType("at", "Float8_e8m0fnu")
stringT = BaseCppType("c10", "string_view")
generatorT = BaseCppType("at", "Generator")
scalarTypeT = BaseCppType("at", "ScalarType")
tensorT = BaseCppType("at", "Tensor")
optionalTensorRefT = BaseCppType("at", "OptionalTensorRef")
tensorListT = BaseCppType("at", "TensorList")
iTensorListRefT = BaseCppType("at", "ITensorListRef")
iOptTensorListRefT = BaseCppType("at", "IOptTensorListRef")
dimVectorT = BaseCppType("at", "DimVector")
layoutT = BaseCppType("at", "Layout")
deviceT = BaseCppType("at", "Device")
deviceIndexT = BaseCppType("at", "DeviceIndex")
scalarT = BaseCppType("at", "Scalar")
optionalScalarRefT = BaseCppType("at", "OptionalScalarRef")
memoryFormatT = BaseCppType("at", "MemoryFormat")
qschemeT = BaseCppType("at", "QScheme")
storageT = BaseCppType("at", "Storage")
streamT = BaseCppType("at", "Stream")
intArrayRefT = BaseCppType("at", "IntArrayRef")
optionalIntArrayRefT = BaseCppType("at", "OptionalIntArrayRef")
optionalSymIntArrayRefT = BaseCppType("at", "OptionalSymIntArrayRef")
tensorOptionsT = BaseCppType("at", "TensorOptions")
typeAndSizeT = BaseCppType("torch::autograd::generated", "TypeAndSize")
tensorGeometryT = BaseCppType("at", "TensorGeometry")
SymIntT = BaseCppType("c10", "SymInt")
SymBoolT = BaseCppType("c10", "SymBool")
symIntArrayRefT = BaseCppType("c10", "SymIntArrayRef")
# Legacy (2021-era files only): named-tensor dimension names.
dimnameT = BaseCppType("at", "Dimname")
dimnameListT = BaseCppType("at", "DimnameList")

# template parameters (torchgen models them as base types too)
scalar_t = BaseCppType("", "scalar_t")
opmath_t = BaseCppType("", "opmath_t")

BaseTypeToCppMapping: dict[BaseTy, BaseCppType] = {
    BaseTy.int: longT,
    BaseTy.float: doubleT,
    BaseTy.bool: boolT,
    BaseTy.str: stringT,
    BaseTy.Generator: generatorT,
    BaseTy.ScalarType: scalarTypeT,
    BaseTy.Tensor: tensorT,
    BaseTy.DimVector: dimVectorT,
    BaseTy.Layout: layoutT,
    BaseTy.Device: deviceT,
    BaseTy.DeviceIndex: deviceIndexT,
    BaseTy.Scalar: scalarT,
    BaseTy.MemoryFormat: memoryFormatT,
    BaseTy.QScheme: qschemeT,
    BaseTy.Storage: storageT,
    BaseTy.Stream: streamT,
    BaseTy.SymInt: SymIntT,
    BaseTy.SymBool: SymBoolT,
    BaseTy.Dimname: dimnameT,  # legacy
}


@frozen_dataclass
class OptionalCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"::std::optional<{self.elem.cpp_type()}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"::std::optional<{self.elem.cpp_type_registration_declarations()}>"

    def remove_const_ref(self) -> CType:
        return OptionalCType(self.elem.remove_const_ref())


@frozen_dataclass
class ListCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"c10::List<{self.elem.cpp_type()}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"c10::List<{self.elem.cpp_type_registration_declarations()}>"

    def remove_const_ref(self) -> CType:
        return ListCType(self.elem.remove_const_ref())


@frozen_dataclass
class ArrayRefCType(CType):
    elem: CType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"at::ArrayRef<{self.elem.cpp_type()}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"ArrayRef<{self.elem.cpp_type_registration_declarations()}>"

    def remove_const_ref(self) -> CType:
        return ArrayRefCType(self.elem.remove_const_ref())


@frozen_dataclass
class VectorizedCType(CType):
    elem: BaseCType

    def cpp_type(self, *, strip_ref: bool = False) -> str:
        return f"at::vec::Vectorized<{self.elem.cpp_type()}>"

    def cpp_type_registration_declarations(self) -> str:
        return f"at::vec::Vectorized<{self.elem.cpp_type_registration_declarations()}>"

    def remove_const_ref(self) -> CType:
        return self


# --------------------------------------------------------------------------------------
