"""The 2021 loader's formula rewrites (`saved_variables`) and the 2021 C++ view of a function."""

from __future__ import annotations

import re
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from derivls.aten import legacy_cpp
from derivls.aten.cpp_types import Binding, NamedCType
from derivls.aten.legacy_cpp import LegacyCType, saved_type
from derivls.aten.native import NativeFunction
from derivls.codes.loader import STRIDES_MULTI
from derivls.derivatives.model import SavedAttribute
from derivls.derivatives.saved import Replacement, SavedVariableError, uses_ident

__all__ = ["LEGACY_REPLACEMENTS", "LegacyFacts", "legacy_facts", "legacy_saved_variables"]


# -- formula rewrites ---------------------------------------------------------------------------


def _stride_expr(name: str, var_names: Sequence[str]) -> str:
    if tuple(var_names) != (name,):
        raise SavedVariableError(
            STRIDES_MULTI,
            'Replacement for ".strides()" is only supported in the formula for the derivative of the '
            f"tensor it is called on: write '{name}.strides()' only in the '{name}:' formula.",
            f"{name}.strides()",
        )
    return f'strides_or_error({name}, "{name}")'


def _t(text: str) -> Callable[[], LegacyCType]:
    """A Replacement's ctype factory for a 2021 type string."""
    return lambda: LegacyCType(text)


# The 2021 rules, in the 2021 order. The patterns are the 2021 ones, unescaped `.` included.
LEGACY_REPLACEMENTS: tuple[Replacement, ...] = (
    Replacement(r"{}.sizes\(\)", "_sizes", _t("IntArrayRef")),
    Replacement(r"{}.options\(\)", "_options", _t("at::TensorOptions")),
    Replacement(
        r"zeros_like\({}\)",
        "_info",
        _t("TypeAndSize"),
        expr=lambda name, _: name,
        result=lambda name: name + "_info.zeros()",
        marker="zeros_like(",
    ),
    Replacement(r"{}.size\((\w+)\)", lambda m: f"_argsize_{m.group(1)}", _t("int64_t"), marker="size("),
    Replacement(r"{}.numel\(\)", "_numel", _t("int64_t")),
    Replacement(
        r"to_args_sizes\({}\)", "_args_sizes", _t("std::vector<std::vector<int64_t>>"), marker="to_args_sizes("
    ),
    Replacement(r"TensorGeometry\({}\)", "_geometry", _t("TensorGeometry"), marker="TensorGeometry("),
    Replacement(r"{}.scalar_type\(\)", "_scalar_type", _t("ScalarType")),
    Replacement(r"{}.dim\(\)", "_dim", _t("int64_t")),
    Replacement(r"{}.strides\(\)", "_strides", _t("IntArrayRef"), expr=_stride_expr),
)

_patterns: dict[tuple[str, str], re.Pattern[str]] = {}


def _pattern(template: str, name: str) -> re.Pattern[str]:
    key = (template, name)
    p = _patterns.get(key)
    if p is None:
        p = _patterns[key] = re.compile(template.format(name))
    return p


def legacy_saved_variables(
    formula: str, variables: Sequence[tuple[str, str]], var_names: Sequence[str]
) -> tuple[str, tuple[SavedAttribute, ...]]:
    """The 2021 `saved_variables`: `variables` are (name, C++ type string) pairs."""
    saved: list[SavedAttribute] = []
    for name, cpp_type in variables:
        if name not in formula:
            continue  # no rule can match, and nothing is left to save
        for rule in LEGACY_REPLACEMENTS:
            if rule.marker not in formula:
                continue

            def substitute(m: re.Match[str], rule: Replacement = rule, name: str = name) -> str:
                new_name = name + rule.suffix_for(m)
                expr = rule.expr(name, var_names) if rule.expr else m.group(0)
                saved.append(SavedAttribute(NamedCType(new_name, rule.ctype()), expr))
                return rule.result(name) if rule.result else new_name

            formula = _pattern(rule.pattern, name).sub(substitute, formula)
        if uses_ident(formula, name):
            saved.append(SavedAttribute(NamedCType(name, LegacyCType(saved_type(cpp_type))), name))
    return formula, tuple(saved)


# -- the C++ view of a function, cached ---------------------------------------------------------


@dataclass(frozen=True)
class LegacyFacts:
    bindings: tuple[Binding, ...]
    arg_names: tuple[str, ...]
    arguments: tuple[tuple[str, str], ...]  # (name, C++ type) as saved_variables wants them
    returns: tuple[tuple[str, str], ...]  # (name with self → result, C++ return type)


_facts_cache: dict[int, tuple[NativeFunction, LegacyFacts]] = {}


def legacy_facts(f: NativeFunction) -> LegacyFacts:
    """Raises ValueError for types the 2021 codegen did not have (SymInt, …)."""
    hit = _facts_cache.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    bindings = tuple(legacy_cpp.cpp_arguments(f))
    names = [n if n != "self" else "result" for n in legacy_cpp.return_names(f.func)]
    facts = LegacyFacts(
        bindings=bindings,
        arg_names=tuple(b.name for b in bindings),
        arguments=tuple((b.name, b.type) for b in bindings),
        returns=tuple(zip(names, (legacy_cpp.return_type(r) for r in f.func.returns))),
    )
    if len(_facts_cache) > 50_000:
        _facts_cache.clear()
    _facts_cache[id(f)] = (f, facts)
    return facts
