"""The 2021 C++ API strings (derivls.aten.legacy_cpp) and the 2021 rules built on them."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.aten import legacy_cpp
from derivls.aten.native import NativeIndex
from derivls.aten.schema import Argument, FunctionSchema
from derivls.derivatives.legacy import legacy_op_numbering, legacy_saved_variables
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.derivatives.saved import plain_name


@pytest.mark.parametrize(
    ("argument", "cpp", "saved"),
    [
        ("Tensor self", "const Tensor &", "Tensor"),
        ("Tensor(a!) self", "Tensor &", "Tensor"),
        ("Tensor? weight", "const c10::optional<Tensor> &", "c10::optional<Tensor>"),
        ("Tensor(a!)? out", "Tensor &", "Tensor"),
        ("Tensor?[] indices", "const c10::List<c10::optional<Tensor>> &", "c10::List<c10::optional<Tensor>>"),
        ("Tensor[] tensors", "TensorList", "TensorList"),
        ("int[] size", "IntArrayRef", "IntArrayRef"),
        ("int[2] stride", "IntArrayRef", "IntArrayRef"),
        ("int[]? output_size", "c10::optional<IntArrayRef>", "c10::optional<IntArrayRef>"),
        ("float[]? scale_factors", "c10::optional<ArrayRef<double>>", "c10::optional<ArrayRef<double>>"),
        ("float[] p", "ArrayRef<double>", "ArrayRef<double>"),
        ("bool[3] output_mask", "std::array<bool,3>", "std::array<bool,3>"),
        ("Dimname[] names", "DimnameList", "DimnameList"),
        ("Dimname[]? names", "c10::optional<DimnameList>", "c10::optional<DimnameList>"),
        ("Scalar alpha", "Scalar", "Scalar"),
        ("Scalar? min", "c10::optional<Scalar>", "c10::optional<Scalar>"),
        ("int dim", "int64_t", "int64_t"),
        ("int? dim", "c10::optional<int64_t>", "c10::optional<int64_t>"),
        ("float eps", "double", "double"),
        ("str mode", "std::string", "std::string"),
        ("ScalarType? dtype", "c10::optional<ScalarType>", "c10::optional<ScalarType>"),
        ("Generator? generator", "c10::optional<Generator>", "c10::optional<Generator>"),
        ("MemoryFormat? memory_format", "c10::optional<MemoryFormat>", "c10::optional<MemoryFormat>"),
    ],
)
def test_argument_types(argument: str, cpp: str, saved: str) -> None:
    a = Argument.parse(argument, legacy=True)
    assert legacy_cpp.argument_type(a) == cpp
    assert legacy_cpp.saved_type(cpp) == saved


def test_types_the_2021_codegen_did_not_have() -> None:
    with pytest.raises(ValueError):
        legacy_cpp.argument_type(Argument.parse("SymInt[] size"))


def schema(text: str) -> FunctionSchema:
    return FunctionSchema.parse(text, legacy=True)


def test_arguments_out_first_and_tensor_options_grouped() -> None:
    out = legacy_cpp.cpp_arguments(
        schema("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    )
    assert [(b.name, b.type, b.default) for b in out] == [
        ("out", "Tensor &", None),
        ("self", "const Tensor &", None),
        ("other", "const Tensor &", None),
        ("alpha", "Scalar", "1"),
    ]
    like = legacy_cpp.cpp_arguments(
        schema(
            "empty_like(Tensor self, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
            "bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"
        )
    )
    assert [(b.name, b.type) for b in like] == [
        ("self", "const Tensor &"),
        ("options", "const TensorOptions &"),
        ("memory_format", "c10::optional<MemoryFormat>"),
    ]


def test_returns() -> None:
    f = schema("max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)")
    assert legacy_cpp.return_names(f) == ["values", "indices"]
    assert legacy_cpp.returns_type(f.returns) == "std::tuple<Tensor,Tensor>"
    inplace = schema("abs_(Tensor(a!) self) -> Tensor(a!)")
    assert legacy_cpp.return_names(inplace) == ["self"]
    assert legacy_cpp.return_type(inplace.returns[0]) == "Tensor &"
    assert legacy_cpp.return_type(schema("unbind.int(Tensor(a) self, int dim=0) -> Tensor(a)[]").returns[0]) == (
        "std::vector<Tensor>"
    )


def test_cpp_signature() -> None:
    assert legacy_cpp.cpp_signature(schema("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")) == (
        "Tensor add(const Tensor & self, const Tensor & other, Scalar alpha=1)"
    )


def test_signature_keeps_tensor_options() -> None:
    """2021 grouping: a factory function and its out= variant have different signatures (2.x: the same)."""
    factory = schema(
        "zeros(int[] size, *, ScalarType? dtype=None, Layout? layout=None, Device? device=None, "
        "bool? pin_memory=None) -> Tensor"
    )
    out = schema("zeros.out(int[] size, *, Tensor(a!) out) -> Tensor(a!)")
    assert factory.signature() == out.signature()
    assert legacy_cpp.signature_key(factory) != legacy_cpp.signature_key(out)
    assert legacy_cpp.signature_key(schema("abs(Tensor self) -> Tensor")) == legacy_cpp.signature_key(
        schema("abs_(Tensor(a!) self) -> Tensor(a!)")
    )


def test_saved_variables_rules() -> None:
    variables = [("self", "const Tensor &"), ("other", "const Tensor &"), ("dim", "int64_t")]
    formula, saved = legacy_saved_variables(
        "foo(self.sizes(), self.size(dim), other.numel(), zeros_like(other), self.dim(), self.options(), "
        "to_args_sizes(self), TensorGeometry(other), other.scalar_type(), dim)",
        variables,
        ("self",),
    )
    assert formula == (
        "foo(self_sizes, self_argsize_dim, other_numel, other_info.zeros(), self_dim, self_options, "
        "self_args_sizes, other_geometry, other_scalar_type, dim)"
    )
    assert [(plain_name(s.nctype), s.nctype.cpp_type(), s.expr) for s in saved] == [
        ("self_sizes", "IntArrayRef", "self.sizes()"),
        ("self_options", "at::TensorOptions", "self.options()"),
        ("self_argsize_dim", "int64_t", "self.size(dim)"),
        ("self_args_sizes", "std::vector<std::vector<int64_t>>", "to_args_sizes(self)"),
        ("self_dim", "int64_t", "self.dim()"),
        ("other_info", "TypeAndSize", "other"),
        ("other_numel", "int64_t", "other.numel()"),
        ("other_geometry", "TensorGeometry", "TensorGeometry(other)"),
        ("other_scalar_type", "ScalarType", "other.scalar_type()"),
        ("dim", "int64_t", "dim"),
    ]


def test_op_numbering_suffixes_only_duplicates(legacy_dir: Path) -> None:
    index = NativeIndex.load(legacy_dir / "native_functions.yaml", legacy=True)
    text = (
        "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
        "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  self: grad\n"
        "- name: add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor\n  self: grad\n"
        "- name: ceil(Tensor self) -> Tensor\n  self: zeros_like(grad)\n"
        "- name: nonzero(Tensor self) -> Tensor\n  output_differentiability: [False]\n"
    )
    analysis = DocumentAnalyzer(index, None, "legacy").analyse(text)
    assert [e.ops for e in analysis.entries] == [
        (("Default", "AbsBackward"),),
        (("Default", "AddBackward0"),),
        (("Default", "AddBackward1"),),
        (("Default", "CeilBackward"),),
        (("Default", None),),
    ]
    assert legacy_op_numbering([]) == []


# -- auto: which profile a workspace gets --------------------------------------------------------

TINY_NATIVE = "- func: abs(Tensor self) -> Tensor\n  variants: function, method\n"


def test_auto_from_the_native_functions() -> None:
    from derivls.derivatives.profiles import LEGACY, TORCHGEN, choose

    # no tags.yaml and no SymInt is not enough: small 2.x-style files look like that too
    assert choose("auto", None, TINY_NATIVE, has_tags=False) == TORCHGEN
    marked = TINY_NATIVE + "  use_c10_dispatcher: full\n"
    assert choose("auto", None, marked, has_tags=False) == LEGACY
    assert choose("auto", None, marked, has_tags=True) == TORCHGEN  # tags.yaml appeared in 2022
    symint = marked + "- func: zeros(SymInt[] size) -> Tensor\n  use_c10_dispatcher: full\n"
    assert choose("auto", None, symint, has_tags=False) == TORCHGEN
    assert choose("auto", None, None, has_tags=False) == TORCHGEN
    assert choose("legacy", None, None, has_tags=True) == LEGACY


def test_auto_from_the_layout(tmp_path: Path) -> None:
    from derivls.derivatives.profiles import LEGACY, TORCHGEN, choose

    marked = TINY_NATIVE + "  use_c10_dispatcher: full\n"
    old = tmp_path / "old"
    (old / "tools" / "autograd").mkdir(parents=True)
    (old / "tools" / "codegen").mkdir()
    assert choose("auto", old / "tools" / "autograd" / "derivatives.yaml", None, False) == LEGACY
    new = tmp_path / "new"
    (new / "tools" / "autograd").mkdir(parents=True)
    (new / "torchgen").mkdir()
    # the layout wins over what native_functions.yaml holds
    assert choose("auto", new / "tools" / "autograd" / "derivatives.yaml", marked, False) == TORCHGEN
    wheel = tmp_path / "site" / "torchgen" / "packaged" / "autograd"
    wheel.mkdir(parents=True)
    assert choose("auto", wheel / "derivatives.yaml", marked, False) == TORCHGEN
    elsewhere = tmp_path / "elsewhere" / "derivatives.yaml"
    assert choose("auto", elsewhere, marked, False) == LEGACY


def test_the_choice_says_why() -> None:
    from derivls.derivatives.profiles import choose

    assert "set to legacy" in choose("legacy", None, None, False).describe()
    assert "tags.yaml" in choose("auto", None, TINY_NATIVE, True).describe()
