"""`--since REF`: only the entries whose text differs from a git revision's version of the file
(derivls/project/since.py), for `check` (their diagnostics) and `gradcheck` (their formulas)."""

from __future__ import annotations

import contextlib
import json
import os
import shutil
import signal
import subprocess
import time
from pathlib import Path

import pytest

from derivls.cli import commandline as cli
from derivls.gradcheck import engine, runner
from derivls.gradcheck.engine import GradcheckResult
from derivls.gradcheck.results import Summary
from derivls.project.since import changed_entries
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
    # (the checkout has a FunctionsManual.cpp: its helpers changed since HEAD would pick their callers too)
    said = capsys.readouterr().err
    assert "no entry of tools/autograd/derivatives.yaml or FunctionsManual.cpp changed since HEAD" in said


def test_a_revision_s_file_over_the_size_cap_is_not_read(repo: Path, capsys, monkeypatch: pytest.MonkeyPatch):
    from derivls.project import since

    monkeypatch.setattr(since, "MAX_FILE_BYTES", 100)
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    assert "at HEAD is over derivls's limit" in capsys.readouterr().err


@pytest.fixture
def partial_clone(repo: Path, tmp_path: Path) -> tuple[Path, Path]:
    """A blob-less partial clone of `repo` (no checkout: HEAD's blobs are missing, the trees are there), with
    the working file written in; its remote's upload-pack and ssh command are a script that leaves a marker.
    Returns (clone, marker)."""
    git(repo, "config", "uploadpack.allowFilter", "true")
    git(repo, "config", "uploadpack.allowAnySHA1InWant", "true")
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", "--filter=blob:none", "--no-checkout", f"file://{repo}", str(clone))
    marker = tmp_path / "MARKER"
    script = tmp_path / "planted.sh"
    script.write_text(f'#!/bin/sh\ntouch "{marker}"\nexec git-upload-pack "$@"\n')
    script.chmod(0o755)
    git(clone, "config", "remote.origin.uploadpack", str(script))
    git(clone, "config", "core.sshCommand", str(script))
    (clone / DERIVATIVES).parent.mkdir(parents=True)
    (clone / DERIVATIVES).write_text((repo / DERIVATIVES).read_text())
    (clone / "aten").symlink_to(repo / "aten")  # (native_functions.yaml, found beside it as in the checkout)
    return clone, marker


def test_a_partial_clone_s_missing_blob_is_an_error_and_git_fetches_nothing(partial_clone, capsys, monkeypatch):
    clone, marker = partial_clone
    monkeypatch.chdir(clone)
    assert cli.main(["check", "--no-cache", DERIVATIVES, "--since", "HEAD"]) == 2
    err = capsys.readouterr().err
    assert err.startswith(f"derivls check: error: --since: git cannot read {DERIVATIVES} at HEAD: ")
    assert not marker.exists()  # the promisor remote's upload-pack (a command in .git/config) never ran


def test_gradcheck_since_in_a_partial_clone_is_an_error_not_every_entry(partial_clone, capsys, monkeypatch):
    clone, marker = partial_clone
    monkeypatch.chdir(clone)
    monkeypatch.setattr(runner, "python_version", lambda python: "2.13.0+cpu")
    given: list[str] = []

    def stand_in(units, derivatives, **options):
        given.extend(u.name for u in units)
        return GradcheckResult([], Summary([]), torch_version="2.13.0+cpu")

    monkeypatch.setattr(engine, "gradcheck_units", stand_in)
    assert cli.main(["gradcheck", DERIVATIVES, "--since", "HEAD", "--torch-include", str(clone)]) == 2
    assert capsys.readouterr().err.startswith("derivls gradcheck: error: --since: git cannot read ")
    assert (given, marker.exists()) == ([], False)


def fake_git(folder: Path, body: str) -> None:
    """A `git` on PATH that runs `body` (sh) instead."""
    folder.mkdir()
    (folder / "git").write_text("#!/bin/sh\n" + body)
    (folder / "git").chmod(0o755)


def test_git_starts_outside_the_workspace_with_fetching_and_config_commands_off(repo: Path, capsys, monkeypatch):
    seen = repo.parent / "seen"
    fake_git(
        repo.parent / "bin",
        f'{{ pwd; echo "$@"; echo "$GIT_NO_LAZY_FETCH $GIT_ALLOW_PROTOCOL"; }} > "{seen}"\nexit 1\n',
    )
    monkeypatch.setenv("PATH", f"{repo.parent / 'bin'}:{os.environ['PATH']}")
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    capsys.readouterr()
    cwd, args, env = seen.read_text().splitlines()
    assert not Path(cwd).resolve().is_relative_to(repo.resolve())
    assert f"-C {repo / 'tools' / 'autograd'}" in args
    for setting in ("core.fsmonitor=false", "protocol.allow=never", "safe.bareRepository=explicit"):
        assert f"-c {setting}" in args
    assert env == "1 none"


def test_a_git_that_does_not_answer_is_killed_with_what_it_started(repo: Path, capsys, monkeypatch):
    from derivls.project import since

    pid_file = repo.parent / "sleeper.pid"
    fake_git(repo.parent / "bin", f'sleep 600 &\necho $! > "{pid_file}"\nwait\n')
    monkeypatch.setenv("PATH", f"{repo.parent / 'bin'}:{os.environ['PATH']}")
    monkeypatch.setattr(since, "GIT_TIMEOUT", 0.5)
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    assert capsys.readouterr().err.startswith("derivls check: error: git did not answer within ")
    sleeper = int(pid_file.read_text())
    try:
        assert ended(sleeper)  # its process group was killed, not git alone
    finally:
        with contextlib.suppress(ProcessLookupError):
            os.kill(sleeper, signal.SIGKILL)


def ended(pid: int, seconds: float = 10.0) -> bool:
    """`pid` is gone or a zombie within `seconds`."""
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        try:
            if Path(f"/proc/{pid}/stat").read_text().split()[2] == "Z":
                return True
        except (FileNotFoundError, ProcessLookupError):
            return True
        time.sleep(0.05)
    return False


def test_commands_the_repository_s_config_names_never_run(repo: Path, capsys):
    marker = repo.parent / "MARKER"
    script = repo.parent / "planted.sh"
    script.write_text(f'#!/bin/sh\ntouch "{marker}"\n')
    script.chmod(0o755)
    for key in (
        "core.fsmonitor",
        "core.pager",
        "pager.cat-file",
        "diff.external",
        "core.sshCommand",
        "filter.planted.smudge",
        "filter.planted.textconv",
        "diff.planted.textconv",
        "core.askPass",
        "credential.helper",
        "gpg.program",
        "core.editor",
    ):
        git(repo, "config", key, str(script))
    (repo / ".gitattributes").write_text("*.yaml filter=planted diff=planted\n")
    hooks = repo / ".git" / "hooks"
    for hook in ("post-checkout", "reference-transaction", "pre-auto-gc"):
        (hooks / hook).write_text(f'#!/bin/sh\ntouch "{marker}"\n')
        (hooks / hook).chmod(0o755)
    code, since = check_json(capsys, DERIVATIVES, "--since", "HEAD")
    assert (code, [(d["line"], d["code"]) for d in since if d["severity"] == "error"]) == (
        1,
        [(4, "formula-unknown-name")],
    )
    assert not marker.exists()


def test_a_repository_config_that_stalls_git_is_cut_at_the_bound(repo: Path, capsys, monkeypatch):
    from derivls.project import since

    os.mkfifo(repo.parent / "stall")
    git(repo, "config", "include.path", str(repo.parent / "stall"))  # (git blocks opening it: no writer)
    monkeypatch.setattr(since, "GIT_TIMEOUT", 1.0)
    assert cli.main(["check", DERIVATIVES, "--since", "HEAD"]) == 2
    assert capsys.readouterr().err == (
        f"derivls check: error: git did not answer within 1 s in {repo / 'tools' / 'autograd'}.\n"
    )


def test_without_process_groups_git_runs_hardened_with_the_time_bound_alone(repo: Path):
    from derivls.base import safegit

    done = safegit._run_plain(str(repo / "tools" / "autograd"), ("ls-tree", "HEAD", "--", "derivatives.yaml"), 30)
    assert done.returncode == 0 and done.stdout.endswith(b"\tderivatives.yaml\n")
