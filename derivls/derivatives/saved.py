"""Which inputs and outputs a formula makes the autograd node save.

Patterns such as `self.sym_sizes()` are evaluated at forward time and saved
under a new name (`self_sym_sizes`); any name still referenced afterwards is
saved whole. The rule tables follow torchgen's `saved_variables`.
"""

from __future__ import annotations

import bisect
import re
from collections.abc import Callable, Sequence
from functools import cache

from derivls.aten.cpp_types import (
    BaseCType,
    CType,
    NamedCType,
    OptionalCType,
    SymIntT,
    VectorCType,
    boolT,
    layoutT,
    longT,
    scalarTypeT,
    stringT,
    symIntArrayRefT,
    tensorGeometryT,
    tensorOptionsT,
    typeAndSizeT,
)
from derivls.base.frozen import frozen_dataclass
from derivls.codes.loader import SIZE_NOT_SUPPORTED, SIZES_NOT_SUPPORTED, STRIDES_MULTI, STRIDES_NOT_SUPPORTED
from derivls.codes.model import Code
from derivls.derivatives.model import SavedAttribute

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

IDENT_REGEX = r"(^|\W){}($|\W)"


@cache
def ident_pattern(name: str) -> re.Pattern[str]:
    return re.compile(IDENT_REGEX.format(name))


def _is_word_char(c: str) -> bool:
    return c.isalnum() or c == "_"


def uses_ident(formula: str, name: str) -> bool:
    """Whether `name` stands in `formula` as a whole identifier: `IDENT_REGEX.format(name)` matches.

    A scan with str.find; compiling one regex per argument name cost more than the whole analysis.
    """
    start = formula.find(name)
    while start >= 0:
        end = start + len(name)
        # (_is_word_char, inlined: this runs for every argument of every formula)
        if (start == 0 or not ((c := formula[start - 1]).isalnum() or c == "_")) and (
            end == len(formula) or not ((c := formula[end]).isalnum() or c == "_")
        ):
            return True
        start = formula.find(name, start + 1)
    return False


class SavedVariableError(ValueError):
    """A formula uses a pattern the loader refuses; `token` is the text to point at."""

    def __init__(self, code: Code, message: str, token: str, fix: str | None = None) -> None:
        super().__init__(message)
        self.code = code
        self.token = token
        self.fix = fix


@frozen_dataclass
class Replacement:
    """`pattern` (with `{}` for the variable name) → a saved attribute named `name + suffix`."""

    pattern: str
    suffix: str | Callable[[re.Match[str]], str]
    ctype: Callable[[], CType]
    expr: Callable[[str, Sequence[str]], str] | None = None  # None: the matched text itself
    result: Callable[[str], str] | None = None  # what replaces the match; None: the new name
    marker: str = ""  # literal text every match contains: a cheap filter before the regex

    def __post_init__(self) -> None:
        if not self.marker:
            # `{}.method\(\)` patterns: every match contains the method call after the name.
            assert self.pattern.startswith("{}"), "rules that do not start with the name need a marker"
            tail = self.pattern[2:].split("(-?")[0].replace("\\", "")
            object.__setattr__(self, "marker", tail[1:] if tail.startswith(".") else tail)

    def suffix_for(self, match: re.Match[str]) -> str:
        return self.suffix(match) if callable(self.suffix) else self.suffix


def _stride_expr(name: str, var_names: Sequence[str]) -> str:
    if tuple(var_names) != (name,):
        raise SavedVariableError(
            STRIDES_MULTI,
            'Replacement for ".sym_strides()" is only supported in the formula for the derivative of the '
            f"tensor it is called on: write '{name}.sym_strides()' only in the '{name}:' formula.",
            f"{name}.sym_strides()",
        )
    return f'strides_or_error({name}, "{name}")'


def _sym_size_suffix(match: re.Match[str]) -> str:
    return f"_sym_argsize_{match.groups()[0].replace('-', 'minus_')}"


TORCHGEN_REPLACEMENTS: tuple[Replacement, ...] = (
    Replacement(r"{}.sym_sizes\(\)", "_sym_sizes", lambda: BaseCType(symIntArrayRefT)),
    Replacement(
        r"{}->sym_sizes\(\)",
        "_sym_sizes_opt",
        lambda: OptionalCType(BaseCType(symIntArrayRefT)),
        expr=lambda name, _: (
            f"{name}.has_value() ? std::optional<c10::SymIntArrayRef>({name}->sym_sizes()) : std::nullopt"
        ),
    ),
    Replacement(
        r"{}.sym_blocksize\(\)",
        "_self_sym_blocksize_opt",
        lambda: OptionalCType(BaseCType(symIntArrayRefT)),
        expr=lambda name, _: f"at::sparse_csr::getSymIntBlockSize({name})",
    ),
    Replacement(r"{}.options\(\)", "_options", lambda: BaseCType(tensorOptionsT)),
    Replacement(
        r"zeros_like\({}\)",
        "_info",
        lambda: BaseCType(typeAndSizeT),
        marker="zeros_like(",
        expr=lambda name, _: name,
        result=lambda name: name + "_info.zeros()",
    ),
    Replacement(r"{}.sym_size\((-?\w+)\)", _sym_size_suffix, lambda: BaseCType(SymIntT)),
    Replacement(r"{}.numel\(\)", "_numel", lambda: BaseCType(longT)),
    Replacement(r"{}.sym_numel\(\)", "_sym_numel", lambda: BaseCType(SymIntT)),
    Replacement(
        r"to_args_sizes\({}\)",
        "_args_sizes",
        lambda: VectorCType(VectorCType(BaseCType(longT))),
        marker="to_args_sizes(",
    ),
    Replacement(
        r"to_args_sizes_symint\({}\)",
        "_args_sizes_symint",
        lambda: VectorCType(VectorCType(BaseCType(SymIntT))),
        marker="to_args_sizes_symint(",
    ),
    Replacement(
        r"to_args_scalartypes\({}\)",
        "_args_scalartypes",
        lambda: VectorCType(BaseCType(scalarTypeT)),
        marker="to_args_scalartypes(",
    ),
    Replacement(r"TensorGeometry\({}\)", "_geometry", lambda: BaseCType(tensorGeometryT), marker="TensorGeometry("),
    Replacement(r"{}.scalar_type\(\)", "_scalar_type", lambda: BaseCType(scalarTypeT)),
    Replacement(r"{}.dim\(\)", "_dim", lambda: BaseCType(longT)),
    Replacement(r"{}.sym_strides\(\)", "_sym_strides", lambda: BaseCType(symIntArrayRefT), expr=_stride_expr),
    Replacement(r"{}.layout\(\)", "_layout", lambda: BaseCType(layoutT)),
    Replacement(r"{}.is_conj\(\)", "_conjugate", lambda: BaseCType(boolT)),
)

_SIZES = re.compile(r"(\.|->)sizes\(\)")
_SIZE_N = re.compile(r"(\.|->)size\([-]?\d+\)")
_STRIDES = re.compile(r"(\.|->)strides\(\)")


def check_unsupported_calls(formula: str) -> None:
    """torchgen refuses the non-SymInt size accessors; say which symbolic form to use."""
    # (each pattern matches only text containing its literal tail: the regexes run rarely)
    m = _SIZES.search(formula) if "sizes()" in formula else None
    if m:
        raise SavedVariableError(
            SIZES_NOT_SUPPORTED,
            ".sizes() is not supported in derivative formulas: use the SymInt version .sym_sizes(), "
            "which returns a c10::SymIntArrayRef.",
            m.group(0),
            f"{m.group(1)}sym_sizes()",
        )
    m = _SIZE_N.search(formula) if "size(" in formula else None
    if m:
        raise SavedVariableError(
            SIZE_NOT_SUPPORTED,
            ".size(int) is not supported in derivative formulas: use the SymInt version .sym_size(int).",
            m.group(0),
            m.group(0).replace("size(", "sym_size(", 1),
        )
    m = _STRIDES.search(formula) if "strides()" in formula else None
    if m:
        raise SavedVariableError(
            STRIDES_NOT_SUPPORTED,
            ".strides() is not supported in derivative formulas: use the SymInt version .sym_strides(), "
            "which returns a c10::SymIntArrayRef.",
            m.group(0),
            f"{m.group(1)}sym_strides()",
        )


@cache
def _rule_pattern(template: str, name: str) -> re.Pattern[str]:
    return re.compile(template.format(name))


_REGEX_SYNTAX = frozenset(".^$*+?{}[]|()\\")


@cache
def _rule_parts(template: str) -> tuple[str, re.Pattern[str]] | None:
    """`literal{}rest` → (literal, rest compiled), when the part before the name is plain text (`zeros_like\\(`,
    or nothing): then the rule matches where `literal + name` stands and `rest` matches right after it, and
    one compiled `rest` serves every name (compiling a pattern per argument name cost ~0.1 ms each)."""
    head, sep, rest = template.partition("{}")
    if not sep or "{}" in rest:
        return None
    literal, k = [], 0
    while k < len(head):
        c = head[k]
        if c == "\\":
            if k + 1 == len(head) or head[k + 1].isalnum():
                return None  # \d, \b, …: not plain text
            c, k = head[k + 1], k + 1
        elif c in _REGEX_SYNTAX:
            return None
        literal.append(c)
        k += 1
    return "".join(literal), re.compile(rest)


class _Match:
    """What a rule's callables read of a match (group(), groups()) when `_substitute` found it."""

    __slots__ = ("_text", "_rest")

    def __init__(self, text: str, rest: re.Match[str]) -> None:
        self._text = text
        self._rest = rest

    def group(self, *indexes: int) -> Any:
        if not indexes or indexes == (0,):
            return self._text
        if len(indexes) == 1:
            return self._rest.group(indexes[0])
        return tuple(self._text if i == 0 else self._rest.group(i) for i in indexes)

    def groups(self, default: Any = None) -> tuple[Any, ...]:
        return self._rest.groups(default)


def _substitute(template: str, name: str, replace: Callable[[Any], str], formula: str) -> str:
    """`re.sub(template.format(name), replace, formula)`, without compiling a pattern per name where it can."""
    parts = _rule_parts(template) if name.isascii() and name.replace("_", "a").isalnum() else None
    if parts is None:
        return _rule_pattern(template, name).sub(replace, formula)
    literal, rest = parts
    needle = literal + name
    out: list[str] = []
    done = at = 0
    while (i := formula.find(needle, at)) >= 0:  # the leftmost match first, as re.sub scans
        m = rest.match(formula, i + len(needle))
        if m is None:
            at = i + 1
            continue
        out.append(formula[done:i])
        out.append(replace(_Match(formula[i : m.end()], m)))
        done = at = m.end()
    if not out:
        return formula
    out.append(formula[done:])
    return "".join(out)


_OPTIONAL_STRING = OptionalCType(BaseCType(stringT))
# how a saved optional string reaches the formula (2.13's spelling; releases.py has the others)
STRING_VIEW_CAST = "{name}.has_value() ? std::optional<std::string_view>({name}.value()) : std::nullopt"


def plain_name(nctype: NamedCType) -> str:
    name = nctype.name
    return name if isinstance(name, str) else name.name


def saved_variables(
    formula: str,
    nctypes: Sequence[NamedCType],
    var_names: Sequence[str],
    replacements: Sequence[Replacement] = TORCHGEN_REPLACEMENTS,
    string_view_cast: str = STRING_VIEW_CAST,
) -> tuple[str, tuple[SavedAttribute, ...]]:
    """Rewrite `formula` to use saved attributes; return it with what must be saved, in torchgen's order."""
    check_unsupported_calls(formula)
    saved: list[SavedAttribute] = []
    # indices of the rules whose marker the formula contains (most formulas: none); after a
    # substitution changes the formula they are found again, and the scan goes on after the
    # rule that changed it: the rules are tried in order, on the current formula, as before
    candidates = [i for i, rule in enumerate(replacements) if rule.marker in formula]
    for nctype in nctypes:
        name = plain_name(nctype)
        if name not in formula:
            continue
        k = 0
        while k < len(candidates):
            i = candidates[k]
            k += 1
            rule = replacements[i]

            def substitute(m: re.Match[str], rule: Replacement = rule, name: str = name) -> str:
                new_name = name + rule.suffix_for(m)
                expr = rule.expr(name, var_names) if rule.expr else m.group(0)
                saved.append(SavedAttribute(nctype=NamedCType(new_name, rule.ctype()), expr=expr))
                return rule.result(name) if rule.result else new_name

            rewritten = _substitute(rule.pattern, name, substitute, formula)
            if rewritten != formula:
                formula = rewritten
                candidates = [j for j, r in enumerate(replacements) if r.marker in formula]
                k = bisect.bisect_right(candidates, i)

        if nctype.type == _OPTIONAL_STRING:
            # Saved std::optional<std::string> must reach the formula as std::optional<std::string_view>.
            formula = re.sub(rf"\b{name}\b", string_view_cast.format(name=name), formula)
            candidates = [j for j, r in enumerate(replacements) if r.marker in formula]

        if uses_ident(formula, name):
            saved.append(SavedAttribute(nctype=nctype, expr=name))
    return formula, tuple(saved)


__all__ = [
    "IDENT_REGEX",
    "Replacement",
    "SavedVariableError",
    "TORCHGEN_REPLACEMENTS",
    "ident_pattern",
    "plain_name",
    "saved_variables",
    "uses_ident",
]
