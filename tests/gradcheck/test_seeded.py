"""Seeded mathematical mistakes (tests/gradcheck/mistakes.py: dropped signs, missing .conj() on
complex-supporting ops, wrong reductions, swapped inputs, forward formulas inconsistent with their
backward; and where OpInfo's samples do not go: special values, negative real parts, complex tangents,
a Scalar argument away from its default; and where the call's structure hides them: a negative dim, keepdim,
an int or optional argument at its default; and at the edges of an op's domain: ties, zero spreads, a zero Scalar,
an empty dim list, Scalar arguments past their range, mixed complex and real operands, special indices) are each
caught on their own formula line; the same entries as shipped are not flagged.
All the entries of a run are compiled as one unit."""

from __future__ import annotations

from collections import Counter

import pytest

from tests.gradcheck.conftest import Run, baseline_ops, gradcheck, make_wheel_copy, replace_in_entry
from tests.gradcheck.mistakes import AT_THE_EDGES, MISTAKES, OPS, WHERE_SAMPLES_MISS, WHERE_STRUCTURE_HIDES

pytestmark = pytest.mark.gradcheck


def _op_args() -> list[str]:
    # (--no-repair: this test is of what is caught; bench/bench_repair.py measures the repairs)
    return [*(arg for op in OPS for arg in ("--op", op)), "--no-repair"]


def test_the_seeded_mistakes_are_enough():
    assert len(MISTAKES) >= 50
    assert len(OPS) >= 40
    assert len({kind for *_, kind in MISTAKES}) == 19
    where_samples_miss = Counter(kind for *_, kind in MISTAKES if kind in WHERE_SAMPLES_MISS)
    assert sum(where_samples_miss.values()) >= 20
    assert set(where_samples_miss) == set(WHERE_SAMPLES_MISS) and min(where_samples_miss.values()) >= 4
    # (where the call's structure hides them: a negative dim, keepdim, an int / optional argument at its default)
    structure_hides = Counter(kind for *_, kind in MISTAKES if kind in WHERE_STRUCTURE_HIDES)
    assert sum(structure_hides.values()) >= 10 and set(structure_hides) == set(WHERE_STRUCTURE_HIDES)
    # (at the edges of an op's domain: ties, zero spreads, a zero Scalar, an empty dim list, Scalar arguments past
    # their range, one operand complex and the other real, special indices)
    at_the_edges = Counter(kind for *_, kind in MISTAKES if kind in AT_THE_EDGES)
    assert sum(at_the_edges.values()) >= 25 and set(at_the_edges) == set(AT_THE_EDGES)


def test_each_formula_line_has_at_most_one_seeded_mistake():
    lines = Counter((entry, shipped) for entry, shipped, *_ in MISTAKES)
    assert max(lines.values()) == 1


@pytest.fixture(scope="module")
def shipped_beyond_the_baseline(real_files, tmp_path_factory) -> Run:
    """`derivls gradcheck` of the seeded entries the CI baseline does not check, on the unmodified 2.13 file."""
    folder = tmp_path_factory.mktemp("shipped-beyond")
    path = make_wheel_copy(real_files, folder / "site-packages")
    beyond = [op for op in OPS if op not in baseline_ops()]
    return gradcheck(path, *[a for op in beyond for a in ("--op", op)], "--no-repair", cwd=folder)


def test_the_entries_as_shipped_pass(shipped_run, shipped_beyond_the_baseline):
    # (a failing formula fails its unit: pow.Tensor_Tensor fails for a bug of torch itself, test_baseline.py)
    # (sum's AutogradNestedTensor formula is not reached on CPU: aten::sum has no kernel for nested CPU tensors, a
    # fact test_baseline.py lists; sum.dim_IntList's is checked on nested tensors)
    seeded_units = [
        u
        for u in shipped_run.summary["units"] + shipped_beyond_the_baseline.summary["units"]
        if u["function"] in OPS and u["name"] != "SumBackwardAutogradNestedTensor0"
    ]
    assert {u["function"] for u in seeded_units} == set(OPS)
    assert all(u["status"] == "passed" for u in seeded_units), seeded_units


def test_each_seeded_mistake_is_caught_on_its_formula_line(wheel_copy, tmp_path):
    seeded = {}
    for entry, shipped, mistaken, kind in MISTAKES:
        seeded[replace_in_entry(wheel_copy, entry, shipped, mistaken)] = (entry, mistaken, kind)
    lines = wheel_copy.read_text().splitlines()
    # a backward mistake makes a derived forward formula (auto_element_wise) of its entry wrong too
    derived = {
        line + offset
        for line in seeded
        for offset in (1, 2, 3)
        if line + offset <= len(lines) and lines[line + offset - 1].strip() == "result: auto_element_wise"
    }
    run = gradcheck(wheel_copy, *_op_args(), cwd=tmp_path)
    assert run.code == 1
    flagged = {d["line"] for d in run.diagnostics}
    missed = {line: seeded[line] for line in seeded if line not in flagged}
    assert not missed, f"not caught: {missed}\n{run.summary}"
    assert flagged <= set(seeded) | derived, [d for d in run.diagnostics if d["line"] not in set(seeded) | derived]
