"""The C++ view of a native function that torchgen 2.x's formulas see (bindings, return names), and
which function of an overload group an entry is about."""

from __future__ import annotations

from collections.abc import Sequence

from derivls.aten import cpp
from derivls.aten.cpp_types import Binding, NamedCType
from derivls.aten.native import NativeFunction


class FunctionFacts:
    """The C++ view of a native function that every formula of an entry needs.

    (A plain class: a stdlib dataclass costs ~0.8 ms to define on the CLI's path.)"""

    __slots__ = ("bindings", "arg_names", "arg_nctypes", "named_returns")

    def __init__(
        self,
        bindings: list[Binding],
        arg_names: list[str],
        arg_nctypes: list[NamedCType],
        named_returns: list[NamedCType],
    ) -> None:
        self.bindings = bindings
        self.arg_names = arg_names
        self.arg_nctypes = arg_nctypes
        self.named_returns = named_returns


_facts_cache: dict[int, tuple[NativeFunction, FunctionFacts]] = {}


def function_facts(f: NativeFunction) -> FunctionFacts:
    hit = _facts_cache.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    bindings = list(cpp.cpp_arguments(f))
    return_names = [n if n != "self" else "result" for n in cpp.return_names(f)]
    return_types = [cpp.return_type(r, symint=True).remove_const_ref() for r in f.func.returns]
    facts = FunctionFacts(
        bindings=bindings,
        arg_names=[b.name for b in bindings],
        arg_nctypes=[b.nctype.remove_const_ref() for b in bindings],
        named_returns=[NamedCType(n, t) for n, t in zip(return_names, return_types)],
    )
    if len(_facts_cache) > 50_000:  # index reloads leave stale functions behind
        _facts_cache.clear()
    _facts_cache[id(f)] = (f, facts)
    return facts


def canonical_function(functions: Sequence[NativeFunction], name: str) -> NativeFunction | None:
    for f in functions:
        if not f.func.is_functional_fn() and not f.func.is_out_fn() and name == str(f.func.name.name):
            return f
    # some functions only have in-place variants
    if name + "_" != cpp.name(functions[0].func):
        return None
    return functions[0]
