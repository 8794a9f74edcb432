"""Facts about the function an entry is for: its arguments and outputs with their C++ types, its
overload group, its C++ signature, what its formulas make the node save.

Every difference between loader generations (torchgen 2.x, the 2021 loader) that the ide layer
needs is asked of the entry's Profile here, and nowhere else in `derivls.ide`.
"""

from __future__ import annotations

from collections.abc import Iterator, Sequence
from dataclasses import dataclass

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.derivatives.analysis import KeyResult, split_name_params
from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.derivatives.model import DifferentiabilityInfo, SavedAttribute
from derivls.derivatives.profiles import TORCHGEN, Profile
from derivls.derivatives.saved import Replacement, plain_name

# -- the loader generation ------------------------------------------------------------------------


def profile_of(placed: PlacedEntry) -> Profile:
    """The loader generation (Profile) an entry was analysed by."""
    return placed.profile


def analyzer_profile(analyzer: object | None) -> Profile:
    """The Profile of a document's analyzer (completion works from text, without an entry)."""
    profile = getattr(analyzer, "profile", None)
    return profile if isinstance(profile, Profile) else TORCHGEN


def has_forward_formulas(profile: Profile) -> bool:
    """Whether the loader knows forward-mode formulas, dispatch sections and named gradients (2021's did not)."""
    return profile.forward_formulas


def substitution_names_and_rules(placed: PlacedEntry, f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
    """The names a formula may apply a saved-variable substitution to (`self.sym_sizes()`), and the rules."""
    return profile_of(placed).substitutions(f)


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


def arg_facts(f: NativeFunction, profile: Profile = TORCHGEN) -> list[ArgFact]:
    """`profile` picks whose C++ types (torchgen 2.x's, the 2021 codegen's, …)."""
    schema_args = {a.name: a for a in f.func.arguments.flat_all}
    facts = []
    for binding in profile.bindings(f):
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


def output_facts(f: NativeFunction, profile: Profile = TORCHGEN) -> list[OutputFact]:
    returns = f.func.returns
    cpp_types = profile.return_cpp_types(f)
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
    index: NativeIndex, schema: str, profile: Profile = TORCHGEN
) -> tuple[NativeFunction | None, NativeFunction | None]:
    """(the function `schema` spells, the canonical function its formulas are about), as the loader does."""
    f = index.by_schema.get(schema)
    if f is None:
        return None, None
    name = split_name_params(schema)
    return f, (profile.canonical_function(index, f, name) if name is not None else None)


def overload_group(index: NativeIndex, f: NativeFunction, profile: Profile = TORCHGEN) -> list[NativeFunction]:
    """The functions sharing `f`'s formulas (functional, in-place, out, …)."""
    return profile.overload_group(index, f)


def saved_attributes(info: DifferentiabilityInfo) -> list[SavedAttribute]:
    return [*info.all_saved_inputs, *info.all_saved_outputs]


def saved_label(attribute: SavedAttribute) -> str:
    return f"{plain_name(attribute.nctype)}: {attribute.nctype.cpp_type()}"


def derivative_saves(key_result: KeyResult | None) -> list[SavedAttribute]:
    if key_result is None or key_result.derivative is None:
        return []
    return [*key_result.derivative.saved_inputs, *key_result.derivative.saved_outputs]


def cpp_signature(f: NativeFunction, profile: Profile = TORCHGEN) -> str:
    return profile.cpp_signature(f)


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
