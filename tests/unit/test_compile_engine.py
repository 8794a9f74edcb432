"""The compile engine's process handling (derivls/compile/engine.py)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

from derivls.base.bounded import GB, Limits
from derivls.base.diagnostics import Span
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


def _one_unit_map(lines: int = 10):
    from derivls.base.diagnostics import Span
    from derivls.compile.sourcemap import SourceMap

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
    found = [d for _, d in map_errors(stderr, tu, _one_unit_map(), [include])]
    assert len(found) == 2
    assert "root" not in found[0].message and "evil.h" not in found[0].message and "not quoted" in found[0].message
    # issue 54: a place in torch's headers is named by its path inside them and its line, never quoted
    assert "note: at fine.h:1 (torch's headers; not quoted)" in found[0].message
    assert "int f" not in found[0].message and all("int f" not in r.message for r in found[0].related)
    assert "at fine.h:1 in torch's headers" in found[1].message and "too few" not in found[1].message


def test_a_failure_placed_outside_the_generated_file_quotes_nothing_of_another_file(tmp_path: Path):
    from derivls.compile.engine import Batch, _unmapped

    tu = str(tmp_path / "backward-1.cpp")
    units = (SimpleNamespace(entry_line=4, name_span=Span(4, 8, 4, 12)),)
    batch = Batch("backward", units, _one_unit_map())  # type: ignore[arg-type]
    _, own = _unmapped(f"{tu}:1: sorry, unimplemented: PCH allocation failure\n", batch, tu)
    assert own.message.endswith("sorry, unimplemented: PCH allocation failure")
    _, other = _unmapped("/etc/passwd:1: root:x:0:0:root:/root:/bin/bash\n", batch, tu)
    assert "root" not in other.message and "not quoted" in other.message


def test_an_error_a_header_places_in_a_file_named_like_the_generated_one_is_not_quoted(tmp_path: Path):
    # issue 54: `#line 3 "backward-1.cpp"` in an included file made its text look like the generated file's
    from derivls.compile.engine import map_errors

    tu = str(tmp_path / "backward-1.cpp")
    stderr = f"{tu}:3:1:   required from here\nbackward-1.cpp:3:1: error: 'API_KEY_123' was not declared\n"
    (found,) = [d.message for _, d in map_errors(stderr, tu, _one_unit_map(), [])]
    assert "API_KEY_123" not in found and "not quoted" in found


def test_the_compilers_stderr_is_read_up_to_its_caps_in_lines_and_bytes(tmp_path: Path):
    from derivls.compile import engine

    with open(tmp_path / "many.err", "w+b") as errors:
        errors.write(b"x.cpp:1:1: error: e\n" * (engine.MAX_STDERR_LINES + 10))
        text = engine.read_errors(errors)
    assert text.count("\n") == engine.MAX_STDERR_LINES and text.endswith("error: e\n")
    with open(tmp_path / "long.err", "w+b") as errors:
        errors.write((b"y" * 1000 + b"\n") * (engine.MAX_STDERR_BYTES // 1000 + 10))
        text = engine.read_errors(errors)
    assert len(text) <= engine.MAX_STDERR_BYTES and text.endswith("y\n")


def test_800k_lines_of_errors_on_one_formula_map_to_at_most_the_cap_of_diagnostics_and_one_more(tmp_path: Path):
    # issue 54: a constexpr loop's compile wrote 785,268 lines of errors; check --compile spent 219 s and 1.1 GB
    # mapping them, compileOnSave published 785,252 diagnostics for one entry. Here through compile_units, with a
    # compiler that writes 800,000 errors on the formula's line, all different
    from derivls.compile import engine
    from derivls.compile.sourcemap import FormulaOrigin, SourceMap
    from derivls.compile.toolchain import Pch

    formula = "grad * self.sgn()"
    source = SourceMap()
    source.append('#include "derivls-autograd.h"\n' + "int x;\n" * 1000 + "auto grad_result = ")
    at = source.append(formula + ";\n" + "int y;\n" * 1000)
    source.add_formula(at, FormulaOrigin(formula, formula, formula, Span(7, 10, 7, 10 + len(formula))))
    source.add_unit(0, at + 200, "AcosBackward0", Span(4, 8, 4, 12), 4)
    unit = SimpleNamespace(entry_line=4, name_span=Span(4, 8, 4, 12), refused=None, has_backward=True, units=())
    cxx = tmp_path / "loud-g++"
    cxx.write_text(
        f"#!{sys.executable}\n"
        "import sys\n"
        "tu = sys.argv[-1]\n"
        "out = sys.stderr\n"
        "for i in range(800_000):\n"
        "    out.write(f'{tu}:1002:{20 + i % 15}: error: no match for call {i}\\n')\n"
        "sys.exit(1)\n"
    )
    cxx.chmod(0o755)
    toolchain = SimpleNamespace(cxx=str(cxx), flags=(), include_dirs=(), include_flags=lambda _pch: [])
    batch = engine.Batch("backward", (unit,), source)  # type: ignore[arg-type]
    original = engine.make_batches, engine.ensure_pch
    engine.make_batches = lambda units, templates, size=0: [batch]  # type: ignore[assignment]
    engine.ensure_pch = lambda *a, **k: Pch(tmp_path, False, 0.0, 0)  # type: ignore[assignment]
    try:
        templates = SimpleNamespace(pch_header=lambda: "")
        result = engine.compile_units([unit], toolchain, templates, nice=False)  # type: ignore[arg-type, list-item]
    finally:
        engine.make_batches, engine.ensure_pch = original
    found = result.by_entry[4]
    assert len(found) == engine.MAX_PER_ENTRY + 1 == len(result.diagnostics)
    assert found[-1].message.startswith("… and ") and found[-1].span == Span(4, 8, 4, 12)
    assert all(d.span.line == 7 for d in found[:-1])


LOUD_CXX = """#!{python}
import sys
args = sys.argv[1:]
if "--version" in args:
    print("g++ (fake) 12.2.0")
    sys.exit(0)
if "-o" in args:
    open(args[args.index("-o") + 1], "w").close()
    sys.exit(0)
tu = args[-1]
line = next(i for i, text in enumerate(open(tu), 1) if "struct TORCH_API AcosBackward0" in text)
out = sys.stderr
for i in range(800_000):
    out.write(f"{{tu}}:{{line}}:8: error: a different error {{i}}\\n")
sys.exit(1)
"""


def test_compile_on_saves_worker_sends_at_most_the_cap_of_diagnostics_for_an_entry(real_files, tmp_path: Path):
    # issue 54: untrusted compileOnSave published 785,252 diagnostics for one entry (the server's 10,000 cap does
    # not apply to the compiler's); the worker (what compileOnSave runs) sends each entry's, capped
    import io
    import json

    from derivls.compile import engine
    from derivls.compile.toolchain import REQUIRED_HEADERS
    from derivls.compile.worker import run

    cxx = tmp_path / "g++"
    cxx.write_text(LOUD_CXX.format(python=sys.executable))
    cxx.chmod(0o755)
    include = tmp_path / "include"
    for header in REQUIRED_HEADERS:
        (include / header).parent.mkdir(parents=True, exist_ok=True)
        (include / header).write_text("")
    text = real_files.derivatives.read_text(encoding="utf-8")
    acos = text.splitlines().index("- name: acos(Tensor self) -> Tensor")
    request = {
        "path": str(real_files.derivatives),
        "text": text,
        "native": str(real_files.native),
        "tags": str(real_files.tags),
        "lines": [acos],
        "cxx": str(cxx),
        "torch_include": str(include),
        "jobs": 1,
    }
    out = io.StringIO()
    assert run(request, out) == 0, out.getvalue()[-2000:]
    (entry,) = json.loads(out.getvalue().splitlines()[-1])["entries"]
    assert entry["line"] == acos
    assert len(entry["diagnostics"]) == engine.MAX_PER_ENTRY + 1
    assert entry["diagnostics"][-1]["message"].startswith("… and ")
