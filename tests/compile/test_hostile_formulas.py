"""Issue 34: a formula written to attack the compiler (the adversarial run's repros) is refused or bounded,
with the real g++ against the torch wheel's headers, through the CLI as a user (or CI on a fork's pull
request) runs it: `derivls check --compile`.

- a directive after a line break (`%:include "/dev/zero"`, `/etc/passwd`, `</proc/self/fd/0>`) is reported by
  formula-context on its line, never compiled: no memory bomb, no file's text in the output, no wait on stdin;
- a formula that keeps g++ busy (0.94 MB of `1+1+…`) and a compiler short of memory each end in one
  compile-limit diagnostic per generated file within the bound.

Slow (a C++ compiler): `python -m pytest -m compile`."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.compile

ACOS = "  self: grad * -((-self * self + 1).rsqrt()).conj()\n"


def _derivls(args: list[str], env: dict[str, str] | None = None, timeout: float = 600) -> tuple[int, str, float]:
    """Run the CLI with its stdin an open pipe (as a hook or CI step may), its output and time."""
    started = time.monotonic()
    process = subprocess.Popen(
        [sys.executable, "-m", "derivls", *args],
        stdin=subprocess.PIPE,
        stdout=subprocess.PIPE,
        stderr=subprocess.STDOUT,
        text=True,
        env={**os.environ, **(env or {})},
    )
    chunks: list[str] = []
    reader = threading.Thread(target=lambda: chunks.append(process.stdout.read()), daemon=True)  # type: ignore[union-attr]
    reader.start()
    try:
        process.wait(timeout=timeout)  # (communicate() would close its stdin)
        reader.join(30)
    finally:
        process.kill()
        assert process.stdin is not None
        process.stdin.close()
    return process.returncode, "".join(chunks), time.monotonic() - started


@pytest.fixture
def with_acos(real_files, tmp_path: Path):
    """A copy of the 2.13 file (and its templates) with acos's backward formula replaced."""

    def make(formula_yaml: str) -> Path:
        folder = tmp_path / "autograd"
        folder.mkdir(exist_ok=True)
        if not (folder / "templates").exists():
            shutil.copytree(real_files.derivatives.parent / "templates", folder / "templates")
        text = real_files.derivatives.read_text(encoding="utf-8")
        assert text.count(ACOS) == 1
        path = folder / "derivatives.yaml"
        path.write_text(text.replace(ACOS, formula_yaml, 1), encoding="utf-8")
        return path

    return make


def _args(path: Path, real_files) -> list[str]:
    include = real_files.packaged.parent.parent / "torch" / "include"
    return [
        "check",
        str(path),
        "--native",
        str(real_files.native),
        "--compile",
        "--op",
        "acos",
        "--torch-include",
        str(include),
    ]


@pytest.mark.parametrize(
    "target",
    ['"/dev/zero"', '"/etc/passwd"', "</proc/self/fd/0>"],
    ids=["dev-zero", "etc-passwd", "stdin"],
)
def test_a_directive_after_a_line_break_is_reported_on_its_line_and_never_compiled(with_acos, real_files, target):
    # a double-quoted YAML scalar: "\n" is a line break in the formula, so the build would read a directive
    escaped = target.replace('"', '\\"')
    path = with_acos(f'  self: "grad * [](){{\\n%:include {escaped}\\nreturn 1; }}()"\n')
    code, out, seconds = _derivls(_args(path, real_files))
    assert seconds < 300, out[-2000:]
    assert code == 1
    assert "[formula-context]" in out and "digraph" in out
    line = (
        path.read_text(encoding="utf-8")
        .splitlines()
        .index('  self: "grad * [](){\\n%:include ' + escaped + '\\nreturn 1; }()"')
    )
    assert f"derivatives.yaml:{line + 1}:" in out
    assert "[compile-error]" not in out and "[compile-limit]" not in out  # (never handed to the compiler)
    for word in ("root:x:", "/bin/bash", "nologin"):  # nothing of /etc/passwd
        assert word not in out


def test_a_formula_that_keeps_the_compiler_busy_ends_in_one_compile_limit_per_generated_file(with_acos, real_files):
    terms = "+".join(["1"] * 470_000)  # 0.94 MB: kept two cc1plus at 100 % for 150 s and more
    path = with_acos(f"  self: grad * ({terms})\n")
    code, out, seconds = _derivls(_args(path, real_files), env={"DERIVLS_COMPILE_SECONDS": "20"})
    assert code == 1
    limits = [line for line in out.splitlines() if line.endswith("[compile-limit]")]
    # acos's backward node, and its forward formula (auto_element_wise: the same text)
    assert len(limits) == 2, out[-3000:]
    assert all("ran out of time" in line and "AcosBackward0" in line for line in limits)
    assert seconds < 240  # the bound (20 s), twice at most for each file, and the precompiled header


def test_a_compiler_short_of_memory_is_one_compile_limit_naming_memory(with_acos, real_files):
    path = with_acos(ACOS)
    code, out, _ = _derivls(_args(path, real_files), env={"DERIVLS_COMPILE_MEMORY_MB": "300"})
    assert code == 1
    limits = [line for line in out.splitlines() if line.endswith("[compile-limit]")]
    assert len(limits) == 2 and all("ran out of memory" in line for line in limits), out[-3000:]
