"""The persistent native-index cache: a second run reads the index from the user cache folder and
computes exactly what a run without the cache computes, in another process (other string hashes)."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from derivls.base.writebehind import wait_for_writer
from tests.conftest import PACKAGED  # the installed torch's packaged files

DERIVATIVES = PACKAGED / "autograd" / "derivatives.yaml"


def derivls(*args: str, cache: Path, seed: str) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ, DERIVLS_CACHE_DIR=str(cache), PYTHONHASHSEED=seed)
    env.pop("DERIVLS_NO_CACHE", None)
    return subprocess.run([sys.executable, "-m", "derivls", *args], capture_output=True, text=True, env=env)


def stored(cache: Path, pattern: str) -> list[Path]:
    """The cache's entries named `pattern`, once a detached writer `check` left is done (derivls/base/writebehind.py)."""
    wait_for_writer(cache)
    return list(cache.glob(f"{pattern}.pickle"))


@pytest.fixture(scope="module")
def mutated(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """The real file with one schema that does not exist: a located error that depends on the index."""
    folder = tmp_path_factory.mktemp("wheel") / "torchgen" / "packaged"
    (folder / "autograd").mkdir(parents=True)
    (folder / "ATen" / "native").mkdir(parents=True)
    for name in ("native_functions.yaml", "tags.yaml"):
        (folder / "ATen" / "native" / name).write_text((PACKAGED / "ATen" / "native" / name).read_text())
    text = DERIVATIVES.read_text().replace(
        "- name: acos(Tensor self) -> Tensor", "- name: acos(Tensor selff) -> Tensor"
    )
    (folder / "autograd" / "derivatives.yaml").write_text(text)
    return folder / "autograd" / "derivatives.yaml"


def test_a_second_run_reads_the_cache_and_reports_the_same(tmp_path: Path, mutated: Path) -> None:
    cache = tmp_path / "cache"
    first = derivls("check", str(mutated), "--format", "json", cache=cache, seed="1")
    assert sorted({p.name.split("-")[0] for p in stored(cache, "*")}) == [
        "check",
        "entries",
        "headers",
        "native",
    ]  # the first run
    second = derivls("check", str(mutated), "--format", "json", cache=cache, seed="2")
    uncached = derivls("check", str(mutated), "--format", "json", "--no-cache", cache=cache, seed="3")
    assert first.returncode == second.returncode == uncached.returncode == 1
    assert json.loads(first.stdout) == json.loads(second.stdout) == json.loads(uncached.stdout)
    assert [d["code"] for d in json.loads(second.stdout) if d["severity"] == "error"] == ["schema-not-found"]


def test_dump_from_the_cache_equals_dump_without_it(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    derivls("dump", str(DERIVATIVES), cache=cache, seed="4")  # fills the cache
    cached = derivls("dump", str(DERIVATIVES), cache=cache, seed="5")
    fresh = derivls("dump", str(DERIVATIVES), "--no-cache", cache=tmp_path / "unused", seed="6")
    assert cached.returncode == fresh.returncode == 0
    assert json.loads(cached.stdout) == json.loads(fresh.stdout)
    assert not (tmp_path / "unused").exists()  # --no-cache writes nothing


def test_an_edited_native_functions_yaml_is_indexed_again(tmp_path: Path, mutated: Path) -> None:
    cache = tmp_path / "cache"
    derivls("check", str(mutated), cache=cache, seed="7")
    native = mutated.parent.parent / "ATen" / "native" / "native_functions.yaml"
    original = native.read_text()
    try:
        native.write_text(
            original.replace("- func: acos(Tensor self) -> Tensor", "- func: acos(Tensor selff) -> Tensor")
        )
        after = derivls("check", str(mutated), "--format", "json", cache=cache, seed="8")
        codes = [d["code"] for d in json.loads(after.stdout)]
        assert "schema-not-found" not in codes  # the edited file's schema now matches the entry
        assert len(stored(cache, "native-index-*")) == 2
        assert len(stored(cache, "entries-*")) == 2  # the entries' results depend on the index
    finally:
        native.write_text(original)


def test_a_check_after_editing_entries_reads_the_others_and_reports_what_no_cache_reports(
    tmp_path: Path, mutated: Path
) -> None:
    """Another process (other string hashes) reads the entries' results written by the first run."""
    cache = tmp_path / "cache"
    derivls("check", str(mutated), cache=cache, seed="9")
    original = mutated.read_text()
    try:
        mutated.write_text(
            original.replace("grad * self.sgn()", "grad * self.sgnn()", 1).replace(
                "- name: abs(Tensor self) -> Tensor\n",
                "- name: abs(Tensor self) -> Tensor\n  output_differentiability: [False]\n",
                1,
            )
        )
        cached = derivls("check", str(mutated), "--format", "json", cache=cache, seed="10")
        uncached = derivls("check", str(mutated), "--format", "json", "--no-cache", cache=cache, seed="11")
        assert cached.returncode == uncached.returncode == 1
        assert json.loads(cached.stdout) == json.loads(uncached.stdout)
        codes = {d["code"] for d in json.loads(cached.stdout)}
        assert {"schema-not-found", "codegen-output-differentiability-inplace"} <= codes
    finally:
        mutated.write_text(original)
