"""Older releases' rules with entry results read from the persistent cache: a `derivls dump` / `check`
that reads every entry from disk (another process, other string hashes) prints what the run that
computed them printed (which test_release_matrix compares with each release's torchgen)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests.releases.matrix import REPO, Release

pytestmark = pytest.mark.releases


def derivls(*args: str, cache: Path, seed: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, PYTHONPATH=str(REPO), DERIVLS_CACHE_DIR=str(cache), PYTHONHASHSEED=seed)
    env.pop("DERIVLS_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "derivls", *args], capture_output=True, text=True, env=env)


@pytest.mark.parametrize("version", ["2.1.2", "2.5.1", "2.12.1"])
def test_a_release_s_dump_and_check_read_from_the_entry_cache_equal_the_computed_ones(
    version: str, tmp_path: Path
) -> None:
    release = Release(version)
    cache = tmp_path / "cache"
    computed = derivls("dump", str(release.derivatives), cache=cache, seed="1")
    assert computed.returncode == 0, computed.stderr[-2000:]
    assert list(cache.glob("entries-*.pickle"))
    read = derivls("dump", str(release.derivatives), cache=cache, seed="2")
    assert read.returncode == 0, read.stderr[-2000:]
    assert json.loads(read.stdout) == json.loads(computed.stdout)
    checks = [
        derivls("check", str(release.derivatives), "--format", "json", *extra, cache=cache, seed=seed)
        for extra, seed in (((), "3"), (("--no-cache",), "4"))
    ]
    assert checks[0].returncode == checks[1].returncode
    assert json.loads(checks[0].stdout) == json.loads(checks[1].stdout)
