"""Issue 54's repros with the real g++ against the torch wheel's headers: what a workspace brings (a formula that
hides a `_Pragma` between raw strings, a template whose header reads a secret) reaches no compiler, and nothing of
it is in any output: `check --compile` (text and `--format github`) and compileOnSave's worker.

Slow (a C++ compiler): `python -m pytest -m compile`."""

from __future__ import annotations

import io
import json
import shutil
from pathlib import Path
from typing import Any

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


def test_compile_on_saves_worker_never_compiles_a_hidden_pragma(real_files, tmp_path):
    from derivls.compile.worker import run

    path = _workspace(real_files, tmp_path, HIDDEN)
    out = io.StringIO()
    include = real_files.packaged.parent.parent / "torch" / "include"
    request: dict[str, Any] = {
        "path": str(path),
        "text": path.read_text(encoding="utf-8"),
        "native": str(real_files.native),
        "tags": str(real_files.tags),
        "torch_include": str(include),
    }
    request["lines"] = [request["text"].splitlines().index(HIDDEN.rstrip("\n")) - 1]  # (acos's `- name:`)
    assert run(request, out) == 0, out.getvalue()[-2000:]
    result = json.loads(out.getvalue().splitlines()[-1])
    diagnostics = [d for e in result["entries"] for d in e["diagnostics"]]  # (an entry's key is its own text)
    assert MARK not in json.dumps(diagnostics) and not any("GCC error" in d["message"] for d in diagnostics)


def test_a_template_header_that_reads_a_secret_is_refused_and_quotes_none_of_it(real_files, tmp_path):
    # issue 54: the template's #include of a header that includes secret.env made the PCH build fail, quoting it
    secret = tmp_path / "secret.env"
    secret.write_text(f"API_KEY={MARK}\n")
    evil = tmp_path / "evil.h"
    evil.write_text(f'#include "{secret}"\n')
    path = _workspace(real_files, tmp_path, head=f'#include "{evil}"\n')
    for form in ("text", "github"):
        code, out, _ = _derivls([*_args(path, real_files), "--format", form])
        assert code == 2, out[-3000:]
        assert "derivls check: error: derivls will not compile the precompiled header" in out
        assert MARK not in out and "API_KEY" not in out


def test_compile_on_saves_worker_says_a_template_header_reads_a_secret_without_quoting_it(real_files, tmp_path):
    # what the worker sends as {"error": ...} is the server's showMessage
    from derivls.compile.worker import run

    secret = tmp_path / "secret.env"
    secret.write_text(f"API_KEY={MARK}\n")
    evil = tmp_path / "evil.h"
    evil.write_text(f'#include "{secret}"\n')
    path = _workspace(real_files, tmp_path, head=f'#include "{evil}"\n')
    text = path.read_text(encoding="utf-8")
    request = {
        "path": str(path),
        "text": text,
        "native": str(real_files.native),
        "tags": str(real_files.tags),
        "lines": [text.splitlines().index("- name: acos(Tensor self) -> Tensor")],
        "torch_include": str(real_files.packaged.parent.parent / "torch" / "include"),
    }
    out = io.StringIO()
    assert run(request, out) == 2
    error = json.loads(out.getvalue().splitlines()[-1])["error"]
    assert error.startswith("derivls will not compile the precompiled header")
    assert MARK not in out.getvalue() and "API_KEY" not in out.getvalue()
