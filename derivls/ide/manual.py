"""FunctionsManual.cpp/.h: the top-level C++ functions formulas call, and where each is defined."""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

# a top-level C++ function definition/declaration: `Tensor foo(`, `TORCH_API std::tuple<…> foo(`, `foo(`
_DEFINITION = re.compile(
    r"^(?![\s/#}])(?!(?:return|namespace|using|if|for|while|switch)\b)[^;=(]*?\b([A-Za-z_]\w*)\s*\("
)


@dataclass(frozen=True)
class _Source:
    mtime: float
    definitions: dict[str, list[tuple[int, int]]]  # name → (line, column), 0-based


_sources: dict[str, _Source] = {}


def forget(paths: Iterable[str]) -> None:
    """Files changed on disk: read them again when next asked."""
    for path in paths:
        _sources.pop(str(path), None)


def definitions(path: Path) -> dict[str, list[tuple[int, int]]]:
    """name → (line, column) of each definition in `path` (cached while its mtime holds)."""
    key = str(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    cached = _sources.get(key)
    if cached is not None and cached.mtime == mtime:
        return cached.definitions
    found: dict[str, list[tuple[int, int]]] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    for i, line in enumerate(text.splitlines()):
        m = _DEFINITION.match(line)
        if m:
            found.setdefault(m.group(1), []).append((i, m.start(1)))
    _sources[key] = _Source(mtime, found)
    return found


def function_names(files: Iterable[Path]) -> set[str]:
    names: set[str] = set()
    for path in files:
        names.update(definitions(path))
    return names


__all__ = ["definitions", "forget", "function_names"]
