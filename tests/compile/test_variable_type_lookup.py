"""The ATen function names VariableType.cpp cannot call unqualified are the ones derivls reports
(`formula-ambiguous-name`, derivatives/formulas/headers.py's FORWARD_AMBIGUOUS).

Every ATen function of the real 2.13 native_functions.yaml is called unqualified, with a Tensor, where a
forward formula is compiled: after the VariableType.cpp template's includes and using-directives, inside its
namespaces. Whatever else g++ says of a call (an argument count), its name lookup is ambiguous for exactly
the names derivls lists — one translation unit, one g++ run.
"""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex, Variant
from derivls.derivatives.formulas.headers import FORWARD_AMBIGUOUS

pytestmark = pytest.mark.compile


def test_gxx_finds_exactly_the_aten_names_derivls_calls_ambiguous_in_a_forward_formula(real_files, tmp_path: Path):
    gxx = shutil.which("g++")
    assert gxx is not None, "g++ is needed (apt-get install g++)"
    spec = importlib.util.find_spec("torch")  # the wheel's headers, without importing torch
    assert spec is not None and spec.submodule_search_locations
    include = Path(list(spec.submodule_search_locations)[0]) / "include"
    template = (real_files.packaged / "autograd" / "templates" / "VariableType.cpp").read_text()
    head = [line for line in template.splitlines() if line.startswith(("#include", "using namespace"))]
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    names = sorted({f.func.name.name.base for f in index.functions if Variant.function in f.variants})
    assert len(names) > 1000
    calls = [f"void call_{k}(const at::Tensor& a) {{ (void){name}(a); }}" for k, name in enumerate(names)]
    source = tmp_path / "variable_type_lookup.cpp"
    source.write_text("\n".join([*head, "namespace torch::autograd::VariableType { namespace {", *calls, "}}"]) + "\n")
    run = subprocess.run(
        [gxx, "-std=c++20", "-fsyntax-only", "-fmax-errors=0", f"-I{include}", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    ambiguous = set(re.findall(r"error: reference to [‘'](\w+)[’'] is ambiguous", run.stderr))
    assert ambiguous == set(FORWARD_AMBIGUOUS), run.stderr[:3000]
