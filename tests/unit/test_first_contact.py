"""What someone trying `derivls` for the first time sees: on a terminal, one line saying what it is;
with nothing on stdin, a quiet exit; `derivls check` with nothing to check, every place it looked and
how to get an input."""

from __future__ import annotations

import os
import select
import subprocess
import sys
import time
from pathlib import Path

import pytest

from derivls.base.discovery import PACKAGED_DERIVATIVES
from derivls.cli import commandline as cli

TIMEOUT = 60


def serve(stdin: object, cwd: Path) -> subprocess.CompletedProcess[bytes]:
    return subprocess.run(
        [sys.executable, "-m", "derivls"], stdin=stdin, capture_output=True, cwd=cwd, timeout=TIMEOUT, check=False
    )


def test_stdin_at_end_of_file_exits_zero_quietly(tmp_path: Path):
    run = serve(subprocess.DEVNULL, tmp_path)  # /dev/null: a character device the event loop cannot watch
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


def test_an_empty_file_on_stdin_exits_zero_quietly(tmp_path: Path):
    empty = tmp_path / "empty"
    empty.write_bytes(b"")
    with open(empty, "rb") as stdin:
        run = serve(stdin, tmp_path)
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


def test_a_closed_pipe_on_stdin_exits_zero_quietly(tmp_path: Path):
    run = subprocess.run(
        [sys.executable, "-m", "derivls"], input=b"", capture_output=True, cwd=tmp_path, timeout=TIMEOUT, check=False
    )
    assert (run.returncode, run.stdout, run.stderr) == (0, b"", b"")


@pytest.mark.skipif(sys.platform == "win32", reason="a pseudo-terminal is POSIX")
def test_on_a_terminal_it_says_it_speaks_lsp_and_names_derivls_check_then_serves(tmp_path: Path):
    import pty

    master, slave = pty.openpty()
    proc = subprocess.Popen(
        [sys.executable, "-m", "derivls"], stdin=slave, stdout=subprocess.PIPE, stderr=subprocess.PIPE, cwd=tmp_path
    )
    os.close(slave)
    try:
        assert proc.stderr is not None
        ready, _, _ = select.select([proc.stderr], [], [], TIMEOUT)
        assert ready, "nothing on stderr"
        line = proc.stderr.readline().decode()
        assert line == cli.TERMINAL_HINT
        assert "speaks LSP" in line and "`derivls check`" in line
        time.sleep(0.5)
        assert proc.poll() is None, "it serves: it waits for the editor's messages"
    finally:
        os.close(master)  # the terminal goes away: the server's stdin ends
        try:
            proc.wait(timeout=TIMEOUT)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, "the end of the terminal ends the server quietly"
    assert proc.stderr is not None and proc.stderr.read() == b"", "one line only"


def test_check_with_nothing_found_names_every_place_and_both_ways_to_get_an_input(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
):
    here = tmp_path / "a" / "b"
    here.mkdir(parents=True)
    monkeypatch.chdir(here)
    # A Python without torch: no sys.path folder holds torchgen/packaged/autograd/derivatives.yaml.
    monkeypatch.setattr(sys, "path", [p for p in sys.path if not (Path(p or ".") / PACKAGED_DERIVATIVES).is_file()])
    assert cli.main(["check"]) == 2
    err = capsys.readouterr().err
    lines = err.splitlines()
    assert lines[0] == "derivls check: error: no derivatives.yaml given and none found. Looked at:"
    looked = [line.strip() for line in lines[1:] if line.startswith("  ")]
    expected = [str(folder / "tools" / "autograd" / "derivatives.yaml") for folder in (here, *here.parents)]
    assert looked[: len(expected)] == expected, "the current folder first, then every parent"
    assert looked[len(expected)].startswith(f"{PACKAGED_DERIVATIVES} in every folder of {sys.executable}'s sys.path")
    assert "inside a PyTorch checkout" in lines[-1]
    assert "install torch" in lines[-1] and "the wheel carries" in lines[-1]


def test_check_finds_the_installed_torchs_file_when_no_checkout_is_around(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, real_files
):
    """The second way the message names does give an input (the test environment has torch)."""
    from derivls.base.discovery import find_default_derivatives

    found, tried = find_default_derivatives(tmp_path)
    assert found is not None and found.samefile(real_files.derivatives)
    assert tried[0] == tmp_path.resolve() / "tools" / "autograd" / "derivatives.yaml"
