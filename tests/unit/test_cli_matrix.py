"""One voice, no traceback (issue 49): every subcommand × {an unknown option, a missing file, a folder, an empty
file, a binary file, an unwritable output, a bad or used port, conflicting options} is refused the same way:
one line on stderr, `derivls CMD: error: MESSAGE.`, exit status 2, nothing on stdout, no usage block, no errno,
no traceback; outputs (a log file, a port) are checked before the work starts. The cases that do not apply to a
subcommand (a port for `check`, a file for `cache`) are left out; the table says which are there."""

from __future__ import annotations

import re
import shutil
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from derivls.cli import commandline as cli
from tests.conftest import FIXTURES

D = "tools/autograd/derivatives.yaml"
USED = "{used}"  # replaced by a port something listens on
RELATIVE_CACHE = "{relative cache}"  # dropped from the argv; DERIVLS_CACHE_DIR is set to a relative folder


# (subcommand, case) -> (argv, words the message must hold, owner when another change fixes it)
CASES: dict[tuple[str, str], tuple[list[str], tuple[str, ...], str | None]] = {
    # an unknown option: the subcommand's error, not the top level's
    ("serve", "an unknown option"): (["serve", "--bogus"], ("--bogus",), None),
    ("serve", "an unknown option, no command"): (["--bogus"], ("--bogus",), None),
    ("check", "an unknown option"): (["check", D, "--bogus"], ("--bogus",), None),
    ("dump", "an unknown option"): (["dump", D, "--bogus"], ("--bogus",), None),
    ("codegen", "an unknown option"): (["codegen", D, "--bogus"], ("--bogus",), None),
    ("gradcheck", "an unknown option"): (["gradcheck", D, "--op", "abs", "--bogus"], ("--bogus",), None),
    ("explain", "an unknown option"): (["explain", "--bogus"], ("--bogus",), None),
    ("cache", "an unknown option"): (["cache", "--bogus"], ("--bogus",), None),
    ("daemon", "an unknown option"): (["daemon", "status", "--bogus"], ("--bogus",), None),
    ("daemon", "an unknown action"): (["daemon", "restart"], ("restart",), None),
    # a missing file
    ("check", "a missing file"): (["check", "nope.yaml"], ("nope.yaml",), None),
    ("check", "a missing paths file"): (["check", "@nope.txt"], ("nope.txt",), None),
    ("check", "a missing --native"): (["check", D, "--native", "nope.yaml"], ("nope.yaml",), None),
    ("check", "a missing --tags"): (["check", D, "--tags", "nope.yaml"], ("nope.yaml",), None),
    ("dump", "a missing file"): (["dump", "nope.yaml"], ("nope.yaml",), None),
    ("codegen", "a missing file"): (["codegen", "nope.yaml"], ("nope.yaml",), None),
    ("codegen", "a missing --native"): (["codegen", D, "--native", "nope.yaml"], ("nope.yaml",), None),
    ("gradcheck", "a missing file"): (["gradcheck", "nope.yaml", "--all"], ("nope.yaml",), None),
    ("gradcheck", "a missing --manual"): (
        ["gradcheck", D, "--op", "abs", "--manual", "nope.cpp"],
        ("--manual not found", "nope.cpp"),
        None,
    ),
    # a folder (said to be a folder, not "not found")
    ("check", "a folder"): (["check", "adir"], ("adir",), None),
    ("check", "a folder as paths file"): (["check", "@adir"], ("adir",), None),
    ("check", "a folder as --native"): (["check", D, "--native", "adir"], ("adir",), None),
    ("dump", "a folder"): (["dump", "adir"], ("adir",), None),
    ("codegen", "a folder"): (["codegen", "adir"], ("adir",), None),
    ("codegen", "a folder as --native"): (["codegen", D, "--native", "adir"], ("adir",), None),
    ("gradcheck", "a folder"): (["gradcheck", "adir", "--all"], ("adir",), None),
    ("gradcheck", "a folder as --manual"): (
        ["gradcheck", D, "--op", "abs", "--manual", "adir"],
        ("--manual adir", "directory"),
        None,
    ),
    # an empty file (an empty derivatives.yaml is no usage error but the loader's: the test after this one)
    ("check", "an empty paths file"): (["check", "@empty.txt"], ("empty.txt",), None),
    # a binary file
    ("check", "a binary file"): (["check", "binary.yaml"], ("binary.yaml", "UTF-8"), None),
    ("check", "a binary paths file"): (["check", "@binary.yaml"], ("binary.yaml", "UTF-8"), None),
    ("dump", "a binary file"): (["dump", "binary.yaml"], ("binary.yaml", "UTF-8"), None),
    ("codegen", "a binary file"): (["codegen", "binary.yaml"], ("binary.yaml", "UTF-8"), None),
    ("gradcheck", "a binary file"): (["gradcheck", "binary.yaml", "--all"], ("binary.yaml", "UTF-8"), None),
    ("gradcheck", "a binary --manual"): (
        ["gradcheck", D, "--op", "abs", "--manual", "binary.yaml"],
        ("--manual", "binary.yaml", "UTF-8"),
        None,
    ),
    ("gradcheck", "a --manual with a NUL byte"): (
        ["gradcheck", D, "--op", "abs", "--manual", "nul.cpp"],
        ("--manual", "nul.cpp", "binary"),
        None,
    ),
    # an unwritable output, refused before the work starts
    ("serve", "a folder as --log-file"): (["serve", "--log-file", "adir"], ("--log-file", "adir"), None),
    ("serve", "a --log-file in a missing folder"): (["serve", "--log-file", "nodir/x.log"], ("nodir",), None),
    ("gradcheck", "a folder as --summary-json"): (
        ["gradcheck", D, "--op", "NoSuchOp", "--summary-json", "adir"],
        ("--summary-json", "adir"),
        None,
    ),
    ("gradcheck", "a --summary-json in a missing folder"): (
        ["gradcheck", D, "--op", "NoSuchOp", "--summary-json", "nodir/s.json"],
        ("--summary-json", "nodir"),
        None,
    ),
    # a bad or used port
    ("serve", "a port out of range"): (["serve", "--tcp", "--port", "99999"], ("99999",), None),
    ("serve", "a port that is no number"): (["serve", "--tcp", "--port", "http"], ("http",), None),
    ("serve", "a port in use"): (["serve", "--tcp", "--port", USED], ("in use",), None),
    ("serve", "a host that does not resolve"): (
        ["serve", "--tcp", "--host", "no-such-host.invalid"],
        ("no-such",),
        None,
    ),
    # conflicting options
    ("serve", "--stdio with --tcp"): (["serve", "--stdio", "--tcp"], ("--stdio", "--tcp"), None),
    ("serve", "--port without --tcp"): (["serve", "--port", "3000"], ("--port", "--tcp"), None),
    ("serve", "--host without --tcp"): (["serve", "--host", "0.0.0.0"], ("--host", "--tcp"), None),
    ("check", "--cxx without --compile"): (["check", D, "--cxx", "g++"], ("--cxx", "--compile"), None),
    ("check", "--jobs without --compile"): (["check", D, "-j", "3"], ("--jobs", "--compile"), None),
    ("check", "--op naming nothing"): (["check", D, "--op", "NoSuchOp"], ("NoSuchOp",), None),
    ("gradcheck", "--all with --op"): (
        ["gradcheck", D, "--all", "--op", "abs", "--python", "/no/such/python"],
        ("--all", "--op"),
        None,
    ),
    # a value the command cannot use
    ("check", "not a torch version"): (["check", D, "--torch-version", "two"], ("two",), None),
    ("check", "--since outside a git repository"): (["check", D, "--since", "HEAD"], ("--since",), None),
    ("check", "no such compiler"): (
        ["check", D, "--compile", "--cxx", "/no/such/compiler"],
        ("/no/such/compiler",),
        None,
    ),
    ("gradcheck", "no entry named"): (["gradcheck", D], ("--op",), None),
    ("gradcheck", "a Python without torch"): (
        ["gradcheck", D, "--op", "abs", "--python", "/no/such/python"],
        ("/no/such/python",),
        None,
    ),
    ("gradcheck", "--since outside a git repository"): (["gradcheck", D, "--since", "HEAD"], ("--since",), None),
    ("explain", "no such code"): (["explain", "no-such-code"], ("no-such-code",), None),
    ("cache", "a relative cache folder"): (["cache", RELATIVE_CACHE], ("relative/cache",), None),
}


def _params() -> Iterator[object]:
    for (command, case), (argv, words, owner) in CASES.items():
        marks = [pytest.mark.xfail(strict=True, reason=owner)] if owner else []
        yield pytest.param(command, argv, words, marks=marks, id=f"{command}: {case}")


@pytest.fixture
def workspace(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    root = tmp_path / "checkout"
    shutil.copytree(FIXTURES / "lsp" / "checkout", root)
    (root / "adir").mkdir()
    (root / "empty.yaml").write_text("")
    (root / "empty.txt").write_text("\n")
    (root / "binary.yaml").write_bytes(b"- name: abs\x00\xd0\xff\xfe(Tensor self)\n" * 4)
    (root / "nul.cpp").write_bytes(b"Tensor f(const Tensor& t) { return t; }\x00\n")  # (UTF-8, yet not text)
    monkeypatch.chdir(root)
    monkeypatch.setenv("DERIVLS_NO_CACHE", "1")
    monkeypatch.setenv("GIT_CEILING_DIRECTORIES", str(root.parent))  # the checkout is no git repository
    return root


@pytest.fixture
def used_port() -> Iterator[int]:
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listening:
        listening.bind(("127.0.0.1", 0))
        listening.listen()
        yield listening.getsockname()[1]


FORM = re.compile(r"derivls (serve|check|dump|codegen|gradcheck|explain|cache|daemon): error: [^\n]*[.?!]\n")


def run(argv: list[str], cwd: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str, str]:
    """`derivls ARGV`: `serve` in a child (it would serve, were it not refused), the others in this process."""
    if argv[0] in ("serve", "--bogus"):
        child = subprocess.run(
            [sys.executable, "-m", "derivls", *argv],
            cwd=cwd,
            stdin=subprocess.DEVNULL,
            capture_output=True,
            text=True,
            timeout=120,
        )
        return child.returncode, child.stdout, child.stderr
    try:
        code = cli.main(argv)
    except SystemExit as e:  # argparse's own exit
        code = e.code if isinstance(e.code, int) else 1
    out, err = capsys.readouterr()
    return code, out, err


@pytest.mark.parametrize(("command", "argv", "words"), list(_params()))
def test_every_subcommand_refuses_bad_input_in_one_line_with_exit_2(
    command: str,
    argv: list[str],
    words: tuple[str, ...],
    workspace: Path,
    used_port: int,
    capsys,
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    if RELATIVE_CACHE in argv:
        monkeypatch.delenv("DERIVLS_NO_CACHE")
        monkeypatch.setenv("DERIVLS_CACHE_DIR", "relative/cache")
    argv = [str(used_port) if a == USED else a for a in argv if a != RELATIVE_CACHE]
    code, out, err = run(argv, workspace, capsys)
    assert (code, out) == (2, ""), err
    assert FORM.fullmatch(err), err
    assert err.startswith(f"derivls {command}: error: "), err
    for word in words:
        assert word in err, err
    for noise in ("Traceback", "usage:", "[Errno", "not found: adir"):
        assert noise not in err, err


@pytest.mark.parametrize(
    "argv",
    [["check", "empty.yaml"], ["dump", "empty.yaml"], ["codegen", "empty.yaml"], ["gradcheck", "empty.yaml", "--all"]],
    ids=lambda argv: argv[0],
)
def test_an_empty_derivatives_yaml_gets_the_loaders_error_once_in_every_command(
    argv: list[str], workspace: Path, capsys
) -> None:
    """torchgen's load_derivatives fails on an empty file: every command says so once, as the error of the file
    (exit 1, as for any file the loader rejects), never a usage block, a traceback or 'nothing to check'."""
    code, out, err = run(argv, workspace, capsys)
    said = out + err
    assert code == 1, said
    assert said.count("holds no entries") == 1, said
    for noise in ("Traceback", "usage:", "nothing to check"):
        assert noise not in said, said
