"""``derivls codegen``: derivls/cli/codegen.py, run through its own argparse parser."""

from __future__ import annotations

import argparse
import io
import json
import subprocess
import sys

import pytest

from derivls.cli.codegen import add_codegen_arguments, run_codegen
from derivls.derivatives.loader import load_derivatives
from derivls.project.opener import locate


@pytest.fixture(scope="module")
def loader():
    """derivls's loader, memoised so the tests load the real files once (test_through_the_cli
    runs the command's default loader)."""
    cache = {}

    def load(derivatives, native, tags):
        key = (derivatives, native, tags)
        if key not in cache:
            cache[key] = load_derivatives(derivatives, native, tags)[0]
        return cache[key]

    return load


def run(argv, load):
    parser = argparse.ArgumentParser(prog="derivls codegen")
    add_codegen_arguments(parser)
    out, err = io.StringIO(), io.StringIO()
    code = run_codegen(parser.parse_args(argv), out, err=err, load=load)
    return code, out.getvalue(), err.getvalue()


def test_text_one_op(real_files, loader):
    code, out, err = run([str(real_files.derivatives), "--op", "TopkBackward0"], loader)
    assert (code, err) == (0, "")
    assert out.startswith(
        "// ===== TopkBackward0 =====\n#ifdef _WIN32\nstruct TopkBackward0 : public TraceableFunction {\n"
    )
    assert "\nvariable_list TopkBackward0::apply(variable_list&& grads) {\n" in out
    assert out.count("// ===== ") == 1


def test_json_two_ops_in_codegen_order(real_files, loader):
    code, out, err = run(
        [
            str(real_files.derivatives),
            "--native",
            str(real_files.native),
            "--op",
            "MulBackward0",
            "--op",
            "AbsBackward0",
            "--format",
            "json",
        ],
        loader,
    )
    assert (code, err) == (0, "")
    nodes = json.loads(out)["nodes"]
    assert [n["op"] for n in nodes] == ["AbsBackward0", "MulBackward0"]
    assert set(nodes[0]) == {"op", "declaration", "definition"}
    assert nodes[1]["declaration"].startswith("#ifdef _WIN32\nstruct MulBackward0 : public TraceableFunction {\n")
    assert nodes[1]["definition"].startswith("static variable_list MulBackward0_apply_functional(\n")


def test_all_nodes(real_files, loader):
    code, out, _ = run([str(real_files.derivatives), "--format", "json"], loader)
    assert code == 0
    assert len(json.loads(out)["nodes"]) == 649


def test_unknown_op_lists_close_matches(real_files, loader):
    code, out, err = run([str(real_files.derivatives), "--op", "Mul"], loader)
    assert code == 2 and out == ""
    assert "no autograd node or function named 'Mul'" in err
    assert "MulBackward0" in err and "MulBackward1" in err

    code, _, err = run([str(real_files.derivatives), "--op", "TopkBackwards0"], loader)
    assert code == 2
    assert "close matches: TopkBackward0" in err

    code, _, err = run([str(real_files.derivatives), "--op", "zzzzqqq"], loader)
    assert code == 2 and "no autograd node or function named 'zzzzqqq'" in err


def test_op_takes_function_names_as_check_and_gradcheck_do(real_files, loader):
    """`--op` means the same in every command: a node, a function with its overload, or without it."""
    for name, nodes in (("mul", ["MulBackward0", "MulBackward1"]), ("mul.Tensor", ["MulBackward0"])):
        code, out, err = run([str(real_files.derivatives), "--op", name, "--format", "json"], loader)
        assert (code, err) == (0, ""), name
        assert [n["op"] for n in json.loads(out)["nodes"]] == nodes, name


def test_missing_files(tmp_path, real_files, loader):
    code, _, err = run([str(tmp_path / "derivatives.yaml")], loader)
    assert code == 2 and "derivls codegen: error: derivatives.yaml not found: " in err

    lone = tmp_path / "derivatives.yaml"
    lone.write_text("")
    code, _, err = run([str(lone)], loader)
    assert code == 2 and "--native" in err

    code, _, err = run(
        [str(real_files.derivatives), "--native", str(real_files.native), "--tags", str(tmp_path / "tags.yaml")], loader
    )
    assert code == 2 and "tags.yaml" in err


def test_loader_error_is_reported(real_files):
    def broken(derivatives, native, tags):
        raise ValueError("derivatives.yaml:3: bad entry")

    code, out, err = run([str(real_files.derivatives)], broken)
    assert (code, out) == (1, "")
    assert "derivatives.yaml:3: bad entry" in err


def test_through_the_cli(real_files):
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "derivls",
            "codegen",
            str(real_files.derivatives),
            "--op",
            "MulBackward0",
            "--format",
            "json",
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    (node,) = json.loads(run.stdout)["nodes"]
    assert node["op"] == "MulBackward0"
    assert "  SavedVariable other_;\n" in node["declaration"]


def test_discovers_native_in_checkout_layout(tmp_path):
    (tmp_path / "tools" / "autograd").mkdir(parents=True)
    (tmp_path / "aten" / "src" / "ATen" / "native").mkdir(parents=True)
    derivatives = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    native = tmp_path / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    for p in (derivatives, native, native.with_name("tags.yaml")):
        p.write_text("")
    files = locate(derivatives)
    assert (files.native, files.tags) == (
        native.resolve(),
        native.resolve().with_name("tags.yaml"),
    )
