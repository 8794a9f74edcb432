"""`derivls cache`: where the cache folder is, what it weighs in all and part by part; `--clear` empties it."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.cli import commandline as cli


@pytest.fixture
def cache(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    folder = tmp_path / "cache"
    folder.mkdir(mode=0o700)
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(folder))
    return folder


def fill(cache: Path) -> None:
    (cache / "pch" / "gcc-0123abcd").mkdir(parents=True)
    (cache / "pch" / "gcc-0123abcd" / "derivls-autograd.h.gch").write_bytes(b"x" * 3_000_000)
    (cache / "gradcheck").mkdir()
    (cache / "gradcheck" / "derivls_gc_1.so").write_bytes(b"x" * 1_200_000)
    for n in range(2):
        (cache / f"entries-{n:040x}.pickle").write_bytes(b"x" * 500_000)
    (cache / f"check-result-{7:040x}.pickle").write_bytes(b"x" * 1_000)


def test_cache_shows_the_total_then_each_part_heaviest_first(cache: Path, capsys):
    fill(cache)
    assert cli.main(["cache"]) == 0
    lines = capsys.readouterr().out.splitlines()
    assert lines[0] == f"{cache}: 5.2 MB in 5 files"
    assert [line.split()[:3] for line in lines[1:]] == [
        ["pch/", "3.0", "MB"],
        ["gradcheck/", "1.2", "MB"],
        ["entries", "1.0", "MB"],
        ["check-result", "0.0", "MB"],
    ]
    assert lines[3].endswith("in 2 files") and lines[4].endswith("in 1 file")


def test_cache_clear_empties_the_folder_and_says_how_much(cache: Path, capsys):
    fill(cache)
    assert cli.main(["cache", "--clear"]) == 0
    assert capsys.readouterr().out == f"{cache}: cleared 5.2 MB in 5 files\n"
    assert list(cache.iterdir()) == []


def test_a_cache_folder_not_created_yet_is_said_so(tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys):
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(tmp_path / "none"))
    assert cli.main(["cache"]) == 0
    assert capsys.readouterr().out == f"{tmp_path / 'none'}: empty (not created yet)\n"
