"""The names a formula can use that no file of the workspace declares: a short documented list of
std/c10/<cmath> names and of methods of non-Tensor types (std::optional, c10::Scalar, c10::ArrayRef,
std::vector, c10::SymInt, TensorOptions), and the names load_derivatives' saved-variable substitution
replaces. Everything in it is a name the real derivatives.yaml files of 2.x use or the C++ library
guarantees; it is not a guess at what might compile."""

from __future__ import annotations

import re

# std:: names formulas use (the standard library; no file of the workspace declares them).
KNOWN_STD = frozenset(
    "optional nullopt get tuple make_tuple tie vector array move forward abs sqrt pow exp log log1p expm1 min max "
    "numeric_limits string to_string pair make_pair accumulate clamp sin cos tan tanh atan2 floor ceil round isnan "
    "isinf isfinite signbit copysign fabs hypot erf erfc lgamma tgamma function initializer_list size_t int64_t "
    "nullptr_t swap reverse fill all_of any_of none_of transform iota sort unique_ptr shared_ptr make_shared "
    "runtime_error logic_error invalid_argument holds_alternative variant visit ref cref as_const is_same_v".split()
)


# c10:: names formulas use (types and helpers of c10 that are not ATen operators).
KNOWN_C10 = frozenset(
    "Scalar ScalarType SymInt SymIntArrayRef SymFloat IntArrayRef ArrayRef OptionalArrayRef OptionalIntArrayRef "
    "optional nullopt irange MemoryFormat Layout Device DeviceType TensorOptions isComplexType isFloatingType "
    "isIntegralType toRealValueType toComplexType toOpMathType elementSize multiply_integers fromIntArrayRefSlow "
    "asIntArrayRefSlow asIntArrayRefUnchecked MaybeOwned List IValue string_view complex kFloat kDouble kLong kInt "
    "kBool kHalf kBFloat16 kComplexFloat kComplexDouble kStrided kSparse kCPU kCUDA maybe_wrap_dim "
    "SmallVector DimVector SymDimVector make_optional value_or_else".split()
)


# at:: names that are not operators of native_functions.yaml (types, constants, utilities of ATen headers).
KNOWN_AT = frozenset(
    "Tensor TensorList ITensorListRef Scalar ScalarType IntArrayRef SymIntArrayRef OptionalIntArrayRef "
    "OptionalSymIntArrayRef ArrayRef TensorOptions MemoryFormat Layout Device Generator Reduction DimVector "
    "SymDimVector kFloat kDouble kLong kInt kBool kByte kChar kShort kHalf kBFloat16 kComplexFloat kComplexDouble "
    "kComplexHalf kStrided kSparse kSparseCsr kSparseCsc kSparseBsr kSparseBsc kMkldnn kCPU kCUDA kMeta "
    "areAnyTensorSubclassLike isTensorSubclassLike areAnyOptionalTensorSubclassLike infer_size infer_size_symdimvector "
    "infer_size_dimvector maybe_wrap_dim wrap_dim sum_to expand_size is_expandable_to toComplexType toRealValueType "
    "isComplexType isFloatingType isIntegralType GradMode NoGradGuard AutoDispatchBelowADInplaceOrView "
    "native _ops indexing TensorBase typeMetaToScalarType TensorGeometry borrow_from_optional_tensor "
    "symint zeros_like ones_like empty_like full_like where".split()
)


# <cmath> functions formulas call unqualified (also ATen functions, found by argument-dependent lookup on a
# Tensor argument): (fewest, most) arguments of their C++ overloads.
CMATH_ARITY = {
    **dict.fromkeys(
        "sqrt exp log log1p expm1 log2 log10 exp2 abs fabs sin cos tan asin acos atan sinh cosh tanh erf erfc "
        "lgamma tgamma floor ceil round trunc".split(),
        (1, 1),
    ),
    **dict.fromkeys("pow atan2 fmod copysign".split(), (2, 2)),
    "hypot": (2, 3),
}


# <cmath>'s macros of mathematical constants: doubles
MATH_MACROS = frozenset(
    "M_E M_LOG2E M_LOG10E M_LN2 M_LN10 M_PI M_PI_2 M_PI_4 M_1_PI M_2_PI M_2_SQRTPI M_SQRT2 M_SQRT1_2".split()
)


# Unqualified names the generated Functions.cpp / VariableType.cpp see besides helpers and locals:
# its using-declarations are read from the template; these come from the headers it includes
# (torch::autograd's aliases, <cmath> macros and functions, c10 macros, builtin types).
KNOWN_GLOBAL = MATH_MACROS | frozenset(
    "variable_list Variable IndexRange IndexRangeGenerator TensorGeometry ScalarType IntArrayRef SymIntArrayRef "
    "OptionalIntArrayRef TensorOptions MemoryFormat Layout Device Generator Scalar Tensor TensorList SymInt "
    "optional nullopt sqrt pow exp log abs fabs "
    "TORCH_CHECK TORCH_INTERNAL_ASSERT TORCH_WARN AT_ERROR TORCH_CHECK_NOT_IMPLEMENTED "
    "kFloat kDouble kLong kInt kBool kHalf kBFloat16 kComplexFloat kComplexDouble kStrided "
    "GradMode NoGradGuard irange std at c10 torch".split()
)


# C++ keywords and builtin types: never names to resolve.
KEYWORDS = frozenset(
    "auto const constexpr return true false nullptr static_cast dynamic_cast reinterpret_cast const_cast sizeof "
    "decltype template typename if else for while do this new delete int int64_t int32_t uint64_t uint8_t int8_t "
    "double float bool void char long short unsigned signed size_t mutable operator using namespace struct class "
    "noexcept static inline volatile switch case default break continue "
    "and and_eq bitand bitor compl not not_eq or or_eq xor xor_eq".split()  # (alternative tokens: `not x` is `!x`)
)


# std::optional's members (a forward formula's `Tensor?` argument is a `const std::optional<at::Tensor>&`).
OPTIONAL_METHODS = frozenset("has_value value value_or reset emplace swap".split())


# std::vector's members (C++23), for a backward formula's saved `int[]`, `SymInt[]`, `Tensor[]`.
VECTOR_METHODS = frozenset(
    "at front back data begin cbegin end cend rbegin crbegin rend crend empty size max_size reserve capacity "
    "shrink_to_fit clear insert insert_range emplace erase push_back emplace_back append_range pop_back resize swap "
    "assign assign_range get_allocator".split()
)


# c10::Scalar's public members (c10/core/Scalar.h): its `to<Type>()` accessors (one per type of
# AT_FORALL_SCALAR_TYPES_WITH_COMPLEX and the unsigned ones, as of 2.13; older releases have fewer) and the rest.
SCALAR_METHODS = frozenset(
    [
        f"to{t}"
        for t in "Byte Char Short Int Long Half Float Double ComplexHalf ComplexFloat ComplexDouble Bool BFloat16 "
        "Float8_e5m2 Float8_e4m3fn Float8_e5m2fnuz Float8_e4m3fnuz Float8_e8m0fnu UInt16 UInt32 UInt64".split()
    ]
    + "to equal isBoolean isComplex isFloatingPoint isIntegral isSymBool isSymFloat isSymInt isSymbolic isUnsigned "
    "log type conj toSymBool toSymFloat toSymInt".split()
)


# c10::ArrayRef's members (c10/util/ArrayRef.h; since 2.10 partly torch/headeronly/util/HeaderOnlyArrayRef.h):
# what a forward formula may call on an `int[]` / `SymInt[]` argument (an IntArrayRef / SymIntArrayRef).
ARRAYREF_METHODS = frozenset(
    "begin end cbegin cend rbegin rend allMatch empty data size front back equals slice at vec".split()
)


# Methods of the non-Tensor types formulas call methods on: the members above, plus what std::vector,
# c10::SymInt, TensorOptions and std::tuple-likes add that formulas call (a Tensor's methods come from the
# files). A method of no receiver type at all is an error whatever the receiver (resolve.py).
KNOWN_METHODS = (
    OPTIONAL_METHODS
    | SCALAR_METHODS
    | ARRAYREF_METHODS
    | frozenset(
        "sizes push_back emplace_back reserve insert "  # std::vector
        "guard_int expect_int maybe_as_int is_symbolic "  # c10::SymInt
        "dtype device layout memory_format requires_grad pinned_memory "  # TensorOptions
        "get".split()  # std::get-likes
    )
)


def saved_call_names() -> frozenset[str]:
    """Method and function names that load_derivatives' saved-variable substitution replaces before C++
    sees them (`self.sym_blocksize()`, `to_args_sizes(tensors)`): valid in a formula even where no header
    declares them for that receiver."""
    from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS

    names = set()
    for r in TORCHGEN_REPLACEMENTS:
        m = re.search(r"(\w+)\\\(", r.pattern)
        if m:
            names.add(m.group(1))
    return frozenset(names)


__all__ = [
    "KNOWN_STD",
    "KNOWN_C10",
    "KNOWN_AT",
    "CMATH_ARITY",
    "MATH_MACROS",
    "KNOWN_GLOBAL",
    "KEYWORDS",
    "OPTIONAL_METHODS",
    "VECTOR_METHODS",
    "SCALAR_METHODS",
    "ARRAYREF_METHODS",
    "KNOWN_METHODS",
]
