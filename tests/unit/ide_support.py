"""Shared by tests/unit/test_ide_*.py: the real 2.13 files analysed once, small inline documents, positions."""

from __future__ import annotations

from functools import lru_cache

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from tests.conftest import PACKAGED, RealFiles


def real_files() -> RealFiles:
    assert PACKAGED is not None, "torch==2.13.0 must be installed (pip install -e '.[test]')"
    return RealFiles(PACKAGED)


@lru_cache(maxsize=1)
def real_index() -> NativeIndex:
    files = real_files()
    return NativeIndex.from_text(
        files.native.read_text(encoding="utf-8"),
        files.tags.read_text(encoding="utf-8"),
        str(files.native),
        tags_path=str(files.tags),
    )


def analyse(text: str, index: NativeIndex | None = None) -> DocumentAnalysis:
    """`text` analysed against `index` (the real 2.13 index unless given) with torchgen's rules."""
    index = index if index is not None else real_index()
    return DocumentAnalyzer(index, str(real_files().native), "torchgen").analyse(text)


@lru_cache(maxsize=1)
def real_text() -> str:
    return real_files().derivatives.read_text(encoding="utf-8")


@lru_cache(maxsize=1)
def real_analysis() -> DocumentAnalysis:
    return analyse(real_text())


def at(text: str, needle: str, offset: int = 0, occurrence: int = 0) -> tuple[int, int]:
    """(line, column), 0-based, of the `occurrence`-th `needle` in `text`, plus `offset` columns."""
    index = -1
    for _ in range(occurrence + 1):
        index = text.index(needle, index + 1)
    index += offset
    line = text.count("\n", 0, index)
    return line, index - (text.rfind("\n", 0, index) + 1)
