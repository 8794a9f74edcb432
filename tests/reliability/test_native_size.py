"""A huge native_functions.yaml costs <= 300 MB: over MAX_NATIVE_ENTRIES entries it is refused before
anything is parsed (50 MB of renamed copies of the real file cost 650 MB and 80 s when read), and a
file just under the cap is read whole within the bound."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.base.limits import MAX_NATIVE_ENTRIES
from tests.reliability import inputs
from tests.reliability.conftest import MAX_RSS_MB, run_cli
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_TAGS


def _native(folder: Path, megabytes: float) -> Path:
    (folder / "tags.yaml").write_bytes(REAL_TAGS.read_bytes())
    path = folder / "native_functions.yaml"
    path.write_text(inputs.renamed_native_copies(megabytes), encoding="utf-8")
    return path


def _check(native: Path):
    return run_cli("check", str(REAL_DERIVATIVES), "--native", str(native), "--no-cache", "--format", "json")


def test_a_50_mb_native_file_is_refused_with_a_diagnostic_within_300_mb(tmp_path: Path) -> None:
    native = _native(tmp_path, 50)
    assert native.read_text(encoding="utf-8").count("\n- func:") > 150_000
    run = _check(native)
    assert "Traceback" not in run.stderr
    assert run.returncode == 1
    assert '"code": "native-unreadable"' in run.stdout
    assert f"more than {MAX_NATIVE_ENTRIES:,} entries" in run.stdout
    assert run.peak_mb <= MAX_RSS_MB, run.peak_mb
    print(f"\n50 MB native file: refused in {run.seconds:.1f} s, peak {run.peak_mb:.0f} MB")


@pytest.mark.parametrize("megabytes", [6.8])  # 11 copies: 28,014 entries, just under the cap
def test_a_native_file_just_under_the_cap_is_read_within_300_mb(tmp_path: Path, megabytes: float) -> None:
    native = _native(tmp_path, megabytes)
    entries = native.read_text(encoding="utf-8").count("\n- func:")
    assert MAX_NATIVE_ENTRIES * 0.85 < entries <= MAX_NATIVE_ENTRIES, entries
    run = _check(native)
    assert "Traceback" not in run.stderr
    assert '"code": "native-unreadable"' not in run.stdout, run.stdout[:2000]
    assert run.peak_mb <= MAX_RSS_MB, run.peak_mb
    print(f"\n{entries} entries ({megabytes} MB): check {run.seconds:.1f} s, peak {run.peak_mb:.0f} MB")
