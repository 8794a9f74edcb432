"""Issue 54's repros with the real g++ against the torch wheel's headers: what a workspace brings (a formula that
hides a `_Pragma` between raw strings, a template whose header reads a secret) reaches no compiler, and nothing of
it is in any output: `check --compile` (text and `--format github`) and compileOnSave's worker.

Slow (a C++ compiler): `python -m pytest -m compile`."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path

import pytest

from tests.compile.test_hostile_formulas import ACOS, _args, _derivls

pytestmark = pytest.mark.compile

MARK = "derivls54marker"
# issue 54: two raw strings the old tokenizer read as one string around the `_Pragma`, which g++ ran
HIDDEN = f'  self: grad * R"x(")x" _Pragma("GCC error \\"{MARK}\\"") R"x(")x"\n'


def _workspace(real_files, tmp_path: Path, formula_yaml: str = ACOS, head: str = "") -> Path:
    folder = tmp_path / "autograd"
    shutil.copytree(real_files.derivatives.parent / "templates", folder / "templates")
    functions = folder / "templates" / "Functions.cpp"
    functions.write_text(head + functions.read_text(encoding="utf-8"), encoding="utf-8")
    text = real_files.derivatives.read_text(encoding="utf-8")
    path = folder / "derivatives.yaml"
    path.write_text(text.replace(ACOS, formula_yaml, 1), encoding="utf-8")
    return path


@pytest.mark.parametrize("form", ["text", "github"])
def test_a_pragma_hidden_between_raw_strings_is_reported_and_never_compiled(real_files, tmp_path, form):
    path = _workspace(real_files, tmp_path, HIDDEN)
    code, out, _ = _derivls([*_args(path, real_files), "--format", form])
    assert code == 1, out[-3000:]
    assert "formula-context" in out and "_Pragma" in out
    assert MARK not in out.replace(f'\\"{MARK}\\"', "")  # (the formula itself may be shown; never g++'s error)
    assert "compile-error" not in out


def _worker(real_files, path: Path, line: str) -> tuple[int, str]:
    """compileOnSave's worker on `path`'s entry whose text holds `line`: its exit status and what it wrote."""
    from derivls.compile.worker import run

    text = path.read_text(encoding="utf-8")
    lines = text.splitlines()
    entry = max(i for i in range(lines.index(line) + 1) if lines[i].startswith("- name:"))
    request = {
        "path": str(path),
        "text": text,
        "native": str(real_files.native),
        "tags": str(real_files.tags),
        "lines": [entry],
        "torch_include": str(real_files.packaged.parent.parent / "torch" / "include"),
    }
    out = io.StringIO()
    return run(request, out), out.getvalue()


def _reads_a_secret(real_files, tmp_path: Path) -> Path:
    """A workspace whose template includes a header (outside torch's folder) that includes secret.env."""
    secret = tmp_path / "secret.env"
    secret.write_text(f"API_KEY={MARK}\n")
    evil = tmp_path / "evil.h"
    evil.write_text(f'#include "{secret}"\n')
    return _workspace(real_files, tmp_path, head=f'#include "{evil}"\n')


def test_compile_on_saves_worker_never_compiles_a_hidden_pragma(real_files, tmp_path):
    code, out = _worker(real_files, _workspace(real_files, tmp_path, HIDDEN), HIDDEN.rstrip("\n"))
    assert code == 0, out[-2000:]
    result = json.loads(out.splitlines()[-1])
    diagnostics = [d for e in result["entries"] for d in e["diagnostics"]]  # (an entry's key is its own text)
    assert MARK not in json.dumps(diagnostics) and not any("GCC error" in d["message"] for d in diagnostics)


def test_a_template_header_that_reads_a_secret_is_refused_and_quotes_none_of_it(real_files, tmp_path):
    # issue 54: the template's #include of a header that includes secret.env made the PCH build fail, quoting it
    path = _reads_a_secret(real_files, tmp_path)
    for form in ("text", "github"):
        code, out, _ = _derivls([*_args(path, real_files), "--format", form])
        assert code == 2, out[-3000:]
        assert "derivls check: error: derivls will not compile the precompiled header" in out
        assert MARK not in out and "API_KEY" not in out


def test_compile_on_saves_worker_says_a_template_header_reads_a_secret_without_quoting_it(real_files, tmp_path):
    # what the worker sends as {"error": ...} is the server's showMessage
    code, out = _worker(real_files, _reads_a_secret(real_files, tmp_path), ACOS.rstrip("\n"))
    assert code == 2
    assert json.loads(out.splitlines()[-1])["error"].startswith("derivls will not compile the precompiled header")
    assert MARK not in out and "API_KEY" not in out
