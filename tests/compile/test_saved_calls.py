"""The types derivls says the saved calls take are the ones g++ accepts (derivatives/formulas/savedcalls.py).

Every call of `CALLS` is compiled with one argument of every C++ type of `JUDGED`, where VariableType.cpp
evaluates it (`grad_fn->tensors_args_sizes = to_args_sizes(tensors);`, `grad_fn->self_info = self;` for
`zeros_like(self)`): inside its namespace, with its
includes and using-directives. g++ must reject exactly the pairs derivls reports (`takes` does not hold the
type) — one translation unit, one g++ run.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.derivatives.formulas.savedcalls import CALLS, JUDGED
from tests.gxx import syntax_errors

pytestmark = pytest.mark.compile

PRELUDE = """\
#include "torch/csrc/autograd/VariableTypeUtils.h"
#include "torch/csrc/autograd/FunctionsManual.h"
using namespace at;
using namespace torch::autograd::generated;
namespace torch::autograd::VariableType {
"""

# how VariableType.cpp saves each (gen_variable_type.py's save_variables): `grad_fn->x_info = x;` for zeros_like
STATEMENTS = {"zeros_like": "torch::autograd::TypeAndSize saved = x;"}


def test_gxx_rejects_exactly_the_argument_types_derivls_reports_for_each_saved_call(tmp_path: Path) -> None:
    lines = PRELUDE.splitlines()
    owner: dict[int, tuple[str, str]] = {}
    for n, name in enumerate(sorted(CALLS)):
        for k, cpp_type in enumerate(sorted(JUDGED)):
            owner[len(lines) + 2] = (name, cpp_type)
            lines += [f"void case_{n}_{k}({cpp_type} x) {{", "  " + STATEMENTS.get(name, "auto saved = {}(x);").format(name),
                      "  (void)saved;", "}"]  # fmt: skip
    lines.append("}")
    errors, stderr = syntax_errors(lines, tmp_path / "saved_calls.cpp")
    assert set(errors) <= set(owner), stderr[:3000]  # (an error outside the calls: the prelude)
    rejected = {owner[line] for line in errors}
    derivls = {(name, t) for name, call in CALLS.items() for t in JUDGED if t not in call.takes}
    assert rejected == derivls, (sorted(rejected - derivls), sorted(derivls - rejected))
