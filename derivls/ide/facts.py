"""Facts about the function an entry is for: its arguments and outputs with their C++ types, its
overload group, its C++ signature, what its formulas make the node save.

Every difference between loader generations (torchgen 2.x, the 2021 "legacy" loader) that the ide
layer needs is asked here and nowhere else in `derivls.ide`: `profile_of` and the `profile ==
"legacy"` branches below are the one seam a per-generation Profile object replaces.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from derivls.aten import cpp
from derivls.aten.cpp import Binding
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.derivatives.analysis import KeyResult, _canonical_function, function_facts, split_name_params
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.derivatives.model import DifferentiabilityInfo, SavedAttribute
from derivls.derivatives.profiles import profile_of as _profile_of
from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS, Replacement, plain_name

# -- the loader generation ------------------------------------------------------------------------


def profile_of(placed: PlacedEntry) -> str:
    """The loader generation an entry was analysed by ("torchgen" or "legacy")."""
    return _profile_of(placed)


def analyzer_profile(analyzer: object | None) -> str:
    """The loader generation of a document's analyzer (completion works from text, without an entry)."""
    return str(getattr(analyzer, "profile", "torchgen"))


def has_forward_formulas(profile: str) -> bool:
    """Whether the loader knows forward-mode formulas, dispatch sections and named gradients (2021's did not)."""
    return profile != "legacy"


def substitution_names_and_rules(placed: PlacedEntry, f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
    """The names a formula may apply a saved-variable substitution to (`self.sym_sizes()`), and the rules."""
    if profile_of(placed) == "legacy":
        from derivls.derivatives.legacy import LEGACY_REPLACEMENTS, legacy_facts

        try:
            facts = legacy_facts(f)
        except ValueError:
            return [], LEGACY_REPLACEMENTS
        return [n for n, _ in (*facts.arguments, *facts.returns)], LEGACY_REPLACEMENTS
    ff = function_facts(f)
    return [plain_name(n) for n in (*ff.arg_nctypes, *ff.named_returns)], TORCHGEN_REPLACEMENTS


# -- facts about the function an entry is for ----------------------------------------------------


@dataclass(frozen=True)
class ArgFact:
    name: str  # C++ binding name (what formulas use)
    schema_type: str | None  # "Tensor", "int[1]?", … (None for TensorOptions parts)
    cpp_type: str
    schema_text: str | None  # "Tensor self"


@dataclass(frozen=True)
class OutputFact:
    index: int
    name: str  # the name formulas use: result, resultN or the named return
    schema_name: str | None
    schema_type: str
    cpp_type: str


def _bindings(f: NativeFunction, profile: str) -> Sequence[Binding]:
    if profile == "legacy":
        from derivls.derivatives.legacy import legacy_facts

        try:
            return legacy_facts(f).bindings
        except ValueError:
            return ()
    return function_facts(f).bindings


def _return_cpp_types(f: NativeFunction, profile: str) -> list[str]:
    if profile == "legacy":
        from derivls.derivatives.legacy import legacy_facts

        try:
            return [t for _, t in legacy_facts(f).returns]
        except ValueError:
            return []
    return [n.cpp_type() for n in function_facts(f).named_returns]


def arg_facts(f: NativeFunction, profile: str = "torchgen") -> list[ArgFact]:
    """`profile` picks whose C++ types: torchgen 2.x's, or the 2021 codegen's ("legacy")."""
    schema_args = {a.name: a for a in f.func.arguments.flat_all}
    facts = []
    for binding in _bindings(f, profile):
        arg = schema_args.get(binding.name)
        facts.append(
            ArgFact(
                name=binding.name,
                schema_type=str(arg.type) if arg is not None else None,
                cpp_type=binding.nctype.cpp_type(),
                schema_text=str(arg) if arg is not None else None,
            )
        )
    return facts


def output_facts(f: NativeFunction, profile: str = "torchgen") -> list[OutputFact]:
    returns = f.func.returns
    cpp_types = _return_cpp_types(f, profile)
    result = []
    for i, ret in enumerate(returns):
        if ret.name is not None:
            name = ret.name
        elif len(returns) == 1:
            name = "result"
        else:
            name = f"result{i}"
        cpp_type = cpp_types[i] if i < len(cpp_types) else ""
        result.append(OutputFact(i, name, ret.name, str(ret.type), cpp_type))
    return result


def resolve_schema(
    index: NativeIndex, schema: str, profile: str = "torchgen"
) -> tuple[NativeFunction | None, NativeFunction | None]:
    """(the function `schema` spells, the canonical function its formulas are about), as the loader does."""
    f = index.by_schema.get(schema)
    if f is None:
        return None, None
    name = split_name_params(schema)
    if profile == "legacy":
        return f, (_legacy_analyser(index).canonical(f, name) if name is not None else None)
    functions = index.by_signature.get(f.func.signature(), [])
    if not functions or name is None:
        return f, None
    return f, _canonical_function(functions, name)


def overload_group(index: NativeIndex, f: NativeFunction, profile: str = "torchgen") -> list[NativeFunction]:
    """The functions sharing `f`'s signature (functional, in-place, out, …), which share its formulas."""
    if profile == "legacy":
        return list(_legacy_analyser(index).group(f))
    return list(index.by_signature.get(f.func.signature(), [f]))


_legacy_analysers: dict[int, tuple[NativeIndex, object]] = {}


def _legacy_analyser(index: NativeIndex):
    """One LegacyEntryAnalyser per index, for its 2021 signature groups."""
    from derivls.derivatives.legacy import LegacyEntryAnalyser

    hit = _legacy_analysers.get(id(index))
    if hit is None or hit[0] is not index:
        if len(_legacy_analysers) > 8:
            _legacy_analysers.clear()
        hit = _legacy_analysers[id(index)] = (index, LegacyEntryAnalyser(index))
    return hit[1]


def saved_attributes(info: DifferentiabilityInfo) -> list[SavedAttribute]:
    return [*info.all_saved_inputs, *info.all_saved_outputs]


def saved_label(attribute: SavedAttribute) -> str:
    return f"{plain_name(attribute.nctype)}: {attribute.nctype.cpp_type()}"


def derivative_saves(key_result: KeyResult | None) -> list[SavedAttribute]:
    if key_result is None or key_result.derivative is None:
        return []
    return [*key_result.derivative.saved_inputs, *key_result.derivative.saved_outputs]


def cpp_signature(f: NativeFunction, profile: str = "torchgen") -> str:
    if profile == "legacy":
        from derivls.aten import legacy_cpp

        try:
            return legacy_cpp.cpp_signature(f)
        except ValueError as e:
            return f"// not expressible in the 2021 C++ API: {e}"
    sigs = cpp.CppSignatureGroup.from_native_function(f, method=False)
    sig = sigs.symint_signature if sigs.symint_signature is not None else sigs.signature
    return sig.decl()


# -- entries by name ------------------------------------------------------------------------------


def entries_for_function(analysis: DocumentAnalysis, f: NativeFunction) -> Iterator[tuple[PlacedEntry, bool]]:
    """Entries whose formulas apply to `f`: (entry, True) when `name:` spells `f` itself, False for its group."""
    signature = f.func.signature()
    for placed in analysis.entries:
        result = placed.result
        if result.schema_function is not None and result.schema_function.func == f.func:
            yield placed, True
        elif result.canonical is not None and result.canonical.func.signature() == signature:
            yield placed, False


def entry_function_name(placed: PlacedEntry) -> str | None:
    f = placed.result.schema_function
    return str(f.func.name) if f is not None else None


def node_names(placed: PlacedEntry) -> list[str]:
    return [op for _, op in placed.ops if op]


__all__ = [
    "ArgFact",
    "OutputFact",
    "analyzer_profile",
    "arg_facts",
    "cpp_signature",
    "derivative_saves",
    "entries_for_function",
    "entry_function_name",
    "has_forward_formulas",
    "node_names",
    "output_facts",
    "overload_group",
    "profile_of",
    "resolve_schema",
    "saved_attributes",
    "saved_label",
    "substitution_names_and_rules",
]
