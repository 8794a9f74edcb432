"""`derivls gradcheck`'s command line around the engine (stood in for: no compiler, no torch child): what it
prints in each format and how it says what it cannot do. The engine itself: tests/gradcheck (-m gradcheck)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from derivls.base.diagnostics import Span
from derivls.cli import commandline as cli
from derivls.gradcheck import engine, runner
from derivls.gradcheck.engine import GradcheckResult, Timings
from derivls.gradcheck.results import Summary, UnitOutcome
from tests.conftest import FIXTURES


@pytest.fixture
def derivatives(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """The packaged fixture, gradchecked by a stand-in engine: `abs` passes, `sin` is not checkable."""
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "lsp" / "packaged", site)
    monkeypatch.setattr(runner, "python_version", lambda python: "2.13.0+cpu")
    monkeypatch.setattr(runner, "torch_include", lambda python: str(site / "torch" / "include"))

    def stand_in(units, path, **options):
        outcomes = [
            UnitOutcome("u0", "AbsBackward0", 2, Span(2, 0, 2, 1), "passed", function="abs", checks={"backward": 2}),
            UnitOutcome("u1", "SinBackward0", 33, Span(33, 0, 33, 1), "not-checkable", "no OpInfo", function="sin"),
        ]
        progress = options.get("progress")
        if progress is not None:
            progress("compiling 2 units")
        return GradcheckResult([], Summary(outcomes), Timings(1.0, False, False, 2.0), "2.13.0+cpu")

    monkeypatch.setattr(engine, "gradcheck_units", stand_in)
    return site / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"


def test_json_output_carries_the_diagnostics_and_the_summary_counts_without_summary_json(derivatives, capsys):
    assert cli.main(["gradcheck", str(derivatives), "--all", "--format", "json"]) == 0
    output = json.loads(capsys.readouterr().out)
    assert output["diagnostics"] == []
    assert output["summary"]["counts"] == {"checked": 1, "passed": 1, "failed": 0, "not-checkable": 1}
    assert [u["status"] for u in output["summary"]["units"]] == ["passed", "not-checkable"]


def test_summary_json_writes_the_summary_json_output_carries(derivatives, tmp_path: Path, capsys):
    summary = tmp_path / "summary.json"
    assert cli.main(["gradcheck", str(derivatives), "--all", "--format", "json", "--summary-json", str(summary)]) == 0
    assert json.loads(capsys.readouterr().out)["summary"] == json.loads(summary.read_text())


def _refused(capsys, argv: list[str]) -> str:
    assert cli.main(argv) == 2
    captured = capsys.readouterr()
    assert "Traceback" not in captured.err
    (line,) = [line for line in captured.err.splitlines() if line.startswith("derivls gradcheck: error: ")]
    return line


@pytest.mark.parametrize("where", ["a folder", "a missing folder"])
def test_a_summary_json_path_that_cannot_be_written_is_refused_before_the_run(
    derivatives, tmp_path, capsys, monkeypatch, where
):
    ran = []
    monkeypatch.setattr(engine, "gradcheck_units", lambda *a, **k: ran.append(1))
    target = tmp_path if where == "a folder" else tmp_path / "missing" / "summary.json"
    line = _refused(capsys, ["gradcheck", str(derivatives), "--all", "--summary-json", str(target)])
    assert "--summary-json" in line and ("folder" in line)
    assert ran == []  # nothing built or run


@pytest.mark.parametrize("other", [["--op", "acos"], ["--since", "HEAD"]])
def test_all_with_op_or_since_is_refused_as_conflicting(derivatives, capsys, monkeypatch, other):
    ran = []
    monkeypatch.setattr(engine, "gradcheck_units", lambda *a, **k: ran.append(1))
    line = _refused(capsys, ["gradcheck", str(derivatives), "--all", *other])
    assert "--all" in line and other[0] in line
    assert ran == []


def test_max_samples_below_one_is_refused(derivatives, capsys):
    line = _refused(capsys, ["gradcheck", str(derivatives), "--op", "abs", "--max-samples", "0"])
    assert "--max-samples" in line
