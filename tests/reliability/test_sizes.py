"""Huge inputs cost time linear in their size (<= 2x the real file's time per MB) and <= 300 MB:
what is over derivls's caps is refused with a diagnostic; answers carry at most 5,000 items."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from tests.reliability import inputs
from tests.reliability.conftest import MAX_RSS_MB, open_and_query, run_cli
from tests.reliability.realfiles import REAL_NATIVE

pytestmark = pytest.mark.slow  # hostile inputs of many MB through the CLI and the server: minutes; run by .ci/run

MB = float(os.environ.get("DERIVLS_RELIABILITY_MB", "50"))  # the size of the huge files

CASES = {
    # name: (text, the code of the diagnostic saying what was refused)
    "repeated_entry": (lambda: inputs.repeated_entry(MB), "too-many-entries"),
    "huge_name": (lambda: inputs.huge_name(MB), "entry-too-large"),
    "193k_duplicates": (lambda: inputs.duplicate_entries(193_047), "too-many-entries"),
}


@pytest.fixture(scope="module")
def files(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Path]:
    folder = tmp_path_factory.mktemp("huge")
    paths = {}
    for name, (make, _) in CASES.items():
        paths[name] = folder / f"{name}.yaml"
        paths[name].write_text(make(), encoding="utf-8")
    return paths


@pytest.mark.parametrize("name", list(CASES))
def test_cli_check_is_linear_bounded_and_says_what_it_refused(files, yardstick, name: str) -> None:
    path = files[name]
    run = run_cli("check", str(path), "--native", str(REAL_NATIVE), "--format", "json")
    assert "Traceback" not in run.stderr
    assert run.returncode == 1
    assert f'"code": "{CASES[name][1]}"' in run.stdout
    assert run.seconds <= yardstick.cli_budget(path.stat().st_size), run.seconds
    assert run.peak_mb <= MAX_RSS_MB, run.peak_mb
    print(f"\n{name}: {path.stat().st_size / 1e6:.1f} MB, check {run.seconds:.1f} s, peak {run.peak_mb:.0f} MB")


def test_cli_caps_diagnostics_with_a_truncated_diagnostic(files) -> None:
    run = run_cli("check", str(files["193k_duplicates"]), "--native", str(REAL_NATIVE), "--format", "json")
    assert run.stdout.count('"code": "duplicate-entry"') == 10_000
    assert run.stdout.count('"code": "diagnostics-truncated"') == 1


@pytest.mark.parametrize("name", list(CASES))
def test_server_publishes_and_answers_within_bounds(tmp_path: Path, files, yardstick, name: str) -> None:
    text = files[name].read_text(encoding="utf-8")
    published, server = open_and_query(tmp_path, text, yardstick.server_budget(len(text)))
    with server:
        codes = {d.get("code") for d in published["diagnostics"]}
        assert CASES[name][1] in codes, codes
        peak = server.peak_kb() / 1024
        assert peak <= MAX_RSS_MB, peak
        assert "Traceback" not in server.stderr_text()
        server.close()
