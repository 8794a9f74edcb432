"""derivls.aten.cpp: C++ API types, byte for byte torchgen's."""

from __future__ import annotations

import pytest

from derivls.aten import cpp
from derivls.aten.cpp import CppSignatureGroup, cpp_arguments, return_names, return_type, returns_type
from derivls.aten.cpp_types import (
    BaseCType,
    Binding,
    ConstRefCType,
    MutRefCType,
    NamedCType,
    OptionalCType,
    SpecialArgName,
    TupleCType,
    VectorCType,
    symIntArrayRefT,
    tensorT,
)
from derivls.aten.native import NativeIndex
from derivls.aten.schema import Argument, FunctionSchema, Type


@pytest.fixture(scope="module")
def index(real_files) -> NativeIndex:
    return NativeIndex.load(real_files.native, real_files.tags)


@pytest.fixture(scope="module")
def torchgen_functions(real_files):
    from torchgen.gen import parse_native_yaml

    return parse_native_yaml(str(real_files.native), str(real_files.tags)).native_functions


def _binding_view(bs):
    return [
        (
            b.name,
            str(b.nctype.name),
            b.nctype.cpp_type(),
            b.nctype.remove_const_ref().cpp_type(),
            b.nctype.cpp_type(strip_ref=True),
            b.type,
            b.default,
            b.decl(),
            str(b.argument),
        )
        for b in bs
    ]


def test_cpp_arguments_and_returns_match_torchgen_for_every_function(index, torchgen_functions):
    from torchgen.api import cpp as tcpp
    from torchgen.api.types import CppSignatureGroup as TCppSignatureGroup
    from torchgen.context import with_native_function
    from torchgen.packaged.autograd.load_derivatives import cpp_arguments as t_cpp_arguments

    @with_native_function
    def theirs(f):
        sigs = TCppSignatureGroup.from_native_function(f, method=False)
        msigs = TCppSignatureGroup.from_native_function(f, method=True)
        return (
            [(s.name(), s.decl(), s.defn(), s.type()) for s in sigs.signatures()],
            [s.decl() for s in msigs.signatures()],
            [tcpp.return_type(r, symint=True).remove_const_ref().cpp_type() for r in f.func.returns],
            [tcpp.return_type(r).cpp_type() for r in f.func.returns],
            tcpp.returns_type(f.func.returns).cpp_type(),
        )

    def ours(f):
        sigs = CppSignatureGroup.from_native_function(f, method=False)
        msigs = CppSignatureGroup.from_native_function(f, method=True)
        return (
            [(s.name(), s.decl(), s.defn(), s.type()) for s in sigs.signatures()],
            [s.decl() for s in msigs.signatures()],
            [return_type(r, symint=True).remove_const_ref().cpp_type() for r in f.func.returns],
            [
                return_type(r, use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors).cpp_type()
                for r in f.func.returns
            ],
            returns_type(
                f.func.returns, use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors
            ).cpp_type(),
        )

    assert len(index.functions) == len(torchgen_functions)
    for t, d in zip(torchgen_functions, index.functions):
        assert str(t.func) == str(d.func)
        assert _binding_view(cpp_arguments(d)) == _binding_view(t_cpp_arguments(t)), str(d.func)
        assert list(return_names(d)) == list(tcpp.return_names(t)), str(d.func)
        assert cpp.name(d.func) == tcpp.name(t.func)
        assert cpp.name(d.func, faithful_name_for_out_overloads=True, symint_overload=True) == tcpp.name(
            t.func, faithful_name_for_out_overloads=True, symint_overload=True
        )
        assert ours(d) == theirs(t), str(d.func)


def _f(index: NativeIndex, schema: str):
    return index.by_schema[schema]


def _types(bs: list[Binding]) -> list[tuple[str, str]]:
    return [(b.name, b.type) for b in bs]


def test_out_arguments_come_first_and_self_is_named_self(index):
    f = _f(index, "add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    assert _types(cpp_arguments(f)) == [
        ("out", "at::Tensor &"),
        ("self", "const at::Tensor &"),
        ("other", "const at::Tensor &"),
        ("alpha", "const at::Scalar &"),
    ]
    assert [b.default for b in cpp_arguments(f)] == [None, None, None, "1"]
    assert cpp.name(f.func) == "add_out"
    assert list(return_names(f)) == ["out"]
    inplace = _f(index, "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    assert list(return_names(inplace)) == ["self"]
    assert _types(cpp_arguments(inplace))[0] == ("self", "at::Tensor &")


def test_tensor_options_grouping_and_memory_format(index):
    f = _f(
        index,
        "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor",
    )
    bs = cpp_arguments(f)
    assert _types(bs) == [
        ("size", "c10::SymIntArrayRef"),
        ("options", "at::TensorOptions"),
        ("memory_format", "::std::optional<at::MemoryFormat>"),
    ]
    assert bs[1].default == "{}"
    assert bs[2].nctype.name == SpecialArgName.possibly_redundant_memory_format
    assert bs[2].default == "::std::nullopt"
    # the faithful signature spells the four options out, in schema order, without defaults
    faithful = CppSignatureGroup.from_native_function(f, method=False).symint_faithful_signature
    assert [b.name for b in faithful.arguments()] == [
        "size",
        "dtype",
        "layout",
        "device",
        "pin_memory",
        "memory_format",
    ]
    assert all(b.default is None for b in faithful.arguments())


def test_symint_signature_is_preferred(index):
    f = _f(index, "view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert _types(cpp_arguments(f)) == [("self", "const at::Tensor &"), ("size", "c10::SymIntArrayRef")]
    assert cpp_arguments(f)[1].nctype == NamedCType("size", BaseCType(symIntArrayRefT))
    sig = CppSignatureGroup.from_native_function(f, method=False).signature
    assert sig.arguments()[1].type == "at::IntArrayRef"


def test_tensor_lists_follow_structured_groups(index):
    # cat is structured: Tensor[] is an ITensorListRef there, a TensorList elsewhere
    cat = _f(index, "cat(Tensor[] tensors, int dim=0) -> Tensor")
    assert cat.part_of_structured_group
    assert cpp_arguments(cat)[0].type == "const at::ITensorListRef &"
    assert cpp_arguments(cat)[0].nctype.remove_const_ref().cpp_type() == "at::ITensorListRef"
    stack = _f(index, "stack(Tensor[] tensors, int dim=0) -> Tensor")
    assert not stack.part_of_structured_group
    assert cpp_arguments(stack)[0].type == "at::TensorList"


def test_argument_types_by_hand():
    def t(type_s: str, mutable: bool = False, **kw) -> str:
        return cpp.argumenttype_type(Type.parse(type_s), mutable=mutable, binds="x", **kw).cpp_type()

    assert t("Tensor") == "const at::Tensor &"
    assert t("Tensor", mutable=True) == "at::Tensor &"
    assert t("Tensor", mutable=True, use_const_ref_for_mutable_tensors=True) == "const at::Tensor &"
    assert t("Tensor?") == "const ::std::optional<at::Tensor> &"
    assert t("Tensor?", mutable=True) == "at::Tensor &"  # torchgen's "discrepancy"
    assert t("Tensor?[]") == "const c10::List<::std::optional<at::Tensor>> &"
    assert t("Tensor[]") == "at::TensorList"
    assert t("Tensor[]", use_ilistref_for_tensor_lists=True) == "const at::ITensorListRef &"
    assert t("int[]") == "at::IntArrayRef"
    assert t("int[2]") == "at::IntArrayRef"
    assert t("int[]?") == "at::OptionalIntArrayRef"
    assert t("SymInt[]") == "at::IntArrayRef"
    assert t("SymInt[]", symint=True) == "c10::SymIntArrayRef"
    assert t("SymInt[]?", symint=True) == "at::OptionalSymIntArrayRef"
    assert t("SymInt", symint=True) == "c10::SymInt"
    assert t("SymInt") == "int64_t"
    assert t("SymInt?", symint=True) == "::std::optional<c10::SymInt>"
    assert t("bool[3]") == "::std::array<bool,3>"
    assert t("float[]") == "at::ArrayRef<double>"
    assert t("float[]?") == "::std::optional<at::ArrayRef<double>>"
    assert t("Scalar") == "const at::Scalar &"
    assert t("Scalar?") == "const ::std::optional<at::Scalar> &"
    assert t("Scalar[]") == "at::ArrayRef<at::Scalar>"
    assert t("str") == "c10::string_view"
    assert t("str?") == "::std::optional<c10::string_view>"
    assert t("ScalarType?") == "::std::optional<at::ScalarType>"
    assert t("Generator?") == "::std::optional<at::Generator>"
    assert t("int[]", remove_non_owning_ref_types=True) == "::std::vector<int64_t>"
    with pytest.raises(ValueError, match="bool"):
        t("bool[]")


def test_parametrize_sets_defaults():
    ty = Type.parse("Tensor[]")
    assert cpp.argumenttype_type(ty, mutable=False, binds="x").cpp_type() == "at::TensorList"
    with cpp.parametrize(use_const_ref_for_mutable_tensors=True, use_ilistref_for_tensor_lists=True):
        assert cpp.argumenttype_type(ty, mutable=False, binds="x").cpp_type() == "const at::ITensorListRef &"
        m = cpp.argumenttype_type(Type.parse("Tensor"), mutable=True, binds="x")
        assert m.cpp_type() == "const at::Tensor &"
    assert cpp.argumenttype_type(ty, mutable=False, binds="x").cpp_type() == "at::TensorList"


def test_return_types_and_names():
    f = FunctionSchema.parse("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert returns_type(f.returns).cpp_type() == "::std::tuple<at::Tensor,at::Tensor>"
    assert list(return_names(f)) == ["values", "indices"]
    g = FunctionSchema.parse("f(Tensor self) -> (Tensor, Tensor)")
    assert list(return_names(g)) == ["result0", "result1"]
    assert list(return_names(FunctionSchema.parse("f(Tensor self) -> Tensor"))) == ["result"]
    # a return named like an argument gets a _return suffix
    h = FunctionSchema.parse("f(Tensor self, Tensor values) -> Tensor values")
    assert list(return_names(h)) == ["values_return"]
    assert returns_type(()).cpp_type() == "void"
    r = FunctionSchema.parse("f(Tensor self) -> SymInt[]").returns[0]
    assert return_type(r).cpp_type() == "::std::vector<c10::SymInt>"  # returns always use SymInt
    w = FunctionSchema.parse("abs_(Tensor(a!) self) -> Tensor(a!)").returns[0]
    assert return_type(w).cpp_type() == "at::Tensor &"
    assert return_type(w).remove_const_ref().cpp_type() == "at::Tensor"
    assert return_type(w, use_const_ref_for_mutable_tensors=True).cpp_type() == "const at::Tensor &"


def test_default_expressions():
    d = cpp.default_expr
    assert d("None", Type.parse("Tensor?"), symint=False) == "{}"
    assert d("None", Type.parse("int?"), symint=False) == "::std::nullopt"
    assert d("[1,1]", Type.parse("int[2]"), symint=False) == "{1,1}"
    assert d("1", Type.parse("SymInt[2]"), symint=True) == "c10::SymInt(1)"
    assert d("1", Type.parse("int[2]"), symint=False) == "1"
    assert d("'valid'", Type.parse("str"), symint=False) == '"valid"'
    assert d("True", Type.parse("bool"), symint=False) == "true"
    assert d("Mean", Type.parse("int"), symint=False) == "at::Reduction::Mean"
    assert d("contiguous_format", Type.parse("MemoryFormat"), symint=False) == "c10::MemoryFormat::Contiguous"
    with pytest.raises(ValueError):
        d("1", Type.parse("int[]"), symint=False)


def test_ctypes_are_hashable_values():
    a = NamedCType("x", ConstRefCType(OptionalCType(BaseCType(tensorT))))
    assert a.remove_const_ref() == NamedCType("x", OptionalCType(BaseCType(tensorT)))
    assert hash(a) == hash(NamedCType("x", ConstRefCType(OptionalCType(BaseCType(tensorT)))))
    t = TupleCType([BaseCType(tensorT), MutRefCType(BaseCType(tensorT))])  # lists accepted
    assert t.remove_const_ref() == TupleCType((BaseCType(tensorT), BaseCType(tensorT)))
    assert hash(t)
    assert VectorCType(BaseCType(tensorT)).cpp_type() == "::std::vector<at::Tensor>"
    assert a.cpp_type(strip_ref=True) == "::std::optional<at::Tensor>"
    b = Binding("x", a, Argument.parse("Tensor? x"), "{}")
    assert b.type == "const ::std::optional<at::Tensor> &" and b.decl() == "const ::std::optional<at::Tensor> & x={}"
    assert b.no_default().default is None and b.rename("y").name == "y"
