"""`derivls check` reports native_functions.yaml's own mistakes as `native_functions.yaml:line:col`, checks a
native_functions.yaml given alone, and keeps checking derivatives.yaml entries that do not need a bad one."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

from tests.lsp.conftest import CHECKOUT


def _check(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "derivls", "check", "--no-cache", *args], capture_output=True, text=True, timeout=300
    )


def _checkout(tmp_path: Path, version: str | None = "2.13.0") -> Path:
    root = tmp_path / "pytorch"
    shutil.copytree(CHECKOUT, root)
    if version is not None:
        (root / "version.txt").write_text(version + "\n")
    return root


def _native(root: Path) -> Path:
    return root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"


def test_a_typo_in_native_functions_is_an_error_on_its_line_when_the_release_is_known(tmp_path: Path):
    root = _checkout(tmp_path)
    native = _native(root)
    text = native.read_text().replace("- func: mul.Tensor(Tensor self", "- func: mul.Tensor(Tensr self")
    native.write_text(text)
    line = text[: text.index("Tensr")].count("\n") + 1
    column = text.split("\n")[line - 1].index("Tensr") + 1
    run = _check(str(native))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{native}:{line}:{column}: error: unrecognized type 'Tensr'" in run.stdout
    assert "[native-unknown-type]" in run.stdout
    # the derivatives.yaml of the checkout is checked too: its other entries as before, mul.Tensor's not
    assert "derivatives.yaml: 0 errors" in run.stdout or "derivatives.yaml: using" in run.stdout


def test_one_bad_entry_does_not_blind_the_rest(tmp_path: Path):
    root = _checkout(tmp_path)
    native = _native(root)
    # an unknown variant used to make the whole check one native-unreadable error at derivatives.yaml:1
    native.write_text(native.read_text().replace("variants: function, method", "variants: function, methd", 1))
    derivatives = root / "tools" / "autograd" / "derivatives.yaml"
    derivatives.write_text(derivatives.read_text().replace("- name: sin(Tensor self)", "- name: sinus(Tensor self)"))
    run = _check(str(derivatives))
    assert "native-unreadable" not in run.stdout
    assert "[native-unknown-variant]" in run.stdout
    assert "[schema-not-found]" in run.stdout  # the derivatives.yaml entries are still checked


def test_a_native_functions_yaml_alone_is_checked(tmp_path: Path):
    lone = tmp_path / "native_functions.yaml"
    lone.write_text("- func: f(Tensor self, int lambda) -> Tensor\n")
    run = _check(str(lone))
    assert run.returncode == 1, run.stdout + run.stderr
    assert f"{lone}:1:" in run.stdout and "[native-python-keyword]" in run.stdout
    assert f"checked {lone}: 1 error, 0 warnings" in run.stdout
