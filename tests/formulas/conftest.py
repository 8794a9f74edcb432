"""Shared fixtures: the real 2.13 native index, its header index, and scopes of real entries."""

from __future__ import annotations

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.formulas.headers import HeaderIndex, build_header_index
from derivls.derivatives.formulas.sources import find_sources
from derivls.derivatives.loader import DocumentAnalyzer


@pytest.fixture(scope="session")
def native_index(real_files) -> NativeIndex:
    return NativeIndex.load(str(real_files.native), str(real_files.tags))


@pytest.fixture(scope="session")
def headers(real_files, native_index) -> HeaderIndex:
    return build_header_index(find_sources(real_files.derivatives), native_index)


@pytest.fixture(scope="session")
def real_analysis(real_files, native_index):
    return DocumentAnalyzer(native_index, str(real_files.native)).analyse(real_files.derivatives.read_text())


@pytest.fixture(scope="session")
def key_of(real_analysis):
    """key_of(schema, names) -> (EntryResult, SectionResult, KeyResult) of a real entry's formula."""
    by_schema = {p.result.schema_string: p.result for p in real_analysis.entries}

    def find(schema: str, names: str):
        result = by_schema[schema]
        for section in result.sections:
            for key in section.keys:
                if key.item.key.value == names:
                    return result, section, key
        raise KeyError(names)

    return find
