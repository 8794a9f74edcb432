"""Seeded C++ mistakes in real 2.13 formulas: derivls points at the mutated identifier, with the
expected code, and reports nothing else new. (tests/formulas/test_seeded_gxx.py has g++ confirm each
mutation breaks the build and each original compiles.)"""

from __future__ import annotations

import re

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer
from tests.formulas.seeded import SEEDED, Seeded


@pytest.fixture(scope="module")
def analyzer(real_files):
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    return DocumentAnalyzer(index, str(real_files.native))


@pytest.fixture(scope="module")
def original(real_files) -> str:
    return real_files.derivatives.read_text()


def mutate(text: str, m: Seeded) -> tuple[str, int, int]:
    """The mutated text, and the (0-based line, column) where `m.ident` starts inside the mutation."""
    start = text.index(m.entry + "\n")
    end = text.find("\n- name:", start + 1)
    at = text.index(m.old, start)
    assert at < end, f"{m.old!r} is not inside the entry {m.entry}"
    mutated = text[:at] + m.new + text[at + len(m.old) :]
    word = re.search(rf"(?<!\w){re.escape(m.ident)}(?!\w)", m.new) if m.ident[0].isalnum() else None
    ident_at = at + (word.start() if word else m.new.index(m.ident))
    line = mutated.count("\n", 0, ident_at)
    column = ident_at - (mutated.rfind("\n", 0, ident_at) + 1)
    return mutated, line, column


def key(d):
    return (d.code, d.span.line, d.span.column, d.message)


@pytest.mark.parametrize("name", sorted(SEEDED))
def test_a_seeded_mistake_is_located_on_the_mutated_identifier_and_nothing_else_is_new(name, analyzer, original):
    seeded = SEEDED[name]
    baseline = {key(d) for d in analyzer.analyse(original).diagnostics}
    mutated, line, column = mutate(original, seeded)
    diagnostics = analyzer.analyse(mutated).diagnostics
    new = [d for d in diagnostics if key(d) not in baseline]
    assert [(d.code, d.span.line, d.span.column) for d in new] == [(seeded.code, line, column)], [
        (d.code, d.span, d.message) for d in new
    ]
    assert new[0].span.end_column - new[0].span.column == len(seeded.ident) or seeded.code.startswith(
        "formula-unbalanced"
    )


def test_the_real_file_has_no_formula_diagnostic(analyzer, original):
    assert [d for d in analyzer.analyse(original).diagnostics if d.code.startswith("formula-")] == []
