"""Issue 34: the gradcheck build compiles and links against the chosen Python's torch, never a `torch/include` or
`torch/lib` a workspace ships beside its derivatives.yaml, and the torch child leaves nothing in TMPDIR.
Slow (a compiler, torch's import): `python -m pytest -m gradcheck`."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from derivls.compile.toolchain import REQUIRED_HEADERS
from tests.gradcheck.conftest import gradcheck

pytestmark = pytest.mark.gradcheck


def test_a_workspaces_own_torch_headers_and_libraries_are_not_used_and_no_file_is_left(
    wheel_copy: Path, tmp_path: Path, monkeypatch
):
    site = wheel_copy.parents[3]  # site-packages/torchgen/packaged/autograd/derivatives.yaml
    marker = tmp_path / "DECOY-HEADER-COMPILED"
    for header in REQUIRED_HEADERS:  # a decoy torch/include beside the file: it would not compile
        path = site / "torch" / "include" / header
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(f'#error "decoy header"\nstatic int derivls_decoy = (remove("{marker}"), 0);\n')
    (site / "torch" / "lib").mkdir()
    (site / "torch" / "lib" / "libtorch_cpu.so").write_text("not a library\n")
    temp = tmp_path / "tmp"
    temp.mkdir()
    monkeypatch.setenv("TMPDIR", str(temp))
    run = gradcheck(wheel_copy, "--op", "acos", cwd=tmp_path)
    assert run.code == 0, run.stderr[-2000:]
    assert run.summary["counts"]["passed"] == 1, run.summary
    assert not marker.exists()
    assert os.listdir(temp) == []  # the compilers' and the torch child's files (torchinductor_*) are removed
