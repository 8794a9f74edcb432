"""What one PyTorch release's torchgen accepts in native_functions.yaml, and what it does not know.

`NativeRules` is the native_functions.yaml part of a release's rules (derivls.derivatives.releases
builds one per release family). Something a release's rules do not know (a base type, a dispatch
key, a tag not in tags.yaml, an entry key) costs only the function that uses it: the index leaves
that function out and records a located `NativeProblem` instead of failing for the whole file.
"""

from __future__ import annotations

import re

from derivls.aten.schema import BaseTy, BaseType, FunctionSchema, ListType, OptionalType, Type
from derivls.base.frozen import frozen_dataclass
from derivls.codes.native import NATIVE_SCHEMA

__all__ = ["NativeProblem", "NativeRules", "UnknownToRules", "known_type_names", "schema_name_of", "unknown_types"]


@frozen_dataclass
class NativeRules:
    """native_functions.yaml as one release's torchgen reads it.

    accepts_dimname   the `Dimname` base type (dropped from torchgen in 2.13)
    absent_types      base types derivls knows but this release does not (`SymBool` before 2.x …)
    dispatch_keys     the DispatchKey names the release knows (None: not checked)
    implicit_tags     the tags torchgen adds by itself when tags.yaml defines them
    const_ref_out     whether use_const_ref_for_mutable_tensors on an out= function is an error (2.7+)
    cpp_optional      how the release's C++ API spells optional types (`c10::optional` up to 2.3)
    label             how messages name the rules ("torch 2.4")
    """

    accepts_dimname: bool = False
    absent_types: frozenset[str] = frozenset()
    dispatch_keys: frozenset[str] | None = None
    implicit_tags: frozenset[str] = frozenset({"pt2_compliant_tag", "out", "inplace"})
    const_ref_out: bool = True
    cpp_optional: str = "::std::optional"
    label: str = "derivls's newest rules"
    # the dispatch keys a native_functions.yaml entry may name (torchgen.model.dispatch_keys; None: any)
    supported_dispatch_keys: frozenset[str] | None = None
    # the keys a structured delegate may not have a kernel for (torchgen.model.STRUCTURED_DISPATCH_KEYS)
    structured_dispatch_keys: frozenset[str] = frozenset({"MPS", "CUDA", "CPU", "XPU", "MTIA"})
    # error_check_native_functions refuses Python keywords as argument names (2.6+)
    python_keywords: bool = True

    def respell(self, cpp: str) -> str:
        """C++ text as derivls renders it (2.13's spelling) → as this release's torchgen renders it."""
        if self.cpp_optional == "::std::optional" or "::std::optional<" not in cpp:
            return cpp
        return cpp.replace("::std::optional<", self.cpp_optional + "<")


NEWEST = NativeRules()


@frozen_dataclass
class NativeProblem:
    """What the release's torchgen rejects in native_functions.yaml / tags.yaml: where (the token), its
    schema text and name, why, and the code it is reported under. `left_out`: the function is not in the
    index; `unknown`: it uses something these rules do not know (a newer release may: see native_report)."""

    path: str
    line: int
    message: str
    schema: str | None  # the `func:` text, when it is a string
    name: str | None  # its operator name ("add.Tensor"), when the text starts with one
    code: str = NATIVE_SCHEMA
    column: int = 0  # 0-based, of the token on `line`
    end_column: int | None = None  # None: the end of the line
    unknown: bool = False
    left_out: bool = True
    fix: str | None = None  # the token's replacement, when one is clear (one edit away)
    reported: bool = True  # False: left out only because a function reported before it was (no diagnostic)

    def __str__(self) -> str:
        return f"{self.path}:{self.line}: {self.message}"


class UnknownToRules(ValueError):
    """Raised while reading one entry: it uses something the rules don't know (key: where)."""

    def __init__(
        self, message: str, key: str | None = None, code: str = NATIVE_SCHEMA, token: str | None = None
    ) -> None:
        super().__init__(message)
        self.message = message
        self.key = key
        self.code = code
        self.token = token
        self.fix: str | None = None  # the token's replacement, when one is clear


_NAME = re.compile(r"^\s*(?:\w+::)?([\w.]+)\(")


def schema_name_of(schema: object) -> str | None:
    if not isinstance(schema, str):
        return None
    m = _NAME.match(schema)
    return m.group(1) if m else None


def known_type_names(rules: NativeRules) -> frozenset[str]:
    """The base type names the rules know (what a misspelled type is compared with)."""
    names = {t.name for t in BaseTy} - set(rules.absent_types)
    if not rules.accepts_dimname:
        names.discard("Dimname")
    return frozenset(names)


_BASES: dict[Type, frozenset[str]] = {}


def _base_names(t: Type) -> frozenset[str]:
    found = _BASES.get(t)
    if found is None:
        if isinstance(t, BaseType):
            found = frozenset({t.name.name})
        elif isinstance(t, (OptionalType, ListType)):
            found = _base_names(t.elem)
        else:
            found = frozenset()
        _BASES[t] = found
    return found


def unknown_types(func: FunctionSchema, schema_text: str, rules: NativeRules) -> list[str]:
    """The base types of func that the rules don't know (a substring test first: usually none)."""
    if not rules.absent_types or not any(t in schema_text for t in rules.absent_types):
        return []
    names: set[str] = set()
    for a in func.schema_order_arguments():
        names |= _base_names(a.type)
    for r in func.returns:
        names |= _base_names(r.type)
    return sorted(names & rules.absent_types)
