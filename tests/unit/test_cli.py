"""derivls check / dump from the command line: formats, exit statuses, no tracebacks."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.conftest import FIXTURES

NATIVE = """- func: abs(Tensor self) -> Tensor
  variants: function, method
- func: mul.Tensor(Tensor self, Tensor other) -> Tensor
  variants: function, method
"""
GOOD = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
BAD = GOOD + "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * other.sizes()\n  othr: grad\n"


def derivls(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "derivls", *args], capture_output=True, text=True, cwd=cwd, check=False
    )


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A pytorch-checkout layout, so native_functions.yaml is found by walking up."""
    (tmp_path / "tools" / "autograd").mkdir(parents=True)
    native = tmp_path / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (native / "native_functions.yaml").write_text(NATIVE)
    (tmp_path / "tools" / "autograd" / "derivatives.yaml").write_text(BAD)
    return tmp_path


def test_text_format_reports_every_error_with_position_and_code(checkout):
    run = derivls("check", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert run.returncode == 1
    note, *lines = run.stdout.splitlines()  # the toy checkout has no FunctionsManual.h: said once, first
    assert note.startswith("tools/autograd/derivatives.yaml:1:1: information: FunctionsManual.h and ")
    assert lines[0] == (
        "tools/autograd/derivatives.yaml:4:21: error: .sizes() is not supported in derivative formulas: use the "
        "SymInt version .sym_sizes(), which returns a c10::SymIntArrayRef. (in the formula for 'self') "
        "[sizes-not-supported]"
    )
    assert lines[1].startswith(
        "tools/autograd/derivatives.yaml:5:3: error: 'othr' is neither an argument nor an output"
    )
    assert lines[-1].startswith("checked tools/autograd/derivatives.yaml: 2 errors, 0 warnings; warning: ")


def test_check_without_path_finds_the_checkout_it_stands_in(checkout):
    run = derivls("check", cwd=checkout / "aten")
    assert run.returncode == 1
    assert "[unknown-name]" in run.stdout


def test_json_format(checkout):
    run = derivls("check", "tools/autograd/derivatives.yaml", "--format", "json", cwd=checkout)
    note, *rows = json.loads(run.stdout)
    assert (note["severity"], note["code"]) == ("information", "formula-sources-missing")
    assert rows[1] == {
        "path": "tools/autograd/derivatives.yaml",
        "line": 5,
        "column": 3,
        "end_line": 5,
        "end_column": 7,
        "severity": "error",
        "code": "unknown-name",
        "message": rows[1]["message"],
    }
    assert run.returncode == 1


def test_github_format(checkout):
    run = derivls("check", "tools/autograd/derivatives.yaml", "--format", "github", cwd=checkout)
    assert run.stdout.splitlines()[0].startswith(
        "::notice file=tools/autograd/derivatives.yaml,line=1,col=1,endLine=1,endColumn=2,title=formula-sources-missing::"
    )
    assert run.stdout.splitlines()[1].startswith(
        "::error file=tools/autograd/derivatives.yaml,line=4,col=21,endLine=4,endColumn=29,title=sizes-not-supported::"
    )


def test_clean_file_exits_zero(checkout):
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    run = derivls("check", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert (run.returncode, run.stderr) == (0, "")


# 2,000 entries for abs, each naming an input abs does not have: 2,000 errors (and 1,999 duplicate warnings)
# Python's own buffering of standard output (which PYTHONUNBUFFERED, set in some sandboxes, turns off)
BUFFERED = {k: v for k, v in os.environ.items() if k != "PYTHONUNBUFFERED"}
MANY_ERRORS = "".join(f"- name: abs(Tensor self) -> Tensor\n  othr{i}: grad\n" for i in range(2000))


def answer_in_a_file(command: str, checkout: Path, answer: Path) -> tuple[int, str]:
    """`derivls COMMAND tools/autograd/derivatives.yaml` with its standard output a file (block-buffered:
    nothing is written before a flush): its exit status and what the file holds."""
    with answer.open("w") as out:
        code = subprocess.run(
            [sys.executable, "-m", "derivls", command, "tools/autograd/derivatives.yaml"],
            stdout=out,
            cwd=checkout,
            env=BUFFERED,
        ).returncode
    return code, answer.read_text()


def test_the_executable_ends_itself_only_after_its_whole_answer_is_written(checkout, tmp_path):
    # `derivls` ends its process with os._exit once the answer is flushed (cli.exit_now): an answer of
    # many block-buffered writes to a file must arrive whole, the summary line last
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(MANY_ERRORS)  # ~0.8 MB of answer
    code, text = answer_in_a_file("check", checkout, tmp_path / "answer.txt")
    lines = text.splitlines()
    assert code == 1
    assert sum(line.endswith("[unknown-name]") for line in lines) == 2000
    assert lines[-1].startswith("checked tools/autograd/derivatives.yaml: 2000 errors, 1999 warnings; ")


def test_the_executable_ends_itself_only_after_a_dump_is_written_whole(checkout, tmp_path):
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    code, text = answer_in_a_file("dump", checkout, tmp_path / "dump.json")
    assert code == 0
    assert json.loads(text)


def test_a_reader_that_stops_early_costs_no_traceback(checkout):
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(MANY_ERRORS)
    child = subprocess.Popen(
        [sys.executable, "-m", "derivls", "check", "tools/autograd/derivatives.yaml"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        cwd=checkout,
    )
    assert child.stdout is not None and child.stderr is not None
    child.stdout.readline()
    child.stdout.close()  # like `derivls check | head -1`
    errors = child.stderr.read().decode()
    assert child.wait(timeout=60) in (0, 1)
    assert "Traceback" not in errors and "Exception ignored" not in errors


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["check", "nope.yaml"], "derivatives.yaml not found: nope.yaml"),
        (["check", "tools/autograd/derivatives.yaml", "--native", "missing.yaml"], "native_functions.yaml not found"),
        (["check", "tools"], "is a directory"),
        (["dump", "nope.yaml"], "not found"),
    ],
)
def test_bad_usage_is_one_line_and_exit_2(checkout, args, message):
    run = derivls(*args, cwd=checkout)
    assert run.returncode == 2
    assert message in run.stderr
    assert "Traceback" not in run.stderr


def test_missing_cpp_sources_are_one_note_and_a_warning_on_the_summary_line(checkout):
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    run = derivls("check", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert run.returncode == 0
    notes = [line for line in run.stdout.splitlines() if "[formula-sources-missing]" in line]
    assert len(notes) == 1
    assert "FunctionsManual.h and TensorBody.h/TensorBase.h not found" in notes[0]
    assert str(checkout / "torch" / "csrc" / "autograd" / "FunctionsManual.h") in notes[0]
    assert "are not checked" in notes[0]
    assert run.stdout.splitlines()[-1] == (
        "checked tools/autograd/derivatives.yaml: 0 errors, 0 warnings; warning: formula names were not checked"
        " (FunctionsManual.h or the Tensor headers not found: pass --torch-include DIR of the matching torch;"
        " derivls explain formula-sources-missing)"
    )  # the note counts as neither, but the summary a terminal ends with says the name checks did not run


def test_a_checkout_with_its_cpp_sources_gets_no_note(checkout):
    autograd = checkout / "torch" / "csrc" / "autograd"
    autograd.mkdir(parents=True)
    (autograd / "FunctionsManual.h").write_text(
        "at::Tensor handle_r_to_c(ScalarType self_st, Tensor gradient_result);\n"
    )
    (checkout / "aten" / "src" / "ATen" / "templates").mkdir(parents=True)
    (checkout / "aten" / "src" / "ATen" / "templates" / "TensorBody.h").write_text("Tensor sgn() const;\n")
    (checkout / "aten" / "src" / "ATen" / "core").mkdir(parents=True)
    (checkout / "aten" / "src" / "ATen" / "core" / "TensorBase.h").write_text("int64_t dim() const;\n")
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    run = derivls("check", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert (run.returncode, run.stdout.count("formula-sources-missing")) == (0, 0)


def test_missing_native_file_is_a_warning_naming_the_paths_tried(tmp_path):
    lone = tmp_path / "derivatives.yaml"
    lone.write_text(GOOD)
    run = derivls("check", str(lone))
    assert run.returncode == 0
    assert "[native-not-found]" in run.stdout
    assert "aten/src/ATen/native/native_functions.yaml" in run.stdout
    assert "--native" in run.stdout


def test_unreadable_native_file_is_an_error_not_a_crash(checkout):
    (checkout / "aten" / "src" / "ATen" / "native" / "native_functions.yaml").write_text("- func: [\n")
    run = derivls("check", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert run.returncode == 1
    assert "[native-unreadable]" in run.stdout
    assert "Traceback" not in run.stderr


def test_dump_of_a_small_file(checkout):
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    run = derivls("dump", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert run.returncode == 0, run.stderr
    (info,) = json.loads(run.stdout)["infos"]
    assert (info["op"], info["line"], info["all_saved_inputs"]) == (
        "AbsBackward0",
        1,
        [{"name": "self", "type": "at::Tensor", "expr": "self"}],
    )


def test_dump_refuses_a_file_with_errors(checkout):
    run = derivls("dump", "tools/autograd/derivatives.yaml", cwd=checkout)
    assert run.returncode == 1
    assert "[sizes-not-supported]" in run.stderr


def test_version():
    run = derivls("--version")
    assert run.returncode == 0 and run.stdout.startswith("derivls ")


def test_github_format_paths_are_relative_to_the_current_directory(checkout):
    absolute = checkout / "tools" / "autograd" / "derivatives.yaml"
    run = derivls("check", str(absolute), "--format", "github", cwd=checkout)
    assert run.stdout.splitlines()[1].startswith("::error file=tools/autograd/derivatives.yaml,line=4,")
    inside = derivls("check", str(absolute), "--format", "github", cwd=checkout / "tools")
    assert inside.stdout.splitlines()[1].startswith("::error file=autograd/derivatives.yaml,line=4,")


def test_github_format_keeps_paths_outside_the_current_directory(checkout):
    elsewhere = checkout / "aten"
    run = derivls("check", "../tools/autograd/derivatives.yaml", "--format", "github", cwd=elsewhere)
    assert run.stdout.splitlines()[1].startswith("::error file=../tools/autograd/derivatives.yaml,line=4,")
    absolute = checkout / "tools" / "autograd" / "derivatives.yaml"
    run = derivls("check", str(absolute), "--format", "github", cwd=elsewhere)
    assert run.stdout.splitlines()[1].startswith(f"::error file={absolute},line=4,")


def test_annotation_path_unit(tmp_path):
    from derivls.cli.report import annotation_path

    assert annotation_path(tmp_path / "a" / "derivatives.yaml", cwd=tmp_path) == "a/derivatives.yaml"
    assert annotation_path(Path("a/../b/derivatives.yaml"), cwd=Path.cwd()) == "b/derivatives.yaml"
    assert annotation_path(tmp_path / "x.yaml", cwd=tmp_path / "sub") == str(tmp_path / "x.yaml")


# Modules `derivls check` has no use for, each ~1-6 ms of its start-up to import (the server's are
# imported by `derivls serve` only): a new import of one of them on check's path is caught here.
NOT_IMPORTED_BY_CHECK = (
    "asyncio",
    "hashlib",
    "_hashlib",
    "logging",
    "lsprotocol",
    "pygls",
    "signal",
    "threading",
    "typing",
)


@pytest.mark.parametrize("fork", ["", "1"])
def test_check_imports_none_of_the_modules_it_does_not_need(checkout, tmp_path, fork):
    listing = tmp_path / "modules.txt"
    code = (
        "import sys\nfrom derivls.cli import main\ncode = main(['check', sys.argv[1]])\n"
        "open(sys.argv[2], 'w').write('\\n'.join(sorted(sys.modules)))\nsys.exit(code)\n"
    )
    env = {**os.environ, "DERIVLS_CACHE_DIR": str(tmp_path / "cache"), "DERIVLS_NO_FORK": fork}
    env.pop("DERIVLS_NO_CACHE", None)  # the cache's paths (read, then written) are part of check's
    for _ in range(2):  # an empty cache (written inline without fork), then the cached result
        run = subprocess.run(
            [sys.executable, "-c", code, "tools/autograd/derivatives.yaml", str(listing)],
            cwd=checkout,
            env=env,
            capture_output=True,
            text=True,
            check=False,
        )
        assert run.returncode == 1, run.stderr
        imported = set(listing.read_text().split())
        assert "derivls.base.diskcache" in imported
        assert imported.isdisjoint(NOT_IMPORTED_BY_CHECK), sorted(imported & set(NOT_IMPORTED_BY_CHECK))


def test_gradcheck_without_native_functions_says_so_and_exits_2_before_looking_for_torch(tmp_path):
    lone = tmp_path / "derivatives.yaml"
    lone.write_text(GOOD)
    run = derivls("gradcheck", str(lone), "--op", "abs", "--python", str(tmp_path / "no-python"))
    assert run.returncode == 2
    assert run.stderr.startswith("derivls gradcheck: error: native_functions.yaml not found"), run.stderr
    assert "--native FILE" in run.stderr
    assert "no autograd node" not in run.stderr and "has no torch" not in run.stderr
    assert "Traceback" not in run.stderr


def test_gradcheck_with_an_unreadable_native_file_says_so_and_exits_2(checkout):
    (checkout / "aten" / "src" / "ATen" / "native" / "native_functions.yaml").write_text("- func: [\n")
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(GOOD)
    run = derivls("gradcheck", "tools/autograd/derivatives.yaml", "--op", "abs", cwd=checkout)
    assert run.returncode == 2
    assert "derivls gradcheck: error: Cannot use" in run.stderr and "native_functions.yaml" in run.stderr, run.stderr
    assert "Traceback" not in run.stderr


def copied_packaged_tree(tmp_path: Path) -> Path:
    """torchgen/packaged copied without the torch/ folder a wheel has beside it, `abs` misspelling `self`."""
    packaged = tmp_path / "copy" / "torchgen" / "packaged"
    shutil.copytree(FIXTURES / "lsp" / "packaged" / "torchgen" / "packaged", packaged)
    path = packaged / "autograd" / "derivatives.yaml"
    path.write_text(path.read_text().replace("grad * self.sgn()", "grad * slef.sgn()"))
    return path


def test_a_packaged_tree_without_torch_headers_warns_that_names_went_unchecked(tmp_path):
    run = derivls("check", "--no-cache", str(copied_packaged_tree(tmp_path)))
    assert run.returncode == 0
    assert "slef" not in run.stdout
    assert "warning: formula names were not checked" in run.stdout.splitlines()[-1]


def test_torch_include_without_compile_gives_the_name_checks_their_headers(tmp_path):
    include = FIXTURES / "lsp" / "packaged" / "torch" / "include"
    run = derivls("check", "--no-cache", str(copied_packaged_tree(tmp_path)), "--torch-include", str(include))
    assert run.returncode == 1
    assert "'slef' is not declared" in run.stdout and "[formula-unknown-name]" in run.stdout
    assert "not checked" not in run.stdout.splitlines()[-1]


def test_torch_include_must_be_a_folder(tmp_path):
    run = derivls("check", str(copied_packaged_tree(tmp_path)), "--torch-include", str(tmp_path / "none"))
    assert (run.returncode, run.stderr) == (
        2,
        f"derivls check: error: --torch-include {tmp_path / 'none'} is not a folder.\n",
    )


def test_a_cached_check_without_torch_include_is_not_the_answer_with_it(tmp_path):
    from derivls.base.writebehind import wait_for_writer

    path = copied_packaged_tree(tmp_path)
    include = FIXTURES / "lsp" / "packaged" / "torch" / "include"
    assert derivls("check", str(path)).returncode == 0  # stored in the test session's cache
    wait_for_writer(Path(os.environ["DERIVLS_CACHE_DIR"]))
    assert derivls("check", str(path)).stdout.count("slef") == 0
    assert "'slef' is not declared" in derivls("check", str(path), "--torch-include", str(include)).stdout


def test_check_op_keeps_the_diagnostics_of_the_entries_it_names(checkout):
    """`check --op NAME` without --compile shows the named entries' diagnostics (a node, a function with its
    overload or without, as codegen and gradcheck take it; an entry whose schema is not found by its name)."""
    text = BAD + "- name: nothere(Tensor self) -> Tensor\n  self: grad\n"
    (checkout / "tools" / "autograd" / "derivatives.yaml").write_text(text)

    def codes(*op: str) -> list[tuple[int, str]]:
        run = derivls("check", "--format", "json", *op, cwd=checkout)
        assert run.returncode == 1, run.stderr
        return [(d["line"], d["code"]) for d in json.loads(run.stdout)]

    every = codes()
    setup = [(1, "formula-sources-missing")]  # about the set-up, not an entry: kept, as with --since
    mul = [(4, "sizes-not-supported"), (5, "unknown-name")]
    assert every == setup + mul + [(6, "schema-not-found")]
    for name in ("MulBackward0", "mul", "mul.Tensor"):
        assert codes("--op", name) == setup + mul, name
    assert codes("--op", "nothere") == [*setup, (6, "schema-not-found")]
    assert codes("--op", "abs", "--op", "nothere") == [*setup, (6, "schema-not-found")]


def test_check_op_over_several_files_needs_the_name_in_one_of_them(checkout, tmp_path):
    other = checkout / "tools" / "autograd" / "other" / "derivatives.yaml"
    other.parent.mkdir()
    other.write_text(GOOD)
    both = ["check", "tools/autograd/derivatives.yaml", "tools/autograd/other/derivatives.yaml", "--format", "json"]
    run = derivls(*both, "--op", "mul", cwd=checkout)
    assert run.returncode == 1 and {d["code"] for d in json.loads(run.stdout)} >= {"unknown-name"}, run.stderr
    run = derivls(*both, "--op", "acos", cwd=checkout)
    assert run.returncode == 2 and run.stdout == ""
    assert run.stderr == "derivls check: error: none of the files has an autograd node or function named acos.\n"
