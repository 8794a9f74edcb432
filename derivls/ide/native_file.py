"""What an editor asks in native_functions.yaml, as plain data: hover on `func:` (the C++ signature, the
derivatives.yaml entries and autograd nodes that cover the function, or what autograd does without one),
where those entries are, and completion of keys, dispatch keys, tags, variants, device checks and types."""

from __future__ import annotations

import re
from collections.abc import Sequence
from pathlib import Path

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.native_entry import _KNOWN_KEYS
from derivls.aten.native_rules import known_type_names
from derivls.base.diagnostics import Span
from derivls.derivatives.loader import DocumentAnalysis
from derivls.derivatives.profiles import TORCHGEN, Profile
from derivls.ide import facts
from derivls.ide.hover import HoverInfo
from derivls.ide.navigation import func_at, lookup

__all__ = ["Covering", "NativeCompletion", "completions", "covering", "func_hover", "func_span"]

_FUNC = re.compile(r"^(- +|\s+)func:\s*")


def func_span(lines: Sequence[str], line: int) -> Span | None:
    """The schema text of the `func:` on `line` (None: the line is no `func:` line)."""
    text = lines[line] if 0 <= line < len(lines) else ""
    m = _FUNC.match(text)
    if m is None:
        return None
    return Span(line, m.end(), line, len(text.rstrip()))


Covering = tuple[str, int, str, bool, tuple[str, ...]]  # (path, 0-based line of `name:`, its text, exact, nodes)


def covering(analyses: Sequence[tuple[str, DocumentAnalysis]], f: NativeFunction) -> list[Covering]:
    """The derivatives.yaml entries whose formulas apply to `f` (its own first), with their autograd nodes."""
    exact: list[Covering] = []
    group: list[Covering] = []
    for path, analysis in analyses:
        for placed, is_exact in facts.entries_for_function(analysis, f):
            name = placed.entry.name
            if name is None:
                continue
            span = name.span.shifted(placed.start_line)
            item = (path, span.line, str(name.value), is_exact, tuple(facts.node_names(placed)))
            (exact if is_exact else group).append(item)
    return exact + group


def func_hover(
    lines: Sequence[str],
    line: int,
    index: NativeIndex,
    analyses: Sequence[tuple[str, DocumentAnalysis]],
    profile: Profile = TORCHGEN,
) -> HoverInfo | None:
    """Hover on a `func:` line: the function's C++ signature, and what covers it in derivatives.yaml."""
    span = func_span(lines, line)
    schema = func_at(lines, line)
    if span is None or schema is None:
        return None
    f = lookup(index, schema)
    if f is None:
        return HoverInfo(f"`{schema}`: not in the index (see this line's diagnostic)", span)
    parts = [f"```cpp\n{facts.cpp_signature(f, profile)}\n```"]
    found = covering(analyses, f)
    if found:
        for path, at, name, exact, nodes in found[:5]:
            node = f", autograd node `{'`, `'.join(nodes)}`" if nodes else ""
            how = "its entry" if exact else "the entry of its overload group"
            parts.append(f"Covered by {how}: `{Path(path).name}:{at + 1}` `{name}`{node}")
    else:
        parts.append(_without_entry(f))
    return HoverInfo("\n\n".join(parts), span)


def _without_entry(f: NativeFunction) -> str:
    if f.has_composite_implicit_autograd_kernel:
        return (
            "No derivatives.yaml entry: it is CompositeImplicitAutograd, so autograd differentiates the ops "
            "its kernel calls."
        )
    if f.is_view_op:
        return "No derivatives.yaml entry: a view; autograd handles it if its base op's formulas cover it."
    if not any(a.type.is_tensor_like() for a in f.func.arguments.flat_all):
        return "No derivatives.yaml entry, and no tensor input: nothing to differentiate."
    return (
        "No derivatives.yaml entry: autograd registers a kernel that raises 'the derivative for "
        f"{f.func.name.name} is not implemented' when an input requires grad."
    )


# -- completion -----------------------------------------------------------------------------------------


class NativeCompletion:
    """What to offer at a place of native_functions.yaml: `items` replacing `span`."""

    def __init__(self, items: list[str], span: Span, kind: str) -> None:
        self.items = items
        self.span = span
        self.kind = kind  # "key", "dispatch-key", "tag", "variant", "device-check", "type"


_WORD = re.compile(r"[A-Za-z0-9_]*$")


def completions(lines: Sequence[str], line: int, column: int, index: NativeIndex | None) -> NativeCompletion | None:
    """Completion at (line, column): an entry key at the start of a key line; under `dispatch:` a dispatch
    key; in `tags:`, `variants:` and `device_check:` their values; in `func:` a type."""
    if not 0 <= line < len(lines):
        return None
    text = lines[line][:column]
    word = _WORD.search(text)
    start = column - len(word.group(0)) if word else column
    span = Span(line, start, line, column)
    before = text[:start]
    rules = index.rules if index is not None else None
    stripped = before.strip()
    if stripped in ("", "-") and before.startswith(("  ", "- ")) and len(before) - len(before.lstrip(" -")) <= 2:
        if _in_dispatch(lines, line) and before.startswith("    "):
            return _dispatch_keys(index, span)
        return NativeCompletion(sorted(_KNOWN_KEYS), span, "key")
    if stripped == "" and before.startswith("    ") and _in_dispatch(lines, line):
        return _dispatch_keys(index, span)
    if _in_dispatch(lines, line) and re.fullmatch(r"\s+([A-Za-z0-9_]+,\s*)+", before):
        return _dispatch_keys(index, span)
    key = re.match(r"^(?:- +|\s+)([a-z_]+):", before)
    if key is None:
        return None
    name = key.group(1)
    if name == "tags" and index is not None and index.tags:
        return NativeCompletion(sorted(index.tags), span, "tag")
    if name == "variants":
        return NativeCompletion(["function", "method"], span, "variant")
    if name == "device_check":
        return NativeCompletion(["ExactSame", "NoCheck"], span, "device-check")
    if name == "func" and re.search(r"[(,]\s*$|[(,]\s*[A-Za-z_]*$", before + word.group(0) if word else before):
        names = known_type_names(rules) if rules is not None else frozenset()
        return NativeCompletion(sorted(names), span, "type")
    return None


def _in_dispatch(lines: Sequence[str], line: int) -> bool:
    """The line is inside an entry's `dispatch:` block."""
    for i in range(line - 1, max(line - 60, -1), -1):
        text = lines[i]
        if not text.strip() or text.lstrip().startswith("#"):
            continue
        if text.startswith("    "):
            continue
        return text.strip() == "dispatch:"
    return False


def _dispatch_keys(index: NativeIndex | None, span: Span) -> NativeCompletion | None:
    if index is None:
        return None
    keys = index.rules.supported_dispatch_keys or index.rules.dispatch_keys
    if keys is None:
        return None
    return NativeCompletion(sorted(keys), span, "dispatch-key")
