"""The whole chain re-derives part of the argument-kind verdict table (tests/formulas/argkind_verdicts.py): for a
Tensor, a Tensor?[], an int and a Tensor(a!) argument in every place, torchgen's loader and codegen (the installed 2.13 wheel's)
and g++ on the generated node and VariableType kernel give the gate the table holds, and derivls reports an error
exactly where one rejects. (The whole table: `python -m tests.formulas.argkinds --write`.)"""

from __future__ import annotations

import pytest

from tests.formulas.argkind_verdicts import VERDICTS
from tests.formulas.argkinds import PLACES, judge, table

pytestmark = pytest.mark.compile

KINDS = ["Tensor", "Tensor?[]", "int", "Tensor(a!)"]  # Tensor(a!): the loader's gate


@pytest.fixture(scope="module")
def cases(real_files):
    include = str(real_files.packaged.parent.parent / "torch" / "include")
    return judge(real_files.packaged, include, KINDS)


def test_the_chain_gives_the_gates_the_verdict_table_holds(cases):
    assert {(c.kind, c.place): c.gate for c in cases if c.schema} == {
        (kind, place): VERDICTS[(kind, place)] for kind in KINDS for place in PLACES if (kind, place) in VERDICTS
    }, table(cases)


def test_every_gate_is_met_and_derivls_agrees_with_each(cases):
    assert {c.gate for c in cases} == {"", "loader", "codegen", "g++"}, table(cases)
    wrong = [(c.kind, c.place, c.gate, c.message, c.derivls) for c in cases if bool(c.gate) != bool(c.derivls)]
    assert wrong == [], table(cases)
