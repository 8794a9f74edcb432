"""The persistent cache: content-keyed, atomic, bounded, and a miss whenever anything is off."""

from __future__ import annotations

import multiprocessing
import os
import pickle
import time
from pathlib import Path

import pytest

from derivls.base import diskcache
from derivls.base.diskcache import DiskCache, content_key


@pytest.fixture
def cache(tmp_path: Path) -> DiskCache:
    return DiskCache(tmp_path / "cache")


def test_a_stored_value_is_read_back(cache: DiskCache) -> None:
    key = content_key("index", "native text", None)
    assert cache.put(key, {"functions": [1, 2, 3]})
    assert cache.get(key) == {"functions": [1, 2, 3]}


def test_keys_differ_when_any_input_differs() -> None:
    base = content_key("index", "a", "b")
    assert content_key("index", "a", "c") != base
    assert content_key("other", "a", "b") != base
    assert content_key("index", "a", None) != content_key("index", "a", "")
    assert content_key("index", "ab", "") != content_key("index", "a", "b")  # parts are length-prefixed
    assert content_key("index", "a", "b") == base


def test_keys_depend_on_the_derivls_version(monkeypatch: pytest.MonkeyPatch) -> None:
    before = content_key("index", "x")
    monkeypatch.setattr(diskcache, "_SALT", diskcache._SALT + " next")
    assert content_key("index", "x") != before


def test_an_unknown_key_is_a_miss(cache: DiskCache) -> None:
    assert cache.get(content_key("index", "never stored")) is None


def test_a_corrupted_entry_is_a_miss_and_is_removed(cache: DiskCache) -> None:
    key = content_key("index", "x")
    cache.put(key, list(range(100)))
    path = cache.directory / f"{key}.pickle"
    path.write_bytes(path.read_bytes()[:10])
    assert cache.get(key) is None
    assert not path.exists()


def test_a_value_that_cannot_be_pickled_is_not_stored(cache: DiskCache) -> None:
    key = content_key("index", "lambda")
    assert not cache.put(key, lambda: None)
    assert cache.get(key) is None


def test_writes_leave_no_temporary_files(cache: DiskCache) -> None:
    for i in range(5):
        cache.put(content_key("index", str(i)), i)
    assert sorted(p.suffix for p in cache.directory.iterdir()) == [".pickle"] * 5


def test_the_folder_is_pruned_least_recently_used_first(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path, max_bytes=4 * 1200)  # four entries fit, a fifth does not
    keys = [content_key("blob", str(i)) for i in range(4)]
    for i, key in enumerate(keys):
        path = tmp_path / f"{key}.pickle"
        cache.put(key, b"x" * 1000)
        os.utime(path, ns=(i * 10**9, i * 10**9))  # oldest first
    cache.get(keys[0])  # used again: now the most recent
    cache.put(content_key("blob", "new"), b"y" * 1000)
    assert cache.get(keys[0]) is not None
    assert cache.get(keys[1]) is None  # the least recently used went


def test_a_temporary_file_a_killed_writer_left_is_removed_once_stale(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    stale, fresh = tmp_path / ".k1.abc.tmp", tmp_path / ".k2.def.tmp"  # as mkstemp names them
    stale.write_bytes(b"half a pickle")
    fresh.write_bytes(b"being written")
    old = (time.time() - diskcache.STALE_SECONDS - 60) * 10**9
    os.utime(stale, ns=(int(old), int(old)))
    cache.put(content_key("blob", "x"), b"x")  # every write prunes
    assert not stale.exists()
    assert fresh.exists()  # another process may be writing it right now


def test_disabled_cache_reads_and_writes_nothing(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path / "c", enabled=False)
    assert not cache.put("k", 1)
    assert cache.get("k") is None
    assert not (tmp_path / "c").exists()


def test_the_environment_can_turn_the_cache_off(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DERIVLS_NO_CACHE", "1")
    assert not DiskCache(tmp_path).enabled
    monkeypatch.setenv("DERIVLS_NO_CACHE", "0")
    assert DiskCache(tmp_path).enabled


def test_the_default_folder_follows_the_environment(monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(tmp_path / "explicit"))
    assert diskcache.default_directory() == tmp_path / "explicit"
    monkeypatch.delenv("DERIVLS_CACHE_DIR")
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "xdg"))
    assert diskcache.default_directory() == tmp_path / "xdg" / "derivls"
    monkeypatch.setenv("XDG_CACHE_HOME", "relative/is/ignored")
    assert diskcache.default_directory() == Path.home() / ".cache" / "derivls"


def test_an_unwritable_folder_is_a_logged_miss(tmp_path: Path) -> None:
    blocker = tmp_path / "file"
    blocker.write_text("not a folder")
    cache = DiskCache(blocker / "cache")
    assert not cache.put("k", 1)
    assert cache.get("k") is None


def _writer(directory: str, key: str, n: int) -> None:
    cache = DiskCache(Path(directory))
    for _ in range(n):
        cache.put(key, list(range(20000)))


def test_concurrent_writers_never_leave_a_torn_entry(tmp_path: Path) -> None:
    key = content_key("index", "shared")
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_writer, args=(str(tmp_path), key, 20)) for _ in range(2)]
    for p in procs:
        p.start()
    reader = DiskCache(tmp_path)
    seen = 0
    while any(p.is_alive() for p in procs):
        value = reader.get(key)
        if value is not None:
            assert value == list(range(20000))
            seen += 1
    for p in procs:
        p.join()
        assert p.exitcode == 0
    assert pickle.loads((tmp_path / f"{key}.pickle").read_bytes()) == list(range(20000))


def test_a_value_stored_in_steps_is_read_back_and_abandoned_steps_leave_no_file(tmp_path: Path) -> None:
    cache = DiskCache(tmp_path)
    value = {b"k%d" % i: b"x" * 100_000 for i in range(30)}  # ~3 MB: several write steps
    steps = cache.storing("stepped", value)
    count = 0
    try:
        while True:
            next(steps)
            count += 1
    except StopIteration as done:
        assert done.value is True
    assert count >= 3 and cache.get("stepped") == value
    abandoned = cache.storing("abandoned", value)
    next(abandoned)
    next(abandoned)  # a temporary file is half written now
    abandoned.close()
    assert cache.get("abandoned") is None
    assert not [p for p in tmp_path.iterdir() if p.name.endswith(diskcache.TEMPORARY)]


def test_the_code_fingerprint_covers_every_module_of_the_package(monkeypatch: pytest.MonkeyPatch) -> None:
    import derivls

    walked: list[Path] = []
    real = os.walk
    monkeypatch.setattr(diskcache.os, "walk", lambda root: walked.append(Path(root)) or real(root))
    diskcache.code_fingerprint()
    assert walked == [Path(derivls.__file__).resolve().parent]
