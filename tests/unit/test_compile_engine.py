"""The compile engine's process handling (derivls/compile/engine.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path

from derivls.bounded import GB, Limits
from derivls.compile.engine import read_errors, start


def test_a_compiler_reporting_more_than_a_pipe_holds_finishes_and_every_byte_is_read(tmp_path: Path):
    # 1 MB of errors: with stderr on a pipe read only once the process has finished, the compiler would
    # block on its 65th KiB forever (found by the mutation campaign: a batch of overload errors)
    line = "x.cpp:1:1: error: ‘f’ was not declared in this scope\n"
    report = line * 20_000
    command = [sys.executable, "-c", f"import sys; sys.stderr.write({line!r} * 20_000); sys.exit(1)"]
    process, errors = start(command, tmp_path / "batch.err", Limits(60, 4 * GB))
    deadline = time.monotonic() + 60
    while process.popen.poll() is None and time.monotonic() < deadline:
        time.sleep(0.05)
    assert process.popen.returncode == 1
    assert read_errors(errors) == report
    assert errors.closed
