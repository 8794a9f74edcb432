"""Which C++ argument types can never become which parameter types (formula-argument-type).

A formula's call is compiled against C++ declarations (FunctionsManual.h's helpers, torchgen's ATen
signatures). Overload resolution is not modelled: only what no implicit conversion sequence can do,
between a few families of types, is judged — a Tensor where a number, a list or a Scalar is wanted; a
number, a list, a std::optional or a ScalarType where a Tensor is wanted; and so on. Anything else
(templates, user types, init lists, expressions) is UNKNOWN, and UNKNOWN is never judged.

Conversions that do exist and are therefore not flagged: one Tensor to a TensorList (ArrayRef's
one-element constructor), a number to an IntArrayRef (the same; not to a SymIntArrayRef: that would take
two user-defined conversions), numbers to one another and to
c10::Scalar, a string literal to bool, the literal 0 to a pointer, X to std::optional<X>.
"""

from __future__ import annotations

import re
from functools import lru_cache

from derivls.derivatives.formulas.tokens import Token

UNKNOWN = "unknown"
TENSOR = "Tensor"
OPTIONAL_TENSOR = "std::optional<Tensor>"
TENSOR_LIST = "list of Tensors"
NUMBER = "number"
SYMINT = "c10::SymInt"
SCALAR = "c10::Scalar"
SCALAR_TYPE = "ScalarType"
INT_LIST = "list of ints"
SYMINT_LIST = "c10::SymIntArrayRef"  # as a parameter; as an argument, a list of ints like the others
OPTIONAL = "std::optional"  # of anything but a Tensor, a number or a string
OPTIONAL_NUMBER = "std::optional<number>"  # std::optional<double>, <int64_t>, <bool>…
OPTIONAL_STRING = "std::optional<string>"  # std::optional<std::string_view>, <std::string>
OPTIONAL_VALUE = "std::optional<value>"  # of a c10::Scalar, ScalarType, Layout, Device, MemoryFormat, Generator
STRING = "string"
BOOL_ARRAY = "std::array<bool, N>"
TENSOR_OPTIONS = "TensorOptions"  # as a parameter (made from a ScalarType, Layout, Device, MemoryFormat)

# Families of values that are no Tensor and hold none, whose types are c10's, std's or builtins (not a std::optional of
# a single value, which may hold an at::Generator).
NO_TENSOR = frozenset(
    {
        NUMBER,
        SYMINT,
        SCALAR,
        SCALAR_TYPE,
        INT_LIST,
        SYMINT_LIST,
        STRING,
        BOOL_ARRAY,
        TENSOR_OPTIONS,
        OPTIONAL_NUMBER,
        OPTIONAL_STRING,
    }
)

_NAMESPACES = re.compile(r"\b(?:at|c10|std|torch::autograd)::|\bconst\b|[&\s]|^::")
_NUMBERS = frozenset({"int64_t", "int", "double", "bool", "size_t", "float", "long", "int32_t", "uint64_t"})
_INT_LISTS = frozenset(
    {
        "vector<int64_t>",
        "IntArrayRef",
        "vector<SymInt>",
        "OptionalIntArrayRef",
        "OptionalSymIntArrayRef",
        "ArrayRef<int64_t>",
        "DimVector",
        "SymDimVector",
    }
)
_TENSOR_LISTS = frozenset(
    {
        "vector<Tensor>",
        "vector<Variable>",
        "TensorList",
        "ArrayRef<Tensor>",
        "ITensorListRef",
        "variable_list",
        "List<::optional<Tensor>>",
        "List<optional<Tensor>>",
    }
)
_STRINGS = frozenset({"char*", "string", "string_view"})
_VALUES = frozenset(
    {"Scalar", "ScalarType", "Layout", "Device", "MemoryFormat", "Generator"}
)  # (neither lists nor numbers)


@lru_cache(maxsize=1024)
def category(cpp_type: str) -> str:
    """The family of a C++ type as written in a declaration or a scope (`const at::Tensor &` → TENSOR)."""
    t = _NAMESPACES.sub("", cpp_type).removeprefix("::")
    t = t.replace("<::", "<")
    if t in ("Tensor", "Variable"):
        return TENSOR
    if t in _NUMBERS:
        return NUMBER
    if t == "SymInt":
        return SYMINT
    if t == "Scalar":
        return SCALAR
    if t == "ScalarType":
        return SCALAR_TYPE
    if t in ("SymIntArrayRef", "ArrayRef<SymInt>"):
        return SYMINT_LIST
    if t in _INT_LISTS:
        return INT_LIST
    if t in _TENSOR_LISTS:
        return TENSOR_LIST
    if t in _STRINGS:
        return STRING
    if t.startswith("array<bool"):
        return BOOL_ARRAY
    if t == "TensorOptions":
        return TENSOR_OPTIONS
    if t.startswith("optional<") and t.endswith(">"):
        inner = t[len("optional<") : -1]
        if inner == "Tensor":
            return OPTIONAL_TENSOR
        if inner in _NUMBERS:
            return OPTIONAL_NUMBER
        if inner in ("string_view", "string"):
            return OPTIONAL_STRING
        return OPTIONAL_VALUE if inner in _VALUES else OPTIONAL
    return UNKNOWN


_NEVER: dict[str, frozenset[str]] = {
    TENSOR: frozenset({NUMBER, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST, STRING, BOOL_ARRAY, OPTIONAL}),
    OPTIONAL_TENSOR: frozenset(
        {TENSOR, NUMBER, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST, TENSOR_LIST, STRING, BOOL_ARRAY}
    ),
    TENSOR_LIST: frozenset(
        {TENSOR, OPTIONAL_TENSOR, NUMBER, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST, STRING, BOOL_ARRAY}
    ),
    NUMBER: frozenset({TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, SCALAR_TYPE, BOOL_ARRAY, STRING}),
    SYMINT: frozenset({TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, SCALAR_TYPE, BOOL_ARRAY, STRING}),
    SCALAR: frozenset({TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, SCALAR_TYPE, INT_LIST, BOOL_ARRAY, STRING}),
    SCALAR_TYPE: frozenset(
        {TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, NUMBER, SYMINT, SCALAR, INT_LIST, BOOL_ARRAY, STRING}
    ),
    INT_LIST: frozenset(
        {TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, NUMBER, SYMINT, SCALAR, SCALAR_TYPE, BOOL_ARRAY, STRING}
    ),
    OPTIONAL: frozenset(
        {TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, NUMBER, SYMINT, SCALAR, SCALAR_TYPE, BOOL_ARRAY, STRING}
    ),
    STRING: frozenset({TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST, BOOL_ARRAY}),
    BOOL_ARRAY: frozenset(
        {TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, NUMBER, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST, STRING, OPTIONAL}
    ),
}


# A SymIntArrayRef parameter takes what an IntArrayRef one never takes, and a number either: int64_t →
# c10::SymInt → ArrayRef<SymInt> would be two user-defined conversions.
_NEVER = {a: never | {SYMINT_LIST} if INT_LIST in never else never for a, never in _NEVER.items()}
_NEVER[NUMBER] |= {SYMINT_LIST}
_NEVER[SYMINT_LIST] = _NEVER[INT_LIST]
# c10::Scalar has no conversion operator at all (only to<T>(), toDouble()…): no number, bool or SymInt from it
_NEVER[SCALAR] |= {NUMBER, SYMINT}
# c10::SymInt has no conversion to a plain number (guard_int / expect_int), std::optional none to an ArrayRef
_NEVER[SYMINT] |= {NUMBER}
_NEVER[OPTIONAL] |= {SYMINT_LIST}
# std::optional<X> converts to std::optional<Y> only where X does to Y, and std::optional has no conversion to
# anything else (its `operator bool` is explicit); a number goes into an optional number, never into an optional
# string (nor does the literal 0: int → const char* → string_view → optional would be two user-defined
# conversions, and optional's converting constructor wants string_view constructible from int). (A string
# literal may go into an std::optional<bool>: a pointer converts to bool.)
_NOT_AN_OPTIONAL_NUMBER = frozenset({TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, SYMINT, SCALAR, SCALAR_TYPE, INT_LIST,
                                     BOOL_ARRAY})  # fmt: skip
for _family in _NOT_AN_OPTIONAL_NUMBER:
    _NEVER[_family] |= {OPTIONAL_NUMBER, OPTIONAL_STRING}
_NEVER[NUMBER] |= {OPTIONAL_STRING}
# (an optional of a list may become an OptionalIntArrayRef; one of a single value never an int list)
_NEVER[OPTIONAL_VALUE] = _NEVER[OPTIONAL] | {INT_LIST, SYMINT_LIST}
for _family, _never in _NEVER.items():
    if OPTIONAL in _never:
        _NEVER[_family] = _never | {OPTIONAL_VALUE}
_NEVER[OPTIONAL_NUMBER] = _NEVER[OPTIONAL] | {NUMBER, INT_LIST, SYMINT_LIST, OPTIONAL_STRING}
_NEVER[OPTIONAL_STRING] = _NEVER[OPTIONAL] | {INT_LIST, SYMINT_LIST, OPTIONAL_NUMBER}
# nothing makes a TensorOptions out of a number, a Tensor, a list or a c10::Scalar
for _family in (NUMBER, SYMINT, TENSOR, OPTIONAL_TENSOR, TENSOR_LIST, INT_LIST, SCALAR, BOOL_ARRAY, OPTIONAL_NUMBER,
                OPTIONAL_STRING):  # fmt: skip
    _NEVER[_family] |= {TENSOR_OPTIONS}


def never_converts(argument: str, parameter: str, zero_literal: bool = False) -> bool:
    """Whether no implicit conversion takes an argument of the family `argument` to a parameter of the
    family `parameter` (`zero_literal`: the argument is the literal 0, a null pointer constant)."""
    if zero_literal and parameter == STRING:
        return False
    return parameter in _NEVER.get(argument, frozenset())


_INTEGER = re.compile(r"(?:0[xX][0-9a-fA-F']+|\d[\d']*)[uUlL]*")


def is_integer_literal(text: str) -> bool:
    return bool(_INTEGER.fullmatch(text))


def literal_category(tokens: list[Token]) -> tuple[str, bool] | None:
    """(family, whether it is the literal 0) of an argument that is one literal (maybe negated); None
    for anything else."""
    if len(tokens) == 2 and tokens[0].text in ("-", "+") and tokens[1].kind == "number":
        return NUMBER, False
    if len(tokens) != 1:
        return None
    t = tokens[0]
    if t.kind == "number":
        return NUMBER, bool(_INTEGER.fullmatch(t.text)) and t.text.strip("0uUlL'") == ""
    if t.kind == "string":
        return STRING, False
    if t.kind == "ident" and t.text in ("true", "false"):
        return NUMBER, False
    return None
