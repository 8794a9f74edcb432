"""The `legacy` profile against the January 2021 loader's own output.

tests/fixtures/legacy-2021/expected_dump.json is what PyTorch's 2021
tools/autograd/load_derivatives.py computed from the derivatives.yaml and native_functions.yaml
beside it (503 DifferentiabilityInfos, in the `derivls dump` shape with only the 2021 fields).
"""

from __future__ import annotations

import io
import json
from contextlib import redirect_stdout
from pathlib import Path
from typing import Any

import pytest

from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import Severity
from derivls.cli import main
from derivls.derivatives.dump import dump
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.derivatives.profiles import LEGACY, TORCHGEN, choose


@pytest.fixture(scope="module")
def expected(legacy_dir: Path) -> list[dict[str, Any]]:
    return json.loads((legacy_dir / "expected_dump.json").read_text(encoding="utf-8"))["infos"]


@pytest.fixture(scope="module")
def index(legacy_dir: Path) -> NativeIndex:
    return NativeIndex.load(legacy_dir / "native_functions.yaml", legacy=True)


@pytest.fixture(scope="module")
def analysis(legacy_dir: Path, index: NativeIndex) -> DocumentAnalysis:
    text = (legacy_dir / "derivatives.yaml").read_text(encoding="utf-8")
    return DocumentAnalyzer(index, str(legacy_dir / "native_functions.yaml"), "legacy").analyse(text)


def _differences(ours: dict[str, Any], theirs: dict[str, Any]) -> list[str]:
    problems = [f"field {key!r} is missing" for key in theirs if key not in ours]
    problems += [f"extra field {key!r} (the 2021 loader has no such field)" for key in ours if key not in theirs]
    for key, value in theirs.items():
        if key in ours and ours[key] != value:
            problems.append(f"{key}: derivls {json.dumps(ours[key])} != 2021 {json.dumps(value)}")
    return problems


def test_every_info_field_by_field(analysis: DocumentAnalysis, expected: list[dict[str, Any]]) -> None:
    ours = dump(analysis)["infos"]
    assert len(expected) == 503
    assert len(ours) == len(expected), f"{len(ours)} infos, the 2021 loader has {len(expected)}"
    failures = []
    for i, (mine, theirs) in enumerate(zip(ours, expected)):
        problems = _differences(mine, theirs)
        if problems:
            failures.append(f"info {i} ({theirs['schema']}):\n    " + "\n    ".join(problems))
    assert not failures, f"{len(failures)} of {len(expected)} infos differ:\n" + "\n".join(failures[:20])


def test_no_errors(analysis: DocumentAnalysis) -> None:
    errors = [d for d in analysis.diagnostics if d.severity == Severity.ERROR]
    assert errors == []
    # what the 2021 loader silently accepted: four keys that name no argument (fbgemm_linear_*)
    warnings = [d for d in analysis.diagnostics if d.severity == Severity.WARNING]
    assert {d.code for d in warnings} <= {"unknown-name"}
    assert len(warnings) == 4


def test_op_names_are_suffixed_only_when_duplicated(analysis: DocumentAnalysis) -> None:
    ops = [op for entry in analysis.entries for _, op in entry.ops if op]
    assert "AbsBackward" in ops  # a singleton: no suffix
    assert {"AddBackward0", "AddBackward1"} <= set(ops)
    assert "AbsBackward0" not in ops


def _run(argv: list[str]) -> tuple[int, str]:
    out = io.StringIO()
    with redirect_stdout(out):
        status = main(argv)
    return status, out.getvalue()


@pytest.mark.parametrize("profile", ["legacy", "auto"])
def test_cli_dump_equals_the_2021_output(legacy_dir: Path, profile: str) -> None:
    status, out = _run(
        [
            "dump",
            "--profile",
            profile,
            str(legacy_dir / "derivatives.yaml"),
            "--native",
            str(legacy_dir / "native_functions.yaml"),
        ]
    )
    assert status == 0
    expected = json.loads((legacy_dir / "expected_dump.json").read_text(encoding="utf-8"))
    assert json.loads(out) == expected


def test_cli_check_reports_no_error(legacy_dir: Path) -> None:
    status, out = _run(
        [
            "check",
            "--profile",
            "legacy",
            str(legacy_dir / "derivatives.yaml"),
            "--native",
            str(legacy_dir / "native_functions.yaml"),
            "--format",
            "json",
        ]
    )
    rows = json.loads(out)
    assert status == 0
    assert [r for r in rows if r["severity"] == "error"] == []


def test_auto_picks_legacy_for_the_2021_files(legacy_dir: Path) -> None:
    text = (legacy_dir / "native_functions.yaml").read_text(encoding="utf-8")
    assert choose("auto", legacy_dir / "derivatives.yaml", text, has_tags=False) == LEGACY
    assert choose("torchgen", legacy_dir / "derivatives.yaml", text, has_tags=False) == TORCHGEN
    assert choose("auto", None, text, has_tags=False) == LEGACY


def test_real_files_stay_torchgen(real_files) -> None:
    text = real_files.native.read_text(encoding="utf-8")
    assert choose("auto", real_files.derivatives, text, has_tags=True) == TORCHGEN
    assert choose("auto", None, text, has_tags=True) == TORCHGEN
    assert choose("auto", None, text, has_tags=False) == TORCHGEN  # SymInt everywhere


def test_analysis_profile_is_recorded(analysis: DocumentAnalysis) -> None:
    assert analysis.profile == LEGACY
    assert all(entry.profile == LEGACY for entry in analysis.entries)
