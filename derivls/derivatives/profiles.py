"""Loader profiles: which loader's rules an analysis follows.

- `torchgen`: PyTorch 2.x (torchgen/packaged/autograd/load_derivatives.py).
- `legacy`: the January 2021 loader (tools/autograd/load_derivatives.py of that time);
  see derivls.derivatives.legacy.

`auto` picks one from what the workspace shows (`resolve_profile`), first match wins:

1. the layout around derivatives.yaml: in a checkout (`<root>/tools/autograd/derivatives.yaml`),
   a `<root>/torchgen/` folder means torchgen, a `<root>/tools/codegen/` folder (and no
   `torchgen/`) means legacy; a wheel's `torchgen/packaged/autograd/` means torchgen;
2. native_functions.yaml: read with a tags.yaml beside it (tags.yaml appeared in 2022), or any
   SymInt in its schemas (every PyTorch 2.x file has them), means torchgen; otherwise entries with
   `use_c10_dispatcher:` (a key of the 2021 files, dropped later that year) mean legacy;
3. otherwise torchgen.
"""

from __future__ import annotations

import os
import re
from collections import Counter
from collections.abc import Callable, Sequence
from functools import lru_cache
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.derivatives.analysis import EntryAnalyser, EntryResult
from derivls.limits import read_regular_file

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)

if TYPE_CHECKING:  # imported when the legacy profile is used: torchgen-only runs skip it
    from derivls.derivatives.legacy import LegacyEntryAnalyser

PROFILES = ("torchgen", "legacy")
CHOICES = ("auto", *PROFILES)

# (entry results in file order) → per entry, its (dispatch key, op name) pairs
OpNumbering = Callable[[Sequence[EntryResult]], list[tuple[tuple[str, str | None], ...]]]


def torchgen_op_numbering(results: Sequence[EntryResult]) -> list[tuple[tuple[str, str | None], ...]]:
    """Every differentiable entry gets a per-prefix counter suffix: AddBackward0, AddBackward1, …"""
    counter: Counter[str] = Counter()
    numbered: list[tuple[tuple[str, str | None], ...]] = []
    for result in results:
        ops: list[tuple[str, str | None]] = []
        for key, prefix in result.op_plan:
            if prefix is None:
                ops.append((key, None))
            else:
                ops.append((key, f"{prefix}{counter[prefix]}"))
                counter[prefix] += 1
        numbered.append(tuple(ops))
    return numbered


def entry_analyser(profile: str, index: NativeIndex, native_path: str | None) -> EntryAnalyser | LegacyEntryAnalyser:
    """The per-entry analyser of a concrete profile (resolve `auto` first: resolve_profile)."""
    if profile == "torchgen":
        return EntryAnalyser(index, native_path)
    if profile == "legacy":
        from derivls.derivatives.legacy import LegacyEntryAnalyser

        return LegacyEntryAnalyser(index, native_path)
    raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


def op_numbering(profile: str) -> OpNumbering:
    if profile == "torchgen":
        return torchgen_op_numbering
    if profile == "legacy":
        from derivls.derivatives.legacy import legacy_op_numbering

        return legacy_op_numbering
    raise ValueError(f"unknown profile {profile!r}; expected one of {', '.join(PROFILES)}")


def profile_of(obj: object) -> str:
    """The profile an EntryResult / PlacedEntry / DocumentAnalysis was computed with."""
    entries = getattr(obj, "entries", None)
    if entries is not None:  # a DocumentAnalysis
        return next((profile_of(e) for e in entries if profile_of(e) != "torchgen"), "torchgen")
    result = getattr(obj, "result", obj)  # a PlacedEntry holds its EntryResult
    return getattr(result, "profile", "torchgen")


def resolve_profile(requested: str, derivatives_path: Path | None, index: NativeIndex | None) -> str:
    """`auto` → a concrete profile, from the workspace layout and the native functions (see the module doc)."""
    if requested != "auto":
        return requested
    by_layout = profile_from_layout(derivatives_path) if derivatives_path is not None else None
    if by_layout is not None:
        return by_layout
    if index is not None:
        return profile_from_index(index)
    return "torchgen"


def profile_from_layout(derivatives_path: Path) -> str | None:
    try:
        here = Path(derivatives_path).resolve().parent
    except (OSError, RuntimeError):
        return None
    if here.name == "autograd" and here.parent.name == "packaged" and here.parent.parent.name == "torchgen":
        return "torchgen"
    if here.name == "autograd" and here.parent.name == "tools":
        root = here.parent.parent
        if (root / "torchgen").is_dir():
            return "torchgen"
        if (root / "tools" / "codegen").is_dir():
            return "legacy"
    return None


def profile_from_index(index: NativeIndex) -> str:
    """legacy only on positive evidence: no tags.yaml, no SymInt, and the 2021-only key `use_c10_dispatcher:`."""
    if index.tags is not None:
        return "torchgen"
    for f in index.functions:
        args = f.func.arguments
        if args.has_symint_arg() or any(a.type.is_symint_like() for a in args.out):
            return "torchgen"
        if any(r.type.is_symint_like() for r in f.func.returns):
            return "torchgen"
    return "legacy" if _has_2021_keys(index.path) else "torchgen"


_MARKER = re.compile(r"^  use_c10_dispatcher:", re.MULTILINE)  # dropped from native_functions.yaml in 2021


def _has_2021_keys(path: str) -> bool:
    try:
        stat = os.stat(path)
    except OSError:
        return False
    return _file_has_2021_keys(path, stat.st_mtime_ns, stat.st_size)


@lru_cache(maxsize=16)
def _file_has_2021_keys(path: str, mtime_ns: int, size: int) -> bool:
    try:
        text = read_regular_file(path)
    except (OSError, UnicodeDecodeError):
        return False
    return _MARKER.search(text) is not None
