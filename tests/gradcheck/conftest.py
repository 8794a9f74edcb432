"""Gradcheck tests: a copy of the installed torch 2.13 wheel's files (laid out as site-packages:
torchgen/packaged/…, torch/version.py, so derivls finds the release), checked with `derivls gradcheck`
in a subprocess against the installed torch. The copy is not beside the torch headers: derivls finds
them through the chosen Python (the one running the tests)."""

from __future__ import annotations

import importlib.util
import json
import os
import shutil
import subprocess
import sys
import types
from dataclasses import dataclass, field
from pathlib import Path

import pytest

import derivls.gradcheck

TIMEOUT = 3600


@dataclass
class Run:
    code: int
    diagnostics: list[dict]
    summary: dict
    stderr: str
    suggestions: list[dict] = field(default_factory=list)  # the repairs offered (--format json's `suggestions`)


def make_wheel_copy(real_files, folder: Path) -> Path:
    """site-packages of a torch 2.13 wheel, copied; returns its derivatives.yaml."""
    packaged = folder / "torchgen" / "packaged"
    (packaged / "ATen" / "native").mkdir(parents=True)
    shutil.copytree(real_files.derivatives.parent / "templates", packaged / "autograd" / "templates")
    shutil.copyfile(real_files.derivatives, packaged / "autograd" / "derivatives.yaml")
    shutil.copyfile(real_files.native, packaged / "ATen" / "native" / "native_functions.yaml")
    shutil.copyfile(real_files.tags, packaged / "ATen" / "native" / "tags.yaml")
    (folder / "torch").mkdir()
    shutil.copyfile(real_files.packaged.parent.parent / "torch" / "version.py", folder / "torch" / "version.py")
    return packaged / "autograd" / "derivatives.yaml"


@pytest.fixture
def wheel_copy(real_files, tmp_path: Path) -> Path:
    return make_wheel_copy(real_files, tmp_path / "site-packages")


TESTED_ROOT = Path(derivls.__file__).resolve().parent.parent  # the folder holding the derivls under test


def subprocess_env() -> dict[str, str]:
    """The environment of a `python -m derivls` subprocess that runs the derivls under test (this worktree's,
    not an editable install of another checkout): PYTHONPATH is exactly the tested package's root."""
    env = {k: v for k, v in os.environ.items() if k != "PYTHONPATH"}
    env["PYTHONPATH"] = str(TESTED_ROOT)
    return env


def gradcheck(path: Path, *args: str, cwd: Path, env: dict[str, str] | None = None) -> Run:
    """`derivls gradcheck PATH ARGS --format json` in a subprocess (`env`: more environment); its diagnostics and
    summary."""
    summary = cwd / "summary.json"
    result = subprocess.run(
        [
            sys.executable,
            "-m",
            "derivls",
            "gradcheck",
            str(path),
            *args,
            "--format",
            "json",
            "--summary-json",
            str(summary),
        ],
        capture_output=True,
        text=True,
        timeout=TIMEOUT,
        cwd=cwd,
        env={**subprocess_env(), **(env or {})},
        check=False,
    )
    output = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
    diagnostics = output.get("diagnostics", [])
    data = json.loads(summary.read_text()) if summary.is_file() else {}
    assert output.get("summary") in (None, data)  # --format json carries the summary --summary-json writes
    return Run(result.returncode, diagnostics, data, result.stderr, output.get("suggestions", []))


def line_of(path: Path, text: str, after: str | None = None) -> int:
    """1-based line of the first line that is `text` (stripped), after the line starting with `after`."""
    lines = path.read_text().splitlines()
    start = next(i for i, line in enumerate(lines) if line.startswith(after)) if after else 0
    return next(i for i in range(start, len(lines)) if lines[i].strip() == text.strip()) + 1


def replace_in_entry(path: Path, entry: str, old: str, new: str) -> int:
    """Replace the formula line `old` (stripped) by `new` in the entry whose `- name:` starts with `entry`;
    the 1-based line it is on."""
    line = line_of(path, old, "- name: " + entry)
    lines = path.read_text().splitlines(keepends=True)
    indent = lines[line - 1][: len(lines[line - 1]) - len(lines[line - 1].lstrip())]
    lines[line - 1] = indent + new.strip() + "\n"
    path.write_text("".join(lines))
    return line


EXPECTATIONS = Path(__file__).resolve().parent / "baseline-2.13.json"


def baseline_ops() -> list[str]:
    """The entries the CI baseline checks (a documented subset; bench/bench_gradcheck.py runs --all)."""
    return list(json.loads(EXPECTATIONS.read_text())["ops"])


@pytest.fixture(scope="session")
def shipped_run(real_files, tmp_path_factory) -> Run:
    """`derivls gradcheck` of the baseline's entries on the unmodified 2.13 file (once per session)."""
    folder = tmp_path_factory.mktemp("shipped")
    path = make_wheel_copy(real_files, folder / "site-packages")
    # (--no-repair: pow.Tensor_Tensor fails for a bug of torch itself; the baseline is of the verdicts)
    return gradcheck(path, *[a for op in baseline_ops() for a in ("--op", op)], "--no-repair", cwd=folder)


@pytest.fixture(scope="module")
def child():
    """The gradcheck child (derivls/gradcheck/child/), loaded in-process as the child loads it: its __main__.py by
    path, whose `load` imports the folder as a package of its own (not as part of derivls); a fresh copy for each
    test module. Every module's names in one namespace (`child.find_samples`, `child.variants`...)."""
    folder = Path(derivls.gradcheck.__file__).parent / "child"
    spec = importlib.util.spec_from_file_location("derivls_gradcheck_child_entry", folder / "__main__.py")
    entry = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(entry)
    for name in [n for n in sys.modules if n == entry.PACKAGE or n.startswith(entry.PACKAGE + ".")]:
        del sys.modules[name]
    package = entry.load()
    names: dict = {}
    for path in sorted(folder.glob("*.py")):
        if path.stem.startswith("__"):
            continue
        module = importlib.import_module(f"{package.__name__}.{path.stem}")
        for name, value in vars(module).items():
            if not name.startswith("__"):
                assert names.setdefault(name, value) is value, f"two modules of the child define {name}"
    return types.SimpleNamespace(**names)


@pytest.fixture(scope="module")
def torch():
    import torch

    return torch


def unit_request(torch, aten: str, overload: str, *wrt: str) -> dict:
    """A unit as the engine sends it to the child (its schema's arguments; `wrt`: the differentiable ones)."""
    schema = getattr(getattr(torch.ops.aten, aten), overload)._schema
    return {
        "id": f"{aten}.{overload}",
        "aten": aten,
        "overload": overload,
        "args": [a.name for a in schema.arguments],
        "wrt": [(name, False) for name in wrt],
        "fw_inputs": list(wrt),
    }
