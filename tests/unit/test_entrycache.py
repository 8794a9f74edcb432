"""The persistent cache of per-entry results (derivls/derivatives/entrycache.py): a process that opens a
file analysed before reads the results of the entries it has seen, computes only the others, and
ends with exactly what an analysis without the cache computes. Anything a result depends on is in
its key: changing any of it is a miss."""

from __future__ import annotations

import json
import pickle
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import pytest

from derivls.base import diskcache
from derivls.base.diskcache import DiskCache
from derivls.derivatives import entrycache
from derivls.derivatives.dump import dump
from derivls.derivatives.entrycache import EntryCache, context_key, header_sources_key
from derivls.derivatives.formulas import checks, headercache, headers
from derivls.derivatives.formulas.sources import find_sources
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.project import opener as project
from derivls.project.opener import NativeLoad

ABS = "- name: abs(Tensor self) -> Tensor\n"
ABS_FALSE = ABS + "  output_differentiability: [False]\n"  # codegen-output-differentiability-inplace (abs_)
ABS_INPLACE_ENTRY = "\n- name: abs_(Tensor(a!) self) -> Tensor(a!)\n  self: grad * self.sgn()\n  result: self_t\n"


@dataclass
class Workspace:
    """A copy of the torch wheel's files in a wheel's layout, and a cache folder of its own."""

    derivatives: Path
    native: Path
    tags: Path
    functions_manual: Path
    disk: DiskCache

    def load(self, torch_version: str | None = None, preset: str = "auto") -> NativeLoad:
        texts = project.read_texts(str(self.native), str(self.tags))
        preset_profile = project.preset_profile(preset, self.derivatives)
        return project.index_native(
            str(self.native), str(self.tags), preset_profile, texts, torch_version, self.derivatives, self.disk
        )

    def analyzer(self, load: NativeLoad | None = None, store: bool = True) -> DocumentAnalyzer:
        load = load or self.load()
        assert load.index is not None and load.cache_key is not None
        cache = EntryCache(self.disk, load.cache_key, load.index, load.index.path, load.profile) if store else None
        return DocumentAnalyzer(load.index, load.index.path, load.profile, cache)


def _copy(source: Path, target: Path) -> Path:
    target.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(source, target)
    return target


@pytest.fixture(autouse=True)
def one_process(monkeypatch: pytest.MonkeyPatch) -> None:
    """These tests count the store's hits and misses, which are this process's: a cold pass may give part
    of the entries to a forked child (derivatives/parallel.py), whose lookups the parent does not see."""
    monkeypatch.setenv("DERIVLS_NO_FORK", "1")


@pytest.fixture
def workspace(real_files, tmp_path: Path) -> Workspace:
    """torchgen/packaged/... and torch/include/... as in a wheel, so the formula checks find their C++ sources."""
    site = tmp_path / "site"
    packaged = site / "torchgen" / "packaged"
    include_source = real_files.packaged.parent.parent / "torch" / "include"
    include = site / "torch" / "include"
    for relative in (
        "autograd/templates/Functions.cpp",
        "autograd/templates/Functions.h",
        "ATen/templates/TensorBody.h",
    ):
        if (real_files.packaged / relative).exists():
            _copy(real_files.packaged / relative, packaged / relative)
    for relative in ("ATen/core/TensorBase.h", "ATen/core/TensorBody.h"):
        _copy(include_source / relative, include / relative)
    manual = _copy(
        include_source / "torch/csrc/autograd/FunctionsManual.h", include / "torch/csrc/autograd/FunctionsManual.h"
    )
    return Workspace(
        _copy(real_files.derivatives, packaged / "autograd" / "derivatives.yaml"),
        _copy(real_files.native, packaged / "ATen" / "native" / "native_functions.yaml"),
        _copy(real_files.tags, packaged / "ATen" / "native" / "tags.yaml"),
        manual,
        DiskCache(tmp_path / "cache"),
    )


def _json(analysis: DocumentAnalysis) -> tuple[list[str], str]:
    return [repr(d) for d in analysis.diagnostics], json.dumps(dump(analysis), sort_keys=True)


def _fresh(ws: Workspace, text: str, load: NativeLoad | None = None) -> DocumentAnalysis:
    return ws.analyzer(load, store=False).analyse(text)


# -- hits, misses, and the same answer --------------------------------------------------------------


def test_a_second_process_reads_every_entry_and_computes_the_same_diagnostics_and_dump(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    first = workspace.analyzer()
    expected = first.analyse(text)
    assert first.store is not None and first.store.hits == 0 and first.store.saves == 1
    second = workspace.analyzer()  # a new index object too: read from the index cache, as another process would
    assert second.index is not first.index
    got = second.analyse(text)
    assert second.store is not None
    assert second.store.misses == 0 and second.store.hits == len(second._cache) > 600
    assert second.store.saves == 0  # nothing new: nothing written
    assert _json(got) == _json(expected) == _json(_fresh(workspace, text))


def test_a_changed_entry_is_the_only_one_analysed_again(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    edited = text.replace("grad * self.sgn()", "grad * self.sgn() * 2", 1)
    assert edited != text
    analyzer = workspace.analyzer()
    got = analyzer.analyse(edited)
    assert analyzer.store is not None and analyzer.store.misses == 1
    assert _json(got) == _json(_fresh(workspace, edited))
    again = workspace.analyzer()
    again.analyse(edited)
    assert again.store is not None and again.store.misses == 0  # the changed entry was written back


def test_results_read_from_disk_share_their_functions_with_the_live_index(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    analyzer = workspace.analyzer()
    analysis = analyzer.analyse(text)
    assert analyzer.store is not None and analyzer.store.hits > 600 and analyzer.index is not None
    by_schema = analyzer.index.by_schema
    checked = 0
    for placed in analysis.entries:
        result = placed.result
        assert result.profile is analyzer.profile
        if result.canonical is None:
            continue
        assert result.canonical is by_schema[str(result.canonical.func)]
        assert result.schema_function is by_schema[str(result.schema_function.func)]
        for section in result.sections:
            if section.info is None:
                continue
            assert section.info.func is result.canonical
            arguments = {id(a) for a in result.canonical.func.arguments.flat_all}
            arguments |= {
                id(result.canonical.func.arguments.self_arg),
                id(result.canonical.func.arguments.tensor_options),
            }
            for binding in section.info.args_with_derivatives:
                assert id(binding.argument) in arguments
                checked += 1
    assert checked > 500
    assert set(analysis.infos) <= {f.func for f in analyzer.index.by_schema.values()}


def test_edits_after_reading_from_disk_equal_analysis_from_scratch(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    analyzer = workspace.analyzer()
    analyzer.analyse(text)
    at = text.index("grad * self.sgn()")
    steps = [(at, at, "x"), (at, at + 1, ""), (at + len("grad"), at + len("grad"), " * 3")]
    current = text
    for start, end, new in steps:
        current = current[:start] + new + current[end:]
        got = analyzer.analyse(current, [(start, end, len(new))])
        assert _json(got) == _json(_fresh(workspace, current))
    structural = current.replace(ABS, ABS + "  output_differentiability: [True]\n", 1)
    assert _json(analyzer.analyse(structural)) == _json(_fresh(workspace, structural))


def test_codegen_stage_diagnostics_are_read_with_the_entry_and_not_checked_again(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    text = workspace.derivatives.read_text().replace(ABS, ABS_FALSE, 1)
    expected = workspace.analyzer().analyse(text)
    assert "codegen-output-differentiability-inplace" in {d.code for d in expected.diagnostics}
    calls = []
    real = checks.codegen_checks
    monkeypatch.setattr(checks, "codegen_checks", lambda *a: calls.append(a) or real(*a))
    got = workspace.analyzer().analyse(text)
    assert calls == []
    assert _json(got) == _json(expected)


def test_codegen_stage_diagnostics_follow_the_other_entries_of_the_file(workspace: Workspace) -> None:
    """An entry's codegen-stage checks depend on which of its overloads have entries of their own:
    a stored record computed without abs_'s entry is not reused with it."""
    text = workspace.derivatives.read_text().replace(ABS, ABS_FALSE, 1)
    workspace.analyzer().analyse(text)
    with_inplace = text + ABS_INPLACE_ENTRY
    got = workspace.analyzer().analyse(with_inplace)
    fresh = _fresh(workspace, with_inplace)
    assert _json(got) == _json(fresh)
    before = [d.code for d in _fresh(workspace, text).diagnostics]
    assert [d.code for d in fresh.diagnostics] != before  # the test would notice a stale record


# -- every dependency is in the key --------------------------------------------------------------------


def _misses_after(ws: Workspace, text: str, load: NativeLoad | None = None) -> int:
    analyzer = ws.analyzer(load)
    analyzer.analyse(text)
    assert analyzer.store is not None
    return analyzer.store.misses


def test_a_changed_native_functions_yaml_misses(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    native = workspace.native.read_text()
    workspace.native.write_text(
        native.replace("- func: acos(Tensor self) -> Tensor", "- func: acos(Tensor selff) -> Tensor")
    )
    load = workspace.load()
    assert _misses_after(workspace, text, load) > 600
    assert _json(workspace.analyzer(load).analyse(text)) == _json(_fresh(workspace, text, load))


def test_a_changed_tags_yaml_misses(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    workspace.tags.write_text(workspace.tags.read_text() + "\n- tag: a_new_tag\n  desc: one more\n")
    assert _misses_after(workspace, text) > 600


def test_another_path_of_the_same_files_misses(workspace: Workspace, tmp_path: Path) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    shutil.copytree(tmp_path / "site", tmp_path / "elsewhere")
    moved = Workspace(
        *(tmp_path / "elsewhere" / p.relative_to(tmp_path / "site") for p in (
            workspace.derivatives, workspace.native, workspace.tags, workspace.functions_manual)),
        workspace.disk,
    )  # fmt: skip
    assert _misses_after(moved, text) > 600


def test_another_release_misses(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    older = workspace.load(torch_version="2.12")
    assert _misses_after(workspace, text, older) > 600


def test_another_profile_or_release_is_another_key(workspace: Workspace) -> None:
    from derivls.derivatives.profiles import LEGACY, TorchgenProfile

    load = workspace.load()
    assert load.index is not None and load.cache_key is not None
    path = load.index.path
    keys = {
        context_key(load.cache_key, load.index, path, profile)
        for profile in (load.profile, LEGACY, TorchgenProfile("2.5", load.profile.reason), load.profile.because("x"))
    }
    assert len(keys) == 4
    assert context_key("another index", load.index, path, load.profile) not in keys


def test_a_changed_functions_manual_misses_and_its_names_are_checked_again(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    before = workspace.analyzer().analyse(text)
    assert not any("handle_r_to_c" in d.message for d in before.diagnostics)
    manual = workspace.functions_manual.read_text()
    assert "handle_r_to_c(" in manual
    workspace.functions_manual.write_text(manual.replace("handle_r_to_c(", "handle_r_to_c_renamed("))
    headercache._cache.clear()  # the process-wide header index is built once per index: another process
    analyzer = workspace.analyzer()
    after = analyzer.analyse(text)
    assert analyzer.store is not None and analyzer.store.misses > 600
    assert _json(after) == _json(_fresh(workspace, text))
    assert any("handle_r_to_c" in d.message for d in after.diagnostics)


def test_the_key_covers_every_file_the_header_index_reads(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    read: list[str] = []
    real = headers._read
    monkeypatch.setattr(headers, "_read", lambda path: (path is not None and read.append(str(path))) or real(path))
    load = workspace.load()
    headers.build_header_index(find_sources(None, str(workspace.native)), load.index)
    keyed = header_sources_key(str(workspace.native))
    assert read and set(read) <= set(keyed)
    assert str(workspace.functions_manual) in keyed


def test_another_derivls_code_or_version_misses(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    monkeypatch.setattr(diskcache, "_SALT", diskcache._SALT + " next")
    assert _misses_after(workspace, text) > 600


# -- the stored value ------------------------------------------------------------------------------


def _stored(ws: Workspace) -> tuple[Path, dict[bytes, bytes]]:
    (path,) = ws.disk.directory.glob("entries-*.pickle")
    return path, pickle.loads(path.read_bytes())


def test_a_corrupt_record_is_analysed_again_and_the_rest_is_read(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    path, records = _stored(workspace)
    broken = next(iter(records))
    records[broken] = b"\x80\x05not a pickle"
    path.write_bytes(pickle.dumps(records))
    analyzer = workspace.analyzer()
    got = analyzer.analyse(text)
    assert analyzer.store is not None and analyzer.store.misses == 1
    assert _json(got) == _json(_fresh(workspace, text))
    assert _stored(workspace)[1][broken] != b"\x80\x05not a pickle"  # written again


@pytest.mark.parametrize("content", [b"garbage", pickle.dumps(["a", "list"]), pickle.dumps({"k": "v"})])
def test_an_unreadable_or_foreign_value_is_ignored_and_rewritten(workspace: Workspace, content: bytes) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    path, _ = _stored(workspace)
    path.write_bytes(content)
    analyzer = workspace.analyzer()
    got = analyzer.analyse(text)
    assert analyzer.store is not None and analyzer.store.hits == 0 and analyzer.store.saves == 1
    assert _json(got) == _json(_fresh(workspace, text))
    assert len(_stored(workspace)[1]) > 600


def test_a_record_from_another_index_is_not_used(workspace: Workspace) -> None:
    """A record naming a function the index does not have (a foreign value under the right key) is a miss."""
    text = ABS + "  self: grad * self.sgn()\n  result: self_t\n"
    workspace.analyzer().analyse(text)
    path, records = _stored(workspace)
    ((digest, record),) = records.items()
    records[digest] = record.replace(b"abs(Tensor self) -> Tensor", b"abz(Tensor self) -> Tensor")
    path.write_bytes(pickle.dumps(records))
    analyzer = workspace.analyzer()
    got = analyzer.analyse(text)
    assert analyzer.store is not None and analyzer.store.misses == 1
    assert _json(got) == _json(_fresh(workspace, text))


def test_only_the_current_files_entries_are_kept(workspace: Workspace) -> None:
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    assert len(_stored(workspace)[1]) > 600
    small = ABS + "  self: grad * self.sgn()\n  result: self_t\n"
    workspace.analyzer().analyse(small)
    assert len(_stored(workspace)[1]) == 1


def test_a_disabled_cache_reads_and_writes_nothing(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    text = workspace.derivatives.read_text()
    monkeypatch.setenv("DERIVLS_NO_CACHE", "1")
    monkeypatch.setattr(project, "_default_cache", None)
    load = workspace.load()
    assert project.entry_cache(load) is None
    analyzer = project.make_analyzer(load, None)
    assert analyzer.store is None
    analyzer.analyse(text)
    assert not list(workspace.disk.directory.glob("entries-*"))


def test_a_background_save_writes_after_its_delay_or_on_flush(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entrycache, "SAVE_DELAY", 60.0)
    load = workspace.load()
    assert load.index is not None and load.cache_key is not None
    store = EntryCache(workspace.disk, load.cache_key, load.index, load.index.path, load.profile, background=True)
    DocumentAnalyzer(load.index, load.index.path, load.profile, store).analyse(workspace.derivatives.read_text())
    assert not list(workspace.disk.directory.glob("entries-*"))  # not yet: the server's diagnostics go first
    store.flush()
    assert len(_stored(workspace)[1]) > 600
    assert store._stored is None  # the records are let go: a server's memory holds them only while writing
    misses = store.misses
    assert store.get(workspace.derivatives.read_text().split("\n- name:")[0]) is None  # no disk read on edits
    assert store.misses == misses + 1


def test_a_file_of_more_than_max_chunks_entries_is_not_kept(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(entrycache, "MAX_CHUNKS", 100)
    workspace.analyzer().analyse(workspace.derivatives.read_text())
    assert not list(workspace.disk.directory.glob("entries-*"))
    small = ABS + "  self: grad * self.sgn()\n  result: self_t\n"
    workspace.analyzer().analyse(small)
    assert len(_stored(workspace)[1]) == 1


def test_a_value_holds_at_most_max_bytes_of_records(workspace: Workspace, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(entrycache, "MAX_BYTES", 100_000)
    text = workspace.derivatives.read_text()
    workspace.analyzer().analyse(text)
    records = _stored(workspace)[1]
    assert 10 < len(records) < 100
    assert sum(map(len, records.values())) < 100_000 + max(map(len, records.values()))
    analyzer = workspace.analyzer()
    assert _json(analyzer.analyse(text)) == _json(_fresh(workspace, text))
    assert analyzer.store is not None and analyzer.store.hits == len(records)


# -- the 2021 loader ----------------------------------------------------------------------------


def test_the_legacy_profile_reads_its_entries_and_computes_the_same(legacy_dir: Path, tmp_path: Path) -> None:
    disk = DiskCache(tmp_path / "cache")
    native, derivatives = str(legacy_dir / "native_functions.yaml"), legacy_dir / "derivatives.yaml"
    text = derivatives.read_text()

    def analyzer(store: bool = True) -> DocumentAnalyzer:
        preset = project.preset_profile("legacy", derivatives)
        load = project.index_native(native, None, preset, project.read_texts(native, None), None, derivatives, disk)
        assert load.index is not None and load.cache_key is not None
        cache = EntryCache(disk, load.cache_key, load.index, load.index.path, load.profile) if store else None
        return DocumentAnalyzer(load.index, load.index.path, load.profile, cache)

    expected = analyzer().analyse(text)
    second = analyzer()
    got = second.analyse(text)
    assert second.store is not None and second.store.misses == 0 and second.store.hits > 400
    assert second.profile.name == "legacy"
    fresh = analyzer(store=False).analyse(text)
    assert (
        [repr(d) for d in got.diagnostics]
        == [repr(d) for d in expected.diagnostics]
        == [repr(d) for d in fresh.diagnostics]
    )
    assert json.dumps(second.profile.dump(got)) == json.dumps(second.profile.dump(fresh))
    assert json.loads(json.dumps(second.profile.dump(got)))["infos"]


def test_a_background_save_goes_to_the_runner_and_its_steps_write_what_flush_writes(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    taken: list[EntryCache] = []
    monkeypatch.setattr(entrycache, "_runner", lambda cache: taken.append(cache) or True)
    load = workspace.load()
    assert load.index is not None and load.cache_key is not None
    store = EntryCache(workspace.disk, load.cache_key, load.index, load.index.path, load.profile, background=True)
    DocumentAnalyzer(load.index, load.index.path, load.profile, store).analyse(workspace.derivatives.read_text())
    assert taken == [store]  # no thread: the runner has it
    steps = store.saving()
    next(steps)  # a step reads; nothing is written yet
    for _ in range(10):
        next(steps)
    assert not list(workspace.disk.directory.glob("entries-*"))
    count = 11 + sum(1 for _ in steps)
    assert count > 600  # one step per record, and the read and the write
    path, records = _stored(workspace)
    assert len(records) > 600 and store._stored is None
    assert list(store.saving()) == []  # nothing pending any more
    path.unlink()
    monkeypatch.setattr(entrycache, "_runner", lambda cache: False)  # a runner that cannot take it: a thread
    monkeypatch.setattr(entrycache, "SAVE_DELAY", 0.0)
    other = EntryCache(workspace.disk, load.cache_key, load.index, load.index.path, load.profile, background=True)
    DocumentAnalyzer(load.index, load.index.path, load.profile, other).analyse(workspace.derivatives.read_text())
    deadline = time.monotonic() + 60
    while not list(workspace.disk.directory.glob("entries-*")) and time.monotonic() < deadline:
        time.sleep(0.05)
    assert _stored(workspace)[1] == records


def test_a_stepped_save_does_not_wait_for_a_writer_at_work(
    workspace: Workspace, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The server runs the steps on its event loop: a detached writer's lock must not block it."""
    import fcntl
    import os

    from derivls.base.writebehind import LOCK_NAME

    monkeypatch.setattr(entrycache, "_runner", lambda cache: True)  # the test runs the steps
    load = workspace.load()
    assert load.index is not None and load.cache_key is not None
    store = EntryCache(workspace.disk, load.cache_key, load.index, load.index.path, load.profile, background=True)
    DocumentAnalyzer(load.index, load.index.path, load.profile, store).analyse(workspace.derivatives.read_text())
    workspace.disk.directory.mkdir(parents=True, exist_ok=True)
    fd = os.open(workspace.disk.directory / LOCK_NAME, os.O_RDWR | os.O_CREAT)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)  # a writer at work
        started = time.monotonic()
        for _ in store.saving():
            pass
        assert time.monotonic() - started < 5  # not the 10 s a reader waits
    finally:
        os.close(fd)
    assert len(_stored(workspace)[1]) > 600
