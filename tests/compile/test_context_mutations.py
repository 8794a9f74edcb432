"""derivls against the compiler on formulas whose text does not fit its place in the generated C++ (the
`--context` campaign: tests/formulas/context_mutations.py): a statement's `;` after the formula or between a
call's arguments, `return`/`auto` before it, a top-level comma (a tuple's elements bare, a second value),
Python's trailing `,`, `\\` or `# comment`. g++ judges each in the code torchgen generates for the entry;
derivls must report exactly what it rejects (formula-context: derivatives/formulas/rules/context.py).

Measured (250 entries a seed, `python -m tests.formulas.mutations --context SEED`), compiled / compiler
rejected / derivls reported / derivls reported where the compiler accepted: seed 1: 238 / 170 / 170 / 0;
seed 2: 243 / 184 / 184 / 0; seed 3: 243 / 179 / 179 / 0; seed 4: 236 / 177 / 177 / 0.
"""

from __future__ import annotations

import pytest

from tests.formulas.context_mutations import CONTEXT_KINDS
from tests.formulas.mutations import Verdict, judge, table

pytestmark = pytest.mark.compile

SEED = 1
COUNT = 80  # (a shared 2-core machine: one g++ batch of 80 entries)


@pytest.fixture(scope="module")
def verdicts(real_files) -> list[Verdict]:
    include = str(real_files.packaged.parent.parent / "torch" / "include")
    return judge(real_files.derivatives, real_files.native, real_files.tags, include, SEED, COUNT, CONTEXT_KINDS)


def _show(vs: list[Verdict]) -> str:
    return "\n".join(f"{v.mutation.kind}: {v.mutation.new}\n  {v.derivls} {v.compiler[:1]}" for v in vs[:10])


def test_every_context_kind_is_drawn_and_reaches_the_compiler(verdicts):
    assert {v.mutation.kind for v in verdicts} == set(CONTEXT_KINDS), table(verdicts)
    # (a mutation the gate refuses never reaches a compiler, issue 54: it must be said on its entry instead)
    assert all(v.gated for v in verdicts if v.refused and not v.stopped), _show([v for v in verdicts if v.refused])
    assert sum(v.judged or v.gated for v in verdicts) >= 0.9 * COUNT, table(verdicts)


def test_derivls_reports_every_context_mistake_the_compiler_rejects(verdicts):
    rejected = [v for v in verdicts if v.judged and v.compiler_rejects]
    missed = [v for v in rejected if not v.derivls_rejects]
    assert len(rejected) >= 0.4 * COUNT, table(verdicts)
    assert missed == [], _show(missed)


def test_derivls_reports_no_error_where_the_compiler_accepts_the_text(verdicts):
    # a trailing `;` after a statement the generated code ends, a comma operator whose value is a Tensor, a YAML
    # comment: warnings at most
    accepted = [v for v in verdicts if v.judged and not v.compiler_rejects]
    assert len(accepted) >= 0.1 * COUNT, table(verdicts)
    wrong = [v for v in accepted if v.derivls_rejects]
    assert wrong == [], _show(wrong)
