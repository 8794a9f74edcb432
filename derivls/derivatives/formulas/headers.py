"""The names a formula can use that C++ headers declare, read from the workspace's own files.

- FunctionsManual.h: the autograd helpers (every overload, with its declaration text and parameters).
- TensorBody.h (template and/or generated) and TensorBase.h: Tensor methods written by hand.
- native_functions.yaml (the NativeIndex): `at::` functions (function variants, their `_symint` and
  out forms) and Tensor methods (method variants).
- The Functions.cpp template: its `using` declarations.
- `KNOWN_*` below: a short documented list of std/c10/<cmath> names and methods of non-Tensor types
  (std::optional, c10::Scalar, c10::ArrayRef, std::vector, c10::SymInt, TensorOptions) that no file
  above declares. Everything in it is a name the real derivatives.yaml files of 2.x use or the
  C++ library guarantees; it is not a guess at what might compile.
"""

from __future__ import annotations

import itertools
import os
import re
import weakref
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from derivls.aten import cpp
from derivls.aten.native import NativeIndex, Variant
from derivls.base.diskcache import DiskCache, content_key
from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.cparams import has_default, parameter_name, parameter_type, split_top
from derivls.derivatives.formulas.members import Member, class_body, members
from derivls.derivatives.formulas.sources import Sources

TYPE_CHECKING = False  # typing is not imported at run time (see derivls/base/frozen.py)
if TYPE_CHECKING:
    from typing import Any

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


def _saved_call_names() -> frozenset[str]:
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


_DECL_NAME = re.compile(r"(?:operator\s*\S+|~?\w+)\s*$")
_METHOD_LINE = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:[\w:]+(?:<[^;{}()]*>)?[\s&*]+)+(\w+)\s*\(")
_NOT_NEWLINE = re.compile(r"[^\n]")
_NOT_A_TYPE = frozenset({"return", "if", "else", "case", "throw", "delete", "new", "goto", "sizeof"})


@frozen_dataclass
class Declaration:
    """One helper overload of FunctionsManual.h."""

    name: str
    text: str  # the declaration, whitespace normalised, without TORCH_API and the body
    parameters: tuple[str, ...]  # parameter names in order
    parameter_texts: tuple[str, ...]  # each parameter as written (type, name, default)
    line: int  # 0-based line in the header
    path: str

    @property
    def arity(self) -> tuple[int, float]:
        """(fewest, most) arguments a call of this overload may pass: parameters with a default may be
        left out; a `...` parameter takes any number."""
        if any("..." in p for p in self.parameter_texts):
            return sum(1 for p in self.parameter_texts if "..." not in p and not has_default(p)), float("inf")
        params = [p for p in self.parameter_texts if p != "void"]
        return sum(1 for p in params if not has_default(p)), len(params)


_TEMPLATE_PARAMETER = re.compile(r"\b(?:typename|class)\s*(?:\.\.\.\s*)?(\w+)")


def _non_dependent(declaration: Declaration, types: list[str]) -> tuple[str, ...]:
    """`types` of a helper's parameters, "" (no known type) for those of a template that name one of its
    template parameters (`T other`, `const std::vector<T>&`)."""
    if not declaration.text.startswith("template"):
        return tuple(types)
    head = declaration.text[: declaration.text.find("(")]
    names = _TEMPLATE_PARAMETER.findall(head)
    return tuple("" if any(re.search(rf"\b{re.escape(n)}\b", t) for n in names) else t for t in types)


def _strip_comments(text: str) -> str:
    """Comments and preprocessor lines blanked out, keeping every offset and newline."""

    def blank(m: re.Match[str]) -> str:
        found = m.group(0)
        if "\n" not in found:  # `//` comments, one-line `/* */` and preprocessor lines: no regex
            return " " * len(found)
        return _NOT_NEWLINE.sub(" ", found)

    text = re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)
    return re.sub(r"(?m)^[ \t]*#[^\n]*", blank, text)


def parse_declarations(text: str, path: str = "FunctionsManual.h") -> list[Declaration]:
    """Function declarations (and inline definitions) at namespace level of a header."""
    clean = _strip_comments(text)
    line_of = _LineCounter(clean)
    decls: list[Declaration] = []
    depth = 0
    start = 0
    initializers = 0  # open `{` of default arguments (`std::optional<T> x = {}`): not bodies
    n = len(clean)
    # jump from delimiter to delimiter (a regex scan, not a loop over every character)
    for m in _DELIMITER.finditer(clean):
        i = m.start()
        c = clean[i]
        if depth == 0 and (initializers or (c == "{" and _inside_parentheses(clean, start, i))):
            initializers += 1 if c == "{" else -1 if c == "}" else 0
            continue
        if c == "{":
            stmt = clean[start:i]
            if depth == 0 and "namespace" in stmt and re.search(r"\bnamespace\b", stmt):
                start = i + 1
                continue  # a namespace's braces do not nest declarations
            if depth == 0:
                decl = _declaration(stmt, line_of, start, path)
                if decl is not None:
                    decls.append(decl)
            depth += 1
        elif c == "}":
            if depth > 0:
                depth -= 1
            if depth == 0:
                start = i + 1
                if i + 1 < n and clean[i + 1] == ";":
                    start = i + 2
        elif depth == 0:  # ";"
            decl = _declaration(clean[start:i], line_of, start, path)
            if decl is not None:
                decls.append(decl)
            start = i + 1
    return decls


_DELIMITER = re.compile(r"[{};]")


def _inside_parentheses(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] leaves a `(` open (a `{` there is in a parameter list)."""
    return text.count("(", start, end) > text.count(")", start, end)


class _LineCounter:
    """0-based line of an offset; offsets asked in increasing order cost only the text between them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 0

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset)
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _normalized(text: str) -> str:
    """Whitespace runs → one space (text already in that form, the usual case, is returned as is)."""
    if "  " not in text and text.replace(" ", "").isprintable():  # every other whitespace is unprintable
        return text
    return _WHITESPACE.sub(" ", text)


_WHITESPACE = re.compile(r"\s+")


def _declaration(stmt: str, line_of: _LineCounter, offset: int, path: str) -> Declaration | None:
    if re.match(r"\s*extern\b", stmt) and "(" not in stmt:
        m = re.search(r"(\w+)\s*$", stmt)  # extern const char* kCudnnDoubleBackwardMsg;
        if m is None:
            return None
        line = line_of(offset + len(stmt) - len(stmt.lstrip()))
        return Declaration(m.group(1), re.sub(r"\s+", " ", stmt.strip()), (), (), line, path)
    if "(" not in stmt or re.match(r"\s*(struct|class|using|typedef|extern)\b", stmt):
        return None
    lead = len(stmt) - len(stmt.lstrip())
    body = stmt.strip()
    paren = body.find("(")
    m = _DECL_NAME.search(body[:paren])
    if m is None or not re.match(r"[\w~]", m.group(0)):
        return None
    name = m.group(0).strip()
    if not body[:paren].strip() or name == body[:paren].strip():
        return None  # a call or constructor, not a declaration with a return type
    close = body.rfind(")")
    params = split_top(body[paren + 1 : close])
    text = re.sub(r"\s+", " ", re.sub(r"\bTORCH_API\s+", "", body))
    line = line_of(offset + lead)
    names = tuple(parameter_name(p) for p in params)
    return Declaration(name, text, names, tuple(_normalized(p) for p in params), line, path)


def method_names(text: str) -> set[str]:
    """Names declared as functions/methods in a C++ header (class members and free functions alike)."""
    names = set()
    for line in _strip_comments(text).splitlines():
        if "(" not in line:  # what _METHOD_LINE needs: most lines go without trying it
            continue
        m = _METHOD_LINE.match(line)
        if m is None:
            continue
        first = line.split()[0] if line.split() else ""
        if first in _NOT_A_TYPE:
            continue
        names.add(m.group(1))
    return names


# `using namespace …;` of 2.x's VariableType.cpp template (2.1 to 2.15 alike), when it cannot be read
_FORWARD_NAMESPACES = frozenset({"at", "torch::autograd::generated", "torch::autograd::generated::details"})

# ATen functions whose unqualified name VariableType.cpp's lookup finds twice: through `using namespace at;`
# and, from torch::autograd, as something c10 declares — g++: "reference to 'complex' is ambiguous"
# (every ATen function name of 2.13 tried there: tests/compile/test_variable_type_lookup.py).
FORWARD_AMBIGUOUS = {
    "complex": "the class template c10::complex",
    "is_complex": "the type trait c10::is_complex",
    "std": "the namespace std",
}


def using_names(text: str) -> tuple[set[str], set[str]]:
    """(names of `using ns::Name;`, namespaces of `using namespace ns;`) in a source file."""
    names = set(re.findall(r"(?m)^\s*using\s+(?!namespace\b)[\w:]*::(\w+)\s*;", text))
    namespaces = set(re.findall(r"(?m)^\s*using\s+namespace\s+([\w:]+)\s*;", text))
    return names, namespaces


class NameTable:
    """C++ names of ATen operators → their schemas. `<name>_symint` is answered on demand (only for
    operators that have SymInt arguments, as torchgen's cpp.name does), so building it prints nothing.
    It holds schema strings only (plain values: what the header cache stores); each schema's
    NativeFunction is looked up in `functions` (the index's by_schema) when a name is asked for."""

    def __init__(
        self, functions: Mapping[str, object] | None = None, names: dict[str, list[str]] | None = None
    ) -> None:
        self._functions: Mapping[str, object] = functions if functions is not None else {}
        self._names: dict[str, list[str]] = names if names is not None else {}

    def add(self, name: str, schema: str) -> None:
        self._names.setdefault(name, []).append(schema)

    def _entries(self, name: str) -> list[tuple[str, object]]:
        hit = self._names.get(name)
        functions = self._functions
        if hit is not None:
            return [(s, functions[s]) for s in hit]
        if name.endswith("_symint"):
            base = self._names.get(name[: -len("_symint")], ())
            return [(s, functions[s]) for s in base if functions[s].func.has_symint()]  # type: ignore[attr-defined]
        return []

    def __contains__(self, name: object) -> bool:
        return isinstance(name, str) and bool(self._entries(name))

    def get(self, name: str, default: object = ()) -> list[str]:
        return [s for s, _ in self._entries(name)] or list(default)  # type: ignore[call-overload]

    def __getitem__(self, name: str) -> list[str]:
        return self.get(name)

    def __iter__(self):  # noqa: ANN204  (every name, for closest-name suggestions: only on a mistake)
        functions = self._functions
        for name, schemas in self._names.items():
            yield name
            if any(functions[s].func.has_symint() for s in schemas):  # type: ignore[attr-defined]
                yield name + "_symint"

    def __len__(self) -> int:
        return len(self._names)


@dataclass
class HeaderIndex:
    """Everything header-declared a formula may name, for one workspace."""

    sources: Sources
    helpers: dict[str, list[Declaration]] = field(default_factory=dict)
    tensor_methods: set[str] = field(default_factory=set)
    at_functions: NameTable = field(default_factory=lambda: NameTable())  # function variants
    method_schemas: NameTable = field(default_factory=lambda: NameTable())  # method variants
    using: set[str] = field(default_factory=set)
    # the namespaces VariableType.cpp (where forward formulas are compiled) has `using namespace` of: with
    # `at` among them an unqualified ATen call in a forward formula needs no argument-dependent lookup
    forward_namespaces: set[str] = field(default_factory=lambda: set(_FORWARD_NAMESPACES))
    # member functions TensorBody.h's at::Tensor (the template: the hand-written ones) and TensorBase.h's
    # at::TensorBase declare, and the names at::Tensor brings back from TensorBase (`using TensorBase::size;`)
    tensor_members: dict[str, list[Member]] = field(default_factory=dict)
    base_members: dict[str, list[Member]] = field(default_factory=dict)
    tensor_using: set[str] = field(default_factory=set)
    problems: tuple[str, ...] = ()  # sources that could not be read: what is skipped because of it
    # False for a native_functions.yaml excerpt (no function has a dispatch section): ATen names that
    # are not in it may still exist, so they are not judged
    native_complete: bool = False
    _overloads: dict[tuple[str, bool], list[tuple[int, int, cpp.CppSignature]]] = field(
        default_factory=dict, repr=False
    )
    _typed: dict[tuple[str, bool | None], tuple[TypedOverload, ...]] = field(default_factory=dict, repr=False)
    _methods: dict[str, tuple[TypedOverload, ...]] = field(default_factory=dict, repr=False)

    @property
    def has_helpers(self) -> bool:
        return self.sources.functions_manual is not None

    @property
    def has_tensor_methods(self) -> bool:
        return bool(self.sources.tensor_body) and self.sources.tensor_base is not None

    def is_method(self, name: str) -> bool:
        """A method some receiver a formula may have has: a Tensor (or a call the saved-variable
        substitution rewrites) or a listed non-Tensor type."""
        return self.is_tensor_method(name, backward=True) or name in KNOWN_METHODS

    def tensor_method_names(self) -> set[str]:
        """Every Tensor method's name (TensorBody.h/TensorBase.h and method variants): what a misspelled
        method is compared with."""
        return self.tensor_methods | set(self.method_schemas)

    def is_tensor_method(self, name: str, backward: bool) -> bool:
        """A method an at::Tensor has (in a backward formula, also a call the saved-variable substitution
        replaces before C++ sees it)."""
        return name in self.tensor_methods or name in self.method_schemas or (backward and name in _SAVED_CALLS)

    @staticmethod
    def is_saved_call(name: str) -> bool:
        """A call load_derivatives' saved-variable substitution replaces in a backward formula."""
        return name in _SAVED_CALLS

    def is_at_name(self, name: str) -> bool:
        return name in self.at_functions or name in KNOWN_AT or name in KNOWN_C10

    def only_helper(self, name: str) -> list[Declaration]:
        """The overloads of `name` when a call of it can reach nothing but FunctionsManual.h's helpers (not
        an ATen function by argument-dependent lookup, a using-declaration, a listed name, a call the
        saved-variable substitution rewrites); else []."""
        if name in self.at_functions or name in self.using or name in KNOWN_GLOBAL or name in _SAVED_CALLS:
            return []
        if name in KNOWN_AT or name in KNOWN_C10 or name in KNOWN_STD:
            return []
        return self.helpers.get(name, [])

    def aten_overloads(self, name: str, method: bool) -> list[tuple[int, int, cpp.CppSignature]]:
        """(fewest arguments, most arguments, signature) of each C++ overload torchgen declares under
        `name` for native_functions.yaml's operators: the methods of at::Tensor (`method`) or the at::
        functions. Their signatures (cpp.CppSignatureGroup): the plain one (TensorOptions packed, out=
        arguments first, schema defaults), the faithful one (scattered TensorOptions, out= last, no
        defaults: `add_outf` for out= operators), and the `_symint` forms of both (the same arguments)."""
        key = (name, method)
        hit = self._overloads.get(key)
        if hit is None:
            table = self.method_schemas if method else self.at_functions
            symint = name.endswith("_symint") and name not in table._names  # (_entries: those with SymInts)
            plain = name[: -len("_symint")] if symint else name
            hit = []
            for _, f in table._entries(name):
                group = cpp.CppSignatureGroup.from_native_function(f, method=method)  # type: ignore[arg-type]
                for sig in group.signatures(symint=False):
                    if sig.name() != plain:
                        continue
                    bindings = sig.arguments()  # (a _symint form has the same ones, typed for SymInt)
                    required = sum(1 for b in bindings if b.default is None)
                    hit.append((required, len(bindings), replace(sig, symint=True) if symint else sig))
            self._overloads[key] = hit
        return hit

    def typed_overloads(self, name: str, method: bool | None) -> tuple[TypedOverload, ...]:
        """The overloads a call of `name` may take, with their parameters' argtypes families: the C++ ones of
        an ATen operator (a Tensor method: `method`; an at:: function: not `method`; see aten_overloads), a
        FunctionsManual helper's declarations (`method` None; a template's parameters that name one of its
        template parameters are of no known type, and so never judged)."""
        key = (name, method)
        hit = self._typed.get(key)
        if hit is None:
            if method is None:
                hit = tuple(
                    TypedOverload(
                        *d.arity, _non_dependent(d, [parameter_type(p) for p in d.parameter_texts if p != "void"]), d
                    )
                    for d in self.helpers.get(name, [])
                )
            else:
                hit = tuple(
                    TypedOverload(low, high, tuple(b.type for b in sig.arguments()), sig)
                    for low, high, sig in self.aten_overloads(name, method)
                )
            self._typed[key] = hit
        return hit

    def method_overloads(self, name: str) -> tuple[TypedOverload, ...]:
        """Every overload `x.name(…)` on an at::Tensor may call, by C++ name lookup: at::Tensor's own (TensorBody.h's
        hand-written ones and the methods torchgen generates), else at::TensorBase's (with at::Tensor's too when a
        `using TensorBase::name;` brings them in); () when one of them is a template (not judged) or none is
        known, or without the headers or a complete native_functions.yaml."""
        hit = self._methods.get(name)
        if hit is None:
            hit = ()
            if self.has_tensor_methods and self.native_complete:
                own = self.tensor_members.get(name, [])
                base = self.base_members.get(name, [])
                generated = self.typed_overloads(name, True) if name in self.method_schemas else ()
                members = (own + base if name in self.tensor_using else own) if own or generated else base
                if not any(m.template for m in members):
                    hit = tuple(TypedOverload(*m.arity, m.parameters, m) for m in members) + tuple(generated)
            self._methods[name] = hit
        return hit

    def hand_written(self, name: str) -> bool:
        """Whether at::Tensor or at::TensorBase writes a member `name` by hand (TensorBody.h's template,
        TensorBase.h); without their class bodies, any name the headers declare."""
        if self.tensor_members or self.base_members:
            return name in self.tensor_members or name in self.base_members
        return name in self.tensor_methods

    def hand_written_members(self, name: str) -> list[Member]:
        """The overloads of `name` at::Tensor or at::TensorBase writes by hand that `x.name(…)` on an at::Tensor
        finds (see method_overloads; without the generated ones)."""
        own = self.tensor_members.get(name, [])
        base = self.base_members.get(name, [])
        return (own + base if name in self.tensor_using else own) if own else base

    def member_returns(self, name: str) -> set[str]:
        """The return types of hand_written_members(name) (the generated ones are read from their schemas:
        returns_tensor)."""
        return {m.returns for m in self.hand_written_members(name)}

    def returns_tensor(self, name: str, method: bool, count: int | None = None) -> bool:
        """Whether every operator torchgen declares under `name` (a Tensor method or an at:: function)
        returns one Tensor (its schema returns `Tensor`, maybe aliased: at::Tensor or a reference to one);
        with `count`, every one of them whose C++ overloads take that many arguments (`at::where(c, a, b)`
        is a Tensor, `at::where(c)` a list of them)."""
        if count is not None:
            fitting = [sig.func for low, high, sig in self.aten_overloads(name, method) if low <= count <= high]
            return bool(fitting) and all(len(f.returns) == 1 and str(f.returns[0].type) == "Tensor" for f in fitting)
        table = self.method_schemas if method else self.at_functions
        entries = table._entries(name)
        return bool(entries) and all(
            len(f.func.returns) == 1 and str(f.func.returns[0].type) == "Tensor"  # type: ignore[attr-defined]
            for _, f in entries
        )

    def is_unqualified(self, name: str) -> bool:
        # `zeros_like(x)` of an argument `x` is saved by the codegen (as `x_info.zeros()`); any other call of
        # it, and that one when `x` is no Tensor, is the ATen function's (and judged as such)
        saved = name in _SAVED_CALLS and name not in self.at_functions
        return name in self.helpers or name in self.using or name in KNOWN_GLOBAL or saved


class TypedOverload:
    """One overload of a callee, as formula-argument-type reads it (see HeaderIndex.typed_overloads)."""

    __slots__ = ("families", "high", "low", "parameters", "_source")

    def __init__(self, low: int, high: float, parameters: tuple[str, ...], source: Declaration | Member | Any) -> None:
        self.low, self.high, self.parameters, self._source = low, high, parameters, source
        self.families = tuple(argtypes.category(p) for p in parameters)

    @property
    def text(self) -> str:
        """The declaration (a helper's or a member's as written, an ATen operator's as torchgen declares it)."""
        return self._source.text if isinstance(self._source, (Declaration, Member)) else self._source.decl()


def _read(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        return path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return None


def build_header_index(sources: Sources, index: NativeIndex | None) -> HeaderIndex:
    headers = HeaderIndex(sources)
    problems = []
    text = _read(sources.functions_manual)
    if text is not None:
        for decl in parse_declarations(text, str(sources.functions_manual)):
            headers.helpers.setdefault(decl.name, []).append(decl)
    else:
        problems.append("FunctionsManual.h")
    # The template's hand-written methods plus native_functions.yaml's method variants are what the
    # generated TensorBody.h declares: with an index, the template (750 lines, not 5,500) is enough.
    bodies = sources.tensor_body[:1] if index is not None else sources.tensor_body
    for path in (*bodies, sources.tensor_base):
        body = _read(path)
        if body is not None:
            headers.tensor_methods |= method_names(body)
            cls = "TensorBase" if path == sources.tensor_base else "Tensor"
            inside = class_body(body, cls) if path in (bodies[:1] + (sources.tensor_base,)) else None
            if inside is not None:
                found, using = members(inside, cls)
                if cls == "Tensor":
                    headers.tensor_members, headers.tensor_using = found, using
                else:
                    headers.base_members = found
    if not sources.tensor_body or sources.tensor_base is None:
        problems.append("TensorBody.h/TensorBase.h")
    functions_cpp, functions_h, variable_type = sources.templates
    template = _read(functions_cpp)
    if template is not None:
        headers.using = using_names(template)[0]
        header = _read(functions_h)
        if header is not None:  # Functions.cpp includes it (via FunctionsManual.h): its usings count
            headers.using |= using_names(header)[0]
        kernels = _read(variable_type)
        if kernels is not None:
            headers.forward_namespaces = using_names(kernels)[1]
    else:  # the using-declarations of 2.x's Functions.cpp and Functions.h templates
        headers.using = {
            "Tensor",
            "Scalar",
            "IntArrayRef",
            "TensorList",
            "ArrayRef",
            "Type",
            "TensorGeometry",
            "ScalarType",
            "optional",
            "fmap",
            "TypeAndSize",
        }
    if index is not None:
        headers.at_functions = NameTable(index.by_schema)
        headers.method_schemas = NameTable(index.by_schema)
        headers.native_complete = any(f.is_abstract for f in index)
        for schema, f in index.by_schema.items():  # its keys are the printed schemas: no printing here
            func = f.func
            names: tuple[str, ...]
            if func.is_out_fn():
                names = (cpp.name(func), cpp.name(func, faithful_name_for_out_overloads=True))
            else:
                names = (str(func.name.name),)  # cpp.name without the _symint form (NameTable adds it)
            if Variant.function in f.variants:
                for n in names:
                    headers.at_functions.add(n, schema)
            if Variant.method in f.variants:
                for n in names:
                    headers.method_schemas.add(n, schema)
    headers.problems = tuple(problems)
    return headers


_SAVED_CALLS = _saved_call_names()

# -- The header index on disk ------------------------------------------------------------------------
# A `check` after an edit builds the same HeaderIndex as the process before it (parsing FunctionsManual.h,
# TensorBody.h's template and TensorBase.h, and naming every operator of the index: ~23 ms, a tenth of
# such a check). It is kept in the native index's persistent cache as plain values (str, int, bool,
# tuples, lists, dicts: nothing is unpickled into code, see derivls/base/safepickle.py, and the shape is checked
# when read), keyed by the native index's own key, the sources' paths, sizes and modification times and
# (diskcache.content_key) the derivls code and version.

FORMAT = 1  # of the stored value; part of its key

_persisted: dict[int, tuple[weakref.ref[NativeIndex], DiskCache, str]] = {}


def persist_with(index: NativeIndex, disk: DiskCache, index_key: str) -> None:
    """Header indexes built for `index` are read from and written to `disk` (where `index` is kept, under
    `index_key`: project.index_native)."""
    if len(_persisted) > 8:
        for k, (ref, _, _) in list(_persisted.items()):
            if ref() is None:
                del _persisted[k]
    _persisted[id(index)] = (weakref.ref(index), disk, index_key)


def _stamp(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return f"{path} (none)"
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def _disk_key(sources: Sources, index: NativeIndex | None) -> tuple[DiskCache, str] | None:
    """Where the header index of `sources` and `index` is kept, and its key; None: it is not kept."""
    found = _persisted.get(id(index)) if index is not None else None
    if found is None or found[0]() is not index or not found[1].enabled:
        return None
    paths = [sources.functions_manual, *sources.tensor_body, sources.tensor_base, *sources.templates]
    return found[1], content_key("headers", str(FORMAT), found[2], str(len(paths)), *(_stamp(p) for p in paths))


def _plain(headers: HeaderIndex) -> dict[str, object]:
    """What build_header_index found, as plain values (_from_plain reads it back)."""

    def members(table: dict[str, list[Member]]) -> dict[str, list[tuple[object, ...]]]:
        return {
            name: [(m.name, m.returns, m.parameters, m.names, m.required, m.template, m.text) for m in found]
            for name, found in table.items()
        }

    return {
        "helpers": [
            (d.name, d.text, d.parameters, d.parameter_texts, d.line, d.path)
            for found in headers.helpers.values()
            for d in found
        ],
        "tensor_methods": sorted(headers.tensor_methods),
        "at_functions": headers.at_functions._names,
        "method_schemas": headers.method_schemas._names,
        "using": sorted(headers.using),
        "forward_namespaces": sorted(headers.forward_namespaces),
        "tensor_members": members(headers.tensor_members),
        "base_members": members(headers.base_members),
        "tensor_using": sorted(headers.tensor_using),
        "problems": headers.problems,
        "native_complete": headers.native_complete,
    }


def _flat(lists: Iterable[list[str]]) -> set[str]:
    return set(itertools.chain.from_iterable(lists))


def _strings(value: object) -> bool:
    return isinstance(value, (tuple, list)) and all(type(x) is str for x in value)


def _from_plain(value: object, sources: Sources, index: NativeIndex) -> HeaderIndex | None:
    """The HeaderIndex `_plain` stored; None when `value` is not of that shape."""
    if not isinstance(value, dict) or set(value) != _PLAIN_KEYS:
        return None
    headers = HeaderIndex(sources)
    for item in value["helpers"]:
        if not (isinstance(item, tuple) and len(item) == 6 and type(item[0]) is str and type(item[1]) is str):
            return None
        name, text, parameters, parameter_texts, line, path = item
        if not (_strings(parameters) and _strings(parameter_texts) and type(line) is int and type(path) is str):
            return None
        headers.helpers.setdefault(name, []).append(Declaration(name, text, parameters, parameter_texts, line, path))
    for key in ("tensor_members", "base_members"):
        table: dict[str, list[Member]] = {}
        for name, found in value[key].items():
            for item in found:
                if not (isinstance(item, tuple) and len(item) == 7 and _strings(item[2]) and _strings(item[3])):
                    return None
                if not (_strings((name, item[0], item[1], item[6])) and type(item[4]) is int and type(item[5]) is bool):
                    return None
                table.setdefault(name, []).append(Member(*item))
        setattr(headers, key, table)
    for key in ("at_functions", "method_schemas"):
        names = value[key]
        if not (isinstance(names, dict) and all(type(n) is str for n in names)):
            return None
        if not (all(type(v) is list for v in names.values()) and index.by_schema.keys() >= _flat(names.values())):
            return None  # (each schema a string of the index's: the key of one of its functions)
        setattr(headers, key, NameTable(index.by_schema, names))
    for key in ("tensor_methods", "using", "forward_namespaces", "tensor_using", "problems"):
        if not _strings(value[key]):
            return None
    headers.tensor_methods = set(value["tensor_methods"])
    headers.using = set(value["using"])
    headers.forward_namespaces = set(value["forward_namespaces"])
    headers.tensor_using = set(value["tensor_using"])
    headers.problems = tuple(value["problems"])
    if type(value["native_complete"]) is not bool:
        return None
    headers.native_complete = value["native_complete"]
    return headers


_PLAIN_KEYS = frozenset(
    "helpers tensor_methods at_functions method_schemas using forward_namespaces tensor_members base_members "
    "tensor_using problems native_complete".split()
)


def load_header_index(sources: Sources, index: NativeIndex | None) -> HeaderIndex:
    """build_header_index, read from the persistent cache when it was kept there (persist_with), else built
    (and kept)."""
    kept = _disk_key(sources, index)
    if kept is None or index is None:
        return build_header_index(sources, index)
    disk, key = kept
    try:
        found = _from_plain(disk.get(key), sources, index)
    except Exception:  # noqa: BLE001 - anything odd in what was read is a miss
        found = None
    if found is not None:
        return found
    headers = build_header_index(sources, index)
    disk.put(key, _plain(headers))
    return headers


_cache: dict[tuple[int, str | None, str | None, str | None], HeaderIndex] = {}


def header_index_for(
    index: NativeIndex | None, native_path: str | None, derivatives_path: str | None = None
) -> HeaderIndex:
    """The workspace's HeaderIndex, built once per (native index, paths) like the native index (and kept on
    disk with it: load_header_index)."""
    from derivls.derivatives.formulas.sources import TORCH_INCLUDE, find_sources

    key = (id(index), native_path, derivatives_path, os.environ.get(TORCH_INCLUDE))
    hit = _cache.get(key)
    if hit is None:
        if len(_cache) > 8:
            _cache.clear()
        hit = load_header_index(find_sources(derivatives_path, native_path), index)
        _cache[key] = hit
    return hit
