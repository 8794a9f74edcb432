"""The real lintrunner runs the `.lintrunner.toml` block of docs/cli.md on a git repository holding a small
PyTorch checkout (tests/fixtures/lsp/checkout): it reports a seeded mistake at its line, and `lintrunner -a`
writes derivls's fix."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

DOCS = Path(__file__).parents[2] / "docs" / "cli.md"
DERIVATIVES = "tools/autograd/derivatives.yaml"
NATIVE = "aten/src/ATen/native/native_functions.yaml"
CORRECT = "  self: grad * self.sgn()\n"
SEEDED = "  self: grad * slef.sgn()\n"  # line 4 of the fixture: `abs`'s backward formula


def lintrunner() -> str:
    found = shutil.which("lintrunner") or shutil.which("lintrunner", path=str(Path(sys.executable).parent))
    if found is None:
        pytest.fail("lintrunner is not installed (pip install -e '.[test]')")
    return found


def documented_config() -> str:
    """docs/cli.md's .lintrunner.toml block, with `derivls` this environment's executable."""
    text = DOCS.read_text(encoding="utf-8")
    block = re.search(r"<!-- lintrunner-config[^\n]*\n\s*```toml\n(.*?)\n\s*```", text, re.S)
    assert block is not None, "docs/cli.md lost its .lintrunner.toml block"
    config = "\n".join(line.strip() for line in block.group(1).splitlines())
    derivls = shutil.which("derivls", path=str(Path(sys.executable).parent)) or shutil.which("derivls")
    assert derivls is not None
    assert "command = ['derivls', " in config
    return config.replace("command = ['derivls', ", f"command = [{json.dumps(derivls)}, ")


def git(repo: Path, *args: str) -> None:
    subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    )


@pytest.fixture
def repo(tmp_path: Path) -> Path:
    """A committed checkout with the documented .lintrunner.toml; the seeded mistake is an uncommitted edit."""
    repo = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "lsp" / "checkout", repo)
    (repo / ".lintrunner.toml").write_text(documented_config() + "\n", encoding="utf-8")
    git(repo, "init", "-q", ".")
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the fixture")
    derivatives = repo / DERIVATIVES
    text = derivatives.read_text(encoding="utf-8")
    assert text.splitlines(keepends=True)[3] == CORRECT
    derivatives.write_text(text.replace(CORRECT, SEEDED, 1), encoding="utf-8")
    return repo


def run_lintrunner(repo: Path, *args: str) -> subprocess.CompletedProcess[str]:
    home = repo.parent / "home"  # lintrunner keeps its state under the home folder: not the user's
    env = {**os.environ, "HOME": str(home), "XDG_DATA_HOME": str(home / "data"), "XDG_CACHE_HOME": str(home / "c")}
    env["DERIVLS_NO_CACHE"] = "1"
    return subprocess.run(
        [lintrunner(), *args],
        cwd=repo,
        env=env,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=300,
    )


def test_lintrunner_reports_a_seeded_mistake_at_its_line_with_derivls_fix(repo: Path):
    done = run_lintrunner(repo, "--output", "json")
    assert done.returncode == 1, done.stderr  # lintrunner: 1 when it printed a lint
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(m["code"], m["name"], m["severity"], m["line"], m["char"]) for m in messages] == [
        ("DERIVLS", "formula-unknown-name", "error", 4, 15)
    ]
    (found,) = messages
    assert Path(found["path"]).resolve() == (repo / DERIVATIVES).resolve()
    assert "'slef' is not declared" in found["description"]
    assert found["original"] == (repo / DERIVATIVES).read_text(encoding="utf-8")
    assert found["replacement"] == found["original"].replace(SEEDED, CORRECT)


def test_lintrunner_apply_writes_the_fix_and_the_next_run_is_clean(repo: Path):
    applied = run_lintrunner(repo, "-a")
    assert applied.returncode == 0, applied.stdout + applied.stderr
    assert (repo / DERIVATIVES).read_text(encoding="utf-8").splitlines(keepends=True)[3] == CORRECT
    again = run_lintrunner(repo, "--output", "json")
    assert (again.returncode, again.stdout.strip()) == (0, ""), again.stderr


def test_lintrunner_init_takes_the_documented_init_command(repo: Path):
    done = run_lintrunner(repo, "init", "--dry-run")  # {{DRYRUN}} is 1: it installs nothing
    assert done.returncode == 0, done.stdout + done.stderr


def test_a_changed_native_functions_yaml_has_lintrunner_check_the_derivatives_yaml_that_uses_it(repo: Path):
    git(repo, "add", "-A")
    git(repo, "commit", "-q", "-m", "the mistake")
    native = repo / NATIVE
    native.write_text(native.read_text(encoding="utf-8") + "\n", encoding="utf-8")  # only it changed now
    done = run_lintrunner(repo, "--output", "json", f"--paths-cmd=echo {NATIVE}")
    messages = [json.loads(line) for line in done.stdout.splitlines() if line.startswith("{")]
    assert [(Path(m["path"]).resolve(), m["line"], m["name"]) for m in messages] == [
        ((repo / DERIVATIVES).resolve(), 4, "formula-unknown-name")
    ]
