"""The ATen function names VariableType.cpp cannot call unqualified are the ones derivls reports
(`formula-ambiguous-name`, derivatives/formulas/headers.py's FORWARD_AMBIGUOUS).

Every ATen function of the real 2.13 native_functions.yaml is called unqualified, with a Tensor, where a
forward formula is compiled: after the VariableType.cpp template's includes and using-directives, inside its
namespaces. Whatever else g++ says of a call (an argument count), its name lookup is ambiguous for exactly
the names derivls lists — one translation unit, one g++ run.
"""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex, Variant
from derivls.derivatives.formulas.declarations import FORWARD_AMBIGUOUS
from tests.gxx import syntax_errors

pytestmark = pytest.mark.compile


def test_gxx_finds_exactly_the_aten_names_derivls_calls_ambiguous_in_a_forward_formula(real_files, tmp_path: Path):
    template = (real_files.packaged / "autograd" / "templates" / "VariableType.cpp").read_text()
    head = [line for line in template.splitlines() if line.startswith(("#include", "using namespace"))]
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    names = sorted({f.func.name.name.base for f in index.functions if Variant.function in f.variants})
    assert len(names) > 1000
    calls = [f"void call_{k}(const at::Tensor& a) {{ (void){name}(a); }}" for k, name in enumerate(names)]
    lines = [*head, "namespace torch::autograd::VariableType { namespace {", *calls, "}}"]
    errors, stderr = syntax_errors(lines, tmp_path / "variable_type_lookup.cpp")
    ambiguous = {
        m.group(1)
        for ms in errors.values()
        for e in ms
        if (m := re.match(r"reference to [‘'](\w+)[’'] is ambiguous", e))
    }
    assert ambiguous == set(FORWARD_AMBIGUOUS), stderr[:3000]
