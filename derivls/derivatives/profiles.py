"""Loader profiles: which loader's rules an analysis follows.

- `torchgen`: PyTorch 2.x (torchgen/packaged/autograd/load_derivatives.py).
- `legacy`: the January 2021 loader (tools/autograd/load_derivatives.py of that time).
`auto` picks one from what the workspace shows.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable, Sequence
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.derivatives.analysis import AUTOGRAD_KEYS, EntryAnalyser, EntryResult, create_op_prefix

PROFILES = ("torchgen", "legacy")
CHOICES = ("auto", *PROFILES)

# (entry results in file order) → per entry, its (dispatch key, op name) pairs
OpNumbering = Callable[[Sequence[EntryResult]], list[list[tuple[str, str | None]]]]


def torchgen_op_numbering(results: Sequence[EntryResult]) -> list[list[tuple[str, str | None]]]:
    """Every differentiable entry gets a per-prefix counter suffix: AddBackward0, AddBackward1, …"""
    counter: Counter[str] = Counter()
    numbered: list[list[tuple[str, str | None]]] = []
    for result in results:
        ops: list[tuple[str, str | None]] = []
        if result.defn_name is not None:
            base = create_op_prefix(result.defn_name)
            for key, has_derivatives in counted_sections(result):
                op = None
                if has_derivatives:
                    prefix = base if key == "Default" else base + key
                    op = f"{prefix}{counter[prefix]}"
                    counter[prefix] += 1
                ops.append((key, op))
        numbered.append(ops)
    return numbered


def counted_sections(result: EntryResult) -> list[tuple[str, bool]]:
    """(dispatch key, has derivatives) per section; guessed when the schema did not resolve,
    so that one broken entry does not renumber every node after it."""
    if result.canonical is not None:
        return [(s.dispatch_key, s.has_derivatives) for s in result.sections]
    valid = set(AUTOGRAD_KEYS) | {"Default"}
    return [
        (s.key.value, result.guessed_has_derivatives) for s in result.entry.sections if s.key.value in valid
    ]


def entry_analyser(profile: str, index: NativeIndex, native_path: str | None) -> EntryAnalyser:
    if profile == "torchgen":
        return EntryAnalyser(index, native_path)
    raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


def op_numbering(profile: str) -> OpNumbering:
    if profile == "torchgen":
        return torchgen_op_numbering
    raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


def resolve_profile(requested: str, derivatives_path: Path | None, index: NativeIndex | None) -> str:
    """`auto` → a concrete profile, from the workspace layout and the native functions."""
    if requested != "auto":
        return requested
    return "torchgen"
