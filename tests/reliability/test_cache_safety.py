"""Issue 28, items 1, 6 and 7: nothing planted in the cache folder runs code, hangs a check or costs
more than a miss; the folder is private and a relative cache path is refused."""

from __future__ import annotations

import fcntl
import os
import pickle
import subprocess
import sys
import time
from pathlib import Path

import pytest

from derivls.base import safepickle
from derivls.base.diskcache import DiskCache
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE

LOCK = ".writing"


class Planted:
    """What an attacker writes: unpickling it opens (creates) the marker file."""

    def __init__(self, marker: Path) -> None:
        self.marker = marker

    def __reduce__(self) -> tuple[object, ...]:
        return (open, (str(self.marker), "w"))


def check(
    cache: Path, *extra: str, cwd: Path | None = None, timeout: float = 120
) -> tuple[subprocess.CompletedProcess[str], float]:
    env = {**os.environ, "DERIVLS_CACHE_DIR": str(cache)}
    env.pop("DERIVLS_NO_CACHE", None)
    started = time.monotonic()
    done = subprocess.run(
        [sys.executable, "-m", "derivls", "check", str(REAL_DERIVATIVES), "--native", str(REAL_NATIVE), *extra],
        capture_output=True,
        text=True,
        env=env,
        cwd=cwd,
        timeout=timeout,
    )
    return done, time.monotonic() - started


def wait_for_the_writer(cache: Path) -> None:
    """The detached write-behind child of the last check has finished (it holds the lock until then)."""
    with open(cache / LOCK, "rb") as f:
        fcntl.flock(f, fcntl.LOCK_SH)


@pytest.fixture
def filled(tmp_path: Path) -> tuple[Path, str]:
    cache = tmp_path / "cache"
    first, _ = check(cache)
    assert first.returncode == 0, first.stderr
    wait_for_the_writer(cache)
    kinds = sorted(p.name.split("-")[0] for p in cache.glob("*.pickle"))
    assert kinds == ["check", "entries", "headers", "native"], kinds  # check-result, entries, header and native index
    return cache, first.stdout


def test_a_planted_pickle_in_every_cache_file_runs_no_code_and_is_a_miss(filled, tmp_path: Path) -> None:
    cache, answer = filled
    marker = tmp_path / "PWNED"
    evil = pickle.dumps(Planted(marker))
    for path in cache.glob("*.pickle"):
        if path.name.startswith("entries-"):
            records = safepickle.loads(path.read_bytes())
            assert isinstance(records, dict) and records
            path.write_bytes(pickle.dumps({digest: evil for digest in records}))  # each entry's record too
        else:
            path.write_bytes(evil)
    done, _ = check(cache)
    assert not marker.exists()
    assert done.returncode == 0 and done.stdout == answer
    assert "Traceback" not in done.stderr


def test_a_record_naming_a_module_imported_into_a_value_module_is_refused() -> None:
    # derivls.aten.native imports names from elsewhere; only classes defined there are found
    crafted = b"\x80\x04\x95\x00\x00\x00\x00\x00\x00\x00\x00\x8c\x13derivls.aten.native\x8c\x02os\x93."
    with pytest.raises(pickle.UnpicklingError):
        safepickle.loads(crafted)
    with pytest.raises(pickle.UnpicklingError):
        safepickle.loads(pickle.dumps(os.system))
    with pytest.raises(pickle.UnpicklingError):
        safepickle.loads(pickle.dumps(subprocess.Popen))


def test_a_global_refused_after_allowed_ones_were_remembered_is_still_refused() -> None:
    from derivls.base.diagnostics import Span

    assert safepickle.loads(pickle.dumps((Span(0, 0, 0, 1), {1: frozenset()}))) == (Span(0, 0, 0, 1), {1: frozenset()})
    for _ in range(2):  # the refusal is not remembered as an allowance
        with pytest.raises(pickle.UnpicklingError):
            safepickle.loads(pickle.dumps(os.system))
    assert ("posix", "system") not in safepickle._allowed


class _ByName:
    """Pickled as Python 3.12+ (and 3.11.0-3.11.4) pickle an Enum member: getattr(cls, name)."""

    def __init__(self, cls: object, name: str) -> None:
        self.cls, self.name = cls, name

    def __reduce__(self) -> tuple[object, tuple[object, str]]:
        return (getattr, (self.cls, self.name))


def test_an_enum_member_pickled_by_name_as_newer_pythons_do_is_read_back() -> None:
    from derivls.aten.schema_types import BaseTy

    for protocol in (2, pickle.HIGHEST_PROTOCOL):
        data = pickle.dumps([_ByName(BaseTy, "Tensor")], protocol)
        assert b"getattr" in data
        assert safepickle.loads(data) == [BaseTy.Tensor]


@pytest.mark.parametrize("name", ["__init__", "__class__", "_member_map_", "missing"])
def test_getattr_in_a_pickle_gives_nothing_but_an_enum_member(name: str) -> None:
    from derivls.aten.schema_types import BaseTy, BaseType

    with pytest.raises(pickle.UnpicklingError, match="not an Enum member"):
        safepickle.loads(pickle.dumps(_ByName(BaseTy, name), 2))
    with pytest.raises(pickle.UnpicklingError, match="not an Enum member"):
        safepickle.loads(pickle.dumps(_ByName(BaseType, "__init__"), 2))  # (an allowed class, not an Enum)


@pytest.mark.parametrize("kind", ["fifo", "symlink to /dev/zero"])
def test_a_cache_file_that_is_not_a_regular_file_is_a_miss_without_a_hang(filled, kind: str) -> None:
    cache, answer = filled
    for path in cache.glob("*.pickle"):
        path.unlink()
        if kind == "fifo":
            os.mkfifo(path)
        else:
            path.symlink_to("/dev/zero")
    done, seconds = check(cache, timeout=60)
    assert done.returncode == 0 and done.stdout == answer
    assert "MemoryError" not in done.stderr and "Traceback" not in done.stderr
    assert seconds < 30


def test_a_group_writable_cache_file_is_not_read(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "c")
    assert cache.store_now("k", ("value",))
    assert cache.get("k") == ("value",)
    (tmp_path / "c" / "k.pickle").chmod(0o664)
    assert cache.get("k") is None


def test_the_cache_folder_is_created_private(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "new" / "folder")
    assert cache.store_now("k", 1)
    assert (tmp_path / "new" / "folder").stat().st_mode & 0o777 == 0o700


def test_a_cache_folder_of_another_user_is_not_used(tmp_path: Path, monkeypatch, capsys) -> None:
    folder = tmp_path / "theirs"
    DiskCache(folder).store_now("k", 1)
    monkeypatch.setattr(os, "geteuid", lambda: os.stat(folder).st_uid + 1)  # as seen by another user
    cache = DiskCache(folder)
    assert cache.get("k") is None
    assert not cache.enabled
    assert "belongs to another user" in capsys.readouterr().err


def test_a_relative_cache_dir_is_refused_and_nothing_is_written_in_the_current_folder(tmp_path: Path) -> None:
    done, _ = check(Path("relative-cache"), cwd=tmp_path)
    assert done.returncode == 0
    assert "not an absolute path" in done.stderr
    assert list(tmp_path.iterdir()) == []


def test_a_held_writing_lock_costs_a_miss_half_a_second_at_most(filled) -> None:
    cache, answer = filled
    for path in cache.glob("check-result-*.pickle"):
        path.unlink()  # the result misses; the writer "at work" might be writing it
    baseline, base_seconds = check(cache)
    wait_for_the_writer(cache)
    for path in cache.glob("check-result-*.pickle"):
        path.unlink()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'rb'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)",
            str(cache / LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        done, seconds = check(cache)
    finally:
        holder.kill()
        holder.wait()
    assert done.returncode == 0 and done.stdout == answer == baseline.stdout
    assert seconds < base_seconds + 1.5, (seconds, base_seconds)  # 10.4-11.2 s before


def test_wait_for_writer_gives_up_after_half_a_second_on_a_lock_that_shows_no_progress(tmp_path: Path) -> None:
    from derivls.base import writebehind

    (tmp_path / LOCK).touch()
    holder = subprocess.Popen(
        [
            sys.executable,
            "-c",
            "import fcntl,sys,time; f=open(sys.argv[1],'rb'); fcntl.flock(f, fcntl.LOCK_EX); "
            "print('held', flush=True); time.sleep(60)",
            str(tmp_path / LOCK),
        ],
        stdout=subprocess.PIPE,
        text=True,
    )
    try:
        assert holder.stdout is not None and holder.stdout.readline().strip() == "held"
        started = time.monotonic()
        writebehind.wait_for_writer(tmp_path)
        assert time.monotonic() - started < 0.8
    finally:
        holder.kill()
        holder.wait()
