"""The types derivls says the saved calls take are the ones g++ accepts (derivatives/formulas/savedcalls.py).

Every call of `CALLS` is compiled with one argument of every C++ type of `JUDGED`, where VariableType.cpp
evaluates it (`grad_fn->tensors_args_sizes = to_args_sizes(tensors);`, `grad_fn->self_info = self;` for
`zeros_like(self)`): inside its namespace, with its
includes and using-directives. g++ must reject exactly the pairs derivls reports (`takes` does not hold the
type) — one translation unit, one g++ run.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from derivls.derivatives.formulas.savedcalls import CALLS, JUDGED

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
    gxx = shutil.which("g++")
    assert gxx is not None, "g++ is needed (apt-get install g++)"
    spec = importlib.util.find_spec("torch")  # the wheel's headers, without importing torch
    assert spec is not None and spec.submodule_search_locations
    include = Path(list(spec.submodule_search_locations)[0]) / "include"
    lines = PRELUDE.splitlines()
    owner: dict[int, tuple[str, str]] = {}
    for n, name in enumerate(sorted(CALLS)):
        for k, cpp_type in enumerate(sorted(JUDGED)):
            owner[len(lines) + 2] = (name, cpp_type)
            lines += [f"void case_{n}_{k}({cpp_type} x) {{", "  " + STATEMENTS.get(name, "auto saved = {}(x);").format(name),
                      "  (void)saved;", "}"]  # fmt: skip
    lines.append("}")
    source = tmp_path / "saved_calls.cpp"
    source.write_text("\n".join(lines) + "\n")
    run = subprocess.run(
        [gxx, "-std=c++20", "-fsyntax-only", "-fmax-errors=1000", f"-I{include}", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    rejected = set()
    for m in re.finditer(rf"^{re.escape(str(source))}:(\d+):\d+: error:", run.stderr, re.M):
        assert int(m.group(1)) in owner, run.stderr[:3000]  # (an error outside the calls: the prelude)
        rejected.add(owner[int(m.group(1))])
    derivls = {(name, t) for name, call in CALLS.items() for t in JUDGED if t not in call.takes}
    assert rejected == derivls, (sorted(rejected - derivls), sorted(derivls - rejected))
