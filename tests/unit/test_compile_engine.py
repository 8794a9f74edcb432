"""The compile engine's process handling (derivls/compile/engine.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

from derivls.bounded import GB, Limits
from derivls.compile.engine import read_errors, start
from derivls.diagnostics import Span


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


def _one_unit_map(lines: int = 10):
    from derivls.compile.sourcemap import SourceMap
    from derivls.diagnostics import Span

    source = SourceMap()
    text = "int x;\n" * lines
    source.append(text)
    source.add_unit(0, len(text), "AcosBackward0", Span(4, 8, 4, 12), 4)
    return source


def test_compiler_text_about_a_file_outside_the_generated_code_and_the_headers_is_never_quoted(tmp_path: Path):
    # issue 34: an included file's tokens (a header that is a link to /etc/passwd) must not reach a diagnostic
    from derivls.compile.engine import map_errors

    include = tmp_path / "include"
    include.mkdir()
    secret = tmp_path / "secret"
    secret.write_text("root:x:0:0:root:/root:/bin/bash\n")
    (include / "evil.h").symlink_to(secret)
    (include / "fine.h").write_text("int f(int);\n")
    tu = str(tmp_path / "backward-1.cpp")
    stderr = (
        f"{tu}: In function 'void g()':\n"
        f"{tu}:3:1:   required from here\n"
        f"{include / 'evil.h'}:1:1: error: 'root' does not name a type\n"
        f"{include / 'fine.h'}:1:5: note: candidate: 'int f(int)'\n"
        f"{secret}:1:1: note: 'root:x:0:0' declared here\n"
        f"{tu}: In function 'void h()':\n"
        f"{tu}:5:1:   required from here\n"
        f"{include / 'fine.h'}:1:5: error: too few arguments to function 'int f(int)'\n"
    )
    found = [d.message for _, d in map_errors(stderr, tu, _one_unit_map(), [include])]
    assert len(found) == 2
    assert "root" not in found[0] and "evil.h:1" in found[0] and "not quoted" in found[0]
    assert "candidate: 'int f(int)'" in found[0]  # a note in torch's headers is quoted
    assert "too few arguments to function 'int f(int)'" in found[1]  # an error in them too


def test_a_failure_placed_outside_the_generated_file_quotes_nothing_of_another_file(tmp_path: Path):
    from derivls.compile.engine import Batch, _unmapped

    tu = str(tmp_path / "backward-1.cpp")
    units = (SimpleNamespace(entry_line=4, name_span=Span(4, 8, 4, 12)),)
    batch = Batch("backward", units, _one_unit_map())  # type: ignore[arg-type]
    _, own = _unmapped(f"{tu}:1: sorry, unimplemented: PCH allocation failure\n", batch, tu)
    assert own.message.endswith("sorry, unimplemented: PCH allocation failure")
    _, other = _unmapped("/etc/passwd:1: root:x:0:0:root:/root:/bin/bash\n", batch, tu)
    assert "root" not in other.message and "not quoted" in other.message
