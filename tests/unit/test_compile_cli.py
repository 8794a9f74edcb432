"""`derivls check --compile` set-up errors: one clear line, exit status 2 (no compiler is run)."""

from __future__ import annotations

import subprocess
import sys

import pytest

from derivls.compile.toolchain import SetupError, find_compiler, find_include_dirs


def test_a_missing_compiler_is_one_line_and_exit_status_2(real_files, tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "derivls",
            "check",
            str(real_files.derivatives),
            "--compile",
            "--cxx",
            str(tmp_path / "no-cxx"),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "compiler not found" in lines[0] and "Traceback" not in result.stderr


def test_missing_headers_are_one_line_and_exit_status_2(real_files, tmp_path):
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "derivls",
            "check",
            str(real_files.derivatives),
            "--compile",
            "--torch-include",
            str(tmp_path),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 2
    lines = result.stderr.strip().splitlines()
    assert len(lines) == 1 and "FunctionsManual.h" in lines[0] and str(tmp_path) in lines[0]


def test_the_packaged_yaml_finds_the_headers_of_the_torch_beside_it(real_files):
    dirs = find_include_dirs(real_files.derivatives)
    assert dirs[0] == real_files.packaged.parent.parent / "torch" / "include"


def test_a_checkout_without_built_headers_says_what_is_missing(tmp_path):
    yaml = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    yaml.parent.mkdir(parents=True)
    yaml.write_text("", encoding="utf-8")
    with pytest.raises(SetupError) as e:
        find_include_dirs(yaml)
    assert "torch/csrc/autograd/generated/Functions.h" in str(e.value) and str(tmp_path / "torch" / "include") in str(
        e.value
    )


def test_an_explicit_compiler_that_does_not_exist_is_named(tmp_path):
    with pytest.raises(SetupError, match="no-cxx"):
        find_compiler(str(tmp_path / "no-cxx"))


def test_check_accepts_the_compile_options():
    from derivls.cli.commandline import build_parser

    args = build_parser().parse_args(["check", "--compile", "--cxx", "g++", "--torch-include", "/x", "--op", "mul"])
    assert args.compile and args.cxx == "g++" and args.torch_include == "/x" and args.op == ["mul"]


@pytest.mark.parametrize(
    ("version", "own", "foreign"),
    [
        ("g++ (Debian 12.2.0-14) 12.2.0", "-fno-diagnostics-show-caret", "-fno-caret-diagnostics"),
        ("Debian clang version 14.0.6", "-fno-caret-diagnostics", "-fno-diagnostics-show-caret"),
    ],
)
def test_each_compiler_gets_its_own_diagnostic_flags_and_clang_its_pch_by_flag(tmp_path, version, own, foreign):
    from derivls.compile.toolchain import Toolchain

    cxx = tmp_path / "cxx"
    cxx.write_text(f"#!/bin/sh\necho '{version}'\n")
    cxx.chmod(0o755)
    include = tmp_path / "include"
    from derivls.compile.toolchain import REQUIRED_HEADERS

    for header in REQUIRED_HEADERS:
        (include / header).parent.mkdir(parents=True, exist_ok=True)
        (include / header).write_text("")
    toolchain = Toolchain.find(None, str(cxx), str(include))
    assert own in toolchain.flags and foreign not in toolchain.flags
    flags = toolchain.include_flags(tmp_path / "pch")
    assert ("-include-pch" in flags) == ("clang" in version)
