"""`--since REF`: only the entries whose text differs from a git revision's version of the file
(derivls/since.py), for `check` (their diagnostics) and `gradcheck` (their formulas)."""

from __future__ import annotations

import json
import shutil
import subprocess
from pathlib import Path

import pytest

from derivls import cli
from derivls.gradcheck import engine, runner
from derivls.gradcheck.engine import GradcheckResult
from derivls.gradcheck.results import Summary
from derivls.since import changed_entries
from tests.conftest import FIXTURES

DERIVATIVES = "tools/autograd/derivatives.yaml"


def git(repo: Path, *args: str) -> str:
    return subprocess.run(
        ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-c", "commit.gpgsign=false", *args],
        cwd=repo,
        check=True,
        capture_output=True,
        text=True,
        stdin=subprocess.DEVNULL,
        timeout=60,
    ).stdout


@pytest.fixture
def repo(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A committed checkout whose `mul.Tensor` entry already has a mistake (`othr`); the working tree then
    misspells `self` in `abs` (line 4)."""
    root = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "lsp" / "checkout", root)
    path = root / DERIVATIVES
    path.write_text(path.read_text().replace("mul_tensor_backward(grad, other,", "mul_tensor_backward(grad, othr,"))
    git(root, "init", "-q", ".")
    git(root, "add", "-A")
    git(root, "commit", "-q", "-m", "base")
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    monkeypatch.chdir(root)
    return root


def check_json(capsys, *args: str) -> tuple[int, list[dict]]:
    code = cli.main(["check", "--no-cache", "--format", "json", *args])
    out = capsys.readouterr().out
    return code, json.loads(out) if out.strip() else []


def test_an_entry_whose_text_differs_is_changed_and_a_trailing_blank_is_not():
    before = "- name: a\n  self: grad\n\n- name: b\n  self: grad\n"
    after = "- name: a\n  self: grad\n- name: b\n  self: grad * 2\n\n- name: c\n  self: grad\n"
    changed = changed_entries(after, before)
    assert changed.first_lines == [2, 5]  # b (edited) and c (new); a only lost its trailing blank line
    assert changed_entries(before, before).first_lines == []
    assert changed_entries(after, None).first_lines == [0, 2, 5]  # a file the revision lacks: all new


def test_check_since_reports_only_the_diagnostics_of_the_changed_entries(repo: Path, capsys):
    code, everything = check_json(capsys, DERIVATIVES)
    assert {d["line"] for d in everything if d["severity"] == "error"} >= {4, 13}
    code, since = check_json(capsys, DERIVATIVES, "--since", "HEAD")
    assert code == 1
    assert [(d["line"], d["code"]) for d in since if d["severity"] == "error"] == [(4, "formula-unknown-name")]


def test_check_since_the_revision_itself_reports_nothing_of_the_unchanged_file(repo: Path, capsys):
    git(repo, "commit", "-q", "-am", "the slef edit")
    code, since = check_json(capsys, DERIVATIVES, "--since", "HEAD")
    assert (code, [d for d in since if d["severity"] == "error"]) == (0, [])


def test_a_bad_revision_is_a_usage_error(repo: Path, capsys):
    assert cli.main(["check", DERIVATIVES, "--since", "no-such-branch"]) == 2
    assert capsys.readouterr().err == (
        f"derivls check: error: --since: 'no-such-branch' is not a commit of the repository of {DERIVATIVES}.\n"
    )


def test_an_option_given_as_the_revision_is_refused_before_git_runs(repo: Path, capsys):
    assert cli.main(["check", DERIVATIVES, "--since=--output=x"]) == 2
    assert "is not a git revision" in capsys.readouterr().err
    assert not (repo / "tools" / "autograd" / "x").exists() and not (repo / "x").exists()


def test_without_git_on_path_since_says_it_needs_git(repo: Path, capsys, monkeypatch: pytest.MonkeyPatch):
    monkeypatch.setenv("PATH", str(repo / "no-bin"))
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    assert capsys.readouterr().err == "derivls check: error: --since needs git, and git is not on PATH.\n"


def test_gradcheck_since_checks_the_units_of_the_changed_entries_only(repo: Path, capsys, monkeypatch):
    path = repo / DERIVATIVES
    path.write_text(
        path.read_text().replace("grad * slef.sgn()", "grad * self.sgn()").replace("self.cos()", "self.sin()")
    )
    monkeypatch.setattr(runner, "python_version", lambda python: "2.13.0+cpu")
    given: list[str] = []

    def stand_in(units, derivatives, **options):
        given.extend(u.name for u in units)
        return GradcheckResult([], Summary([]), torch_version="2.13.0+cpu")

    monkeypatch.setattr(engine, "gradcheck_units", stand_in)
    assert cli.main(["gradcheck", DERIVATIVES, "--since", "HEAD", "--torch-include", str(repo)]) == 0
    assert given == ["SinBackward0"]


def test_gradcheck_since_with_nothing_changed_says_so_and_exits_0(repo: Path, capsys, monkeypatch):
    git(repo, "commit", "-q", "-am", "the slef edit")
    monkeypatch.setattr(runner, "python_version", lambda python: "2.13.0+cpu")
    assert cli.main(["gradcheck", DERIVATIVES, "--since", "HEAD", "--torch-include", str(repo)]) == 0
    assert "no entry of tools/autograd/derivatives.yaml changed since HEAD" in capsys.readouterr().err


def test_a_revision_s_file_over_the_size_cap_is_not_read(repo: Path, capsys, monkeypatch: pytest.MonkeyPatch):
    from derivls import since

    monkeypatch.setattr(since, "MAX_FILE_BYTES", 100)
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    assert "at HEAD is over derivls's limit" in capsys.readouterr().err
