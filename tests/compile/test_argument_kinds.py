"""The whole chain re-derives part of the argument-kind verdict table (tests/formulas/argkind_verdicts.py): for a
Tensor, a Tensor?[], an int and a Tensor(a!) argument in every place, torchgen's loader and codegen (the installed
2.13 wheel's) and g++ on the generated node and VariableType kernel give the gate the table holds, and derivls
reports an error exactly where one rejects. (The whole table: `python -m tests.formulas.argkinds --write`.)

On a seed, each kind's function is drawn at random among the 2.13 functions with such an argument
(`python -m tests.formulas.argkinds --seed N`, pick_functions): here seed 1 for the same kinds and a list output.
Measured, the whole campaign (59 kinds, 5 places; cases / chain rejected (loader, codegen, g++) / derivls
reported / derivls errors where the chain accepts): seed 0: 292 / 262 (72, 183, 7) / 262 / 0 of 30; seed 1:
283 / 256 (88, 158, 10) / 256 / 0 of 27; seed 2: 280 / 253 (90, 157, 6) / 253 / 0 of 27; seed 3: 280 / 246
(86, 154, 6) / 246 / 0 of 34; seed 4: 281 / 254 (85, 164, 5) / 254 / 0 of 27 (107–190 s a seed). This file:
about 2 minutes (134 s measured)."""

from __future__ import annotations

import pytest

from tests.formulas.argkind_verdicts import FUNCTIONS, VERDICTS
from tests.formulas.argkinds import PLACES, judge, table

pytestmark = pytest.mark.compile

KINDS = ["Tensor", "Tensor?[]", "int", "Tensor(a!)"]  # Tensor(a!): the loader's gate
SEED = 1
SEEDED_KINDS = [*KINDS, "Tensor(a -> *)"]  # (seed 1: split.Tensor, a list output)


def _include(real_files) -> str:
    return str(real_files.packaged.parent.parent / "torch" / "include")


@pytest.fixture(scope="module")
def cases(real_files):
    return judge(real_files.packaged, _include(real_files), KINDS)


@pytest.fixture(scope="module")
def seeded(real_files):
    return judge(real_files.packaged, _include(real_files), SEEDED_KINDS, seed=SEED)


def test_the_chain_gives_the_gates_the_verdict_table_holds(cases):
    assert {(c.kind, c.place): c.gate for c in cases if c.schema} == {
        (kind, place): VERDICTS[(kind, place)] for kind in KINDS for place in PLACES if (kind, place) in VERDICTS
    }, table(cases)


def test_every_gate_is_met_and_derivls_agrees_with_each(cases):
    assert {c.gate for c in cases} == {"", "loader", "codegen", "g++"}, table(cases)
    wrong = [(c.kind, c.place, c.gate, c.message, c.derivls) for c in cases if bool(c.gate) != bool(c.derivls)]
    assert wrong == [], table(cases)


def test_on_a_seed_other_functions_are_drawn_and_derivls_agrees_with_the_chain_on_each(seeded):
    drawn = {c.kind: c.schema for c in seeded if c.schema}
    assert set(drawn) == set(SEEDED_KINDS)
    assert all(drawn[kind] != FUNCTIONS[kind][0] for kind in SEEDED_KINDS), drawn
    assert {c.gate for c in seeded} >= {"", "g++"}, table(seeded)
    wrong = [(c.kind, c.place, c.gate, c.message, c.derivls) for c in seeded if bool(c.gate) != bool(c.derivls)]
    assert wrong == [], table(seeded)
