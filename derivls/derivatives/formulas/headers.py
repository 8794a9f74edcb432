"""The names a formula can use that C++ headers declare, read from the workspace's own files.

- FunctionsManual.h: the autograd helpers (every overload, with its declaration text and parameters).
- TensorBody.h (template and/or generated) and TensorBase.h: Tensor methods written by hand.
- native_functions.yaml (the NativeIndex): `at::` functions (function variants, their `_symint` and
  out forms) and Tensor methods (method variants).
- The Functions.cpp template: its `using` declarations.
- `KNOWN_*` (known.py): a short documented list of std/c10/<cmath> names and methods of non-Tensor types
  that no file above declares.

This module builds the HeaderIndex and answers its questions; declarations.py reads a header's C++
declarations; headercache.py keeps the index on disk between processes.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from pathlib import Path

from derivls.aten import cpp
from derivls.aten.native import NativeIndex, Variant
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.cparams import parameter_type
from derivls.derivatives.formulas.declarations import FORWARD_NAMESPACES, Declaration, non_dependent
from derivls.derivatives.formulas.known import (
    KNOWN_AT,
    KNOWN_C10,
    KNOWN_GLOBAL,
    KNOWN_METHODS,
    KNOWN_STD,
    saved_call_names,
)
from derivls.derivatives.formulas.members import Member, class_body, members
from derivls.derivatives.formulas.sources import Sources

TYPE_CHECKING = False  # typing is not imported at run time (see derivls/base/frozen.py)
if TYPE_CHECKING:
    from typing import Any


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
    forward_namespaces: set[str] = field(default_factory=lambda: set(FORWARD_NAMESPACES))
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
                        *d.arity, non_dependent(d, [parameter_type(p) for p in d.parameter_texts if p != "void"]), d
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
    from derivls.derivatives.formulas.declarations import method_names, parse_declarations, using_names

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


_SAVED_CALLS = saved_call_names()
