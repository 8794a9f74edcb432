"""The forked cold pass (derivls.derivatives.parallel): the same analysis as one process, results that are
the index's own objects, a failing child costs nothing but time, and no child is left behind."""

from __future__ import annotations

import os
import threading

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives import parallel
from derivls.derivatives.loader import DocumentAnalyzer


@pytest.fixture(scope="module")
def real(real_files):
    index = NativeIndex.load(real_files.native, real_files.tags)
    return index, real_files.derivatives.read_text(), str(real_files.native)


_children: list[int] = []  # the children the forked passes made
_real_fork = os.fork


def recorded_fork() -> int:
    pid = _real_fork()
    if pid:
        _children.append(pid)
    return pid


def _analyse(real, monkeypatch, fork: bool):
    index, text, native = real
    before = len(_children)
    with monkeypatch.context() as m:
        forks: list[int] = []
        m.setattr(parallel, "forks_here", lambda pending: forks.append(pending) or fork)
        m.setattr(os, "fork", recorded_fork)
        analysis = DocumentAnalyzer(index, native).analyse(text)
    assert forks, "the full pass asks whether to fork"
    assert len(_children) == before + fork, "a forced pass forks once; an unforced one never"
    return analysis


def _no_child_left() -> bool:
    """Every child the passes forked has been reaped (none left running or as a zombie)."""
    for pid in _children:
        try:
            os.waitpid(pid, os.WNOHANG)
        except ChildProcessError:
            continue
        return False
    return True


def _summary(analysis):
    return (
        [(d.span, d.code, d.message) for d in analysis.diagnostics],
        [e.ops for e in analysis.entries],
        analysis.infos,
        analysis.used_dispatch_keys,
    )


def test_a_forked_pass_finds_what_one_process_finds(real, monkeypatch):
    alone = _analyse(real, monkeypatch, fork=False)
    forked = _analyse(real, monkeypatch, fork=True)
    assert _summary(forked) == _summary(alone)
    assert _no_child_left()


def test_forked_results_refer_to_the_index_s_own_functions(real, monkeypatch):
    index = real[0]
    forked = _analyse(real, monkeypatch, fork=True)
    own = {id(f) for f in index.loader_functions} | {id(f) for f in index.functions}
    own_schemas = {id(f.func) for f in index.loader_functions}
    results = [e.result for e in forked.entries]
    last = results[-1]  # the child analyses the last entries
    assert last.canonical is not None and id(last.canonical) in own
    for result in results:
        for f in (result.canonical, result.schema_function):
            assert f is None or id(f) in own
            assert f is None or id(f.func) in own_schemas
        for section in result.sections:
            assert section.info is None or id(section.info.func) in own


def test_a_failing_child_costs_only_time(real, monkeypatch):
    parent = os.getpid()
    real_chunk_result = DocumentAnalyzer._chunk_result

    def fails_in_the_child(self, chunk):
        if os.getpid() != parent:
            raise RuntimeError("the child breaks")
        return real_chunk_result(self, chunk)

    alone = _analyse(real, monkeypatch, fork=False)
    monkeypatch.setattr(DocumentAnalyzer, "_chunk_result", fails_in_the_child)
    forked = _analyse(real, monkeypatch, fork=True)
    assert _summary(forked) == _summary(alone)
    assert _no_child_left()


def test_a_child_killed_by_a_signal_costs_only_time(real, monkeypatch):
    parent = os.getpid()
    real_chunk_result = DocumentAnalyzer._chunk_result

    def dies_in_the_child(self, chunk):
        if os.getpid() != parent:
            os.kill(os.getpid(), 9)
        return real_chunk_result(self, chunk)

    alone = _analyse(real, monkeypatch, fork=False)
    monkeypatch.setattr(DocumentAnalyzer, "_chunk_result", dies_in_the_child)
    assert _summary(_analyse(real, monkeypatch, fork=True)) == _summary(alone)
    assert _no_child_left()


def test_when_the_parent_s_part_raises_the_child_is_reaped(real, monkeypatch):
    parent = os.getpid()
    real_chunk_result = DocumentAnalyzer._chunk_result

    def fails_in_the_parent(self, chunk):
        if os.getpid() == parent:
            raise KeyboardInterrupt
        return real_chunk_result(self, chunk)

    monkeypatch.setattr(DocumentAnalyzer, "_chunk_result", fails_in_the_parent)
    with pytest.raises(KeyboardInterrupt):
        _analyse(real, monkeypatch, fork=True)
    assert _no_child_left()


def test_it_does_not_fork_for_few_entries_with_threads_or_when_turned_off(monkeypatch):
    running = threading.active_count()  # threads an earlier test left (e.g. a background cache save) count once
    monkeypatch.setattr(threading, "active_count", lambda: len(threading.enumerate()) - running + 1)
    monkeypatch.setattr(parallel, "runnable_elsewhere", lambda: 0)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.delenv("DERIVLS_NO_FORK", raising=False)
    assert not parallel.forks_here(parallel.MIN_CHUNKS - 1)
    if os.name == "posix" and hasattr(os, "fork") and os.uname().sysname == "Linux":
        assert parallel.forks_here(parallel.MIN_CHUNKS)
    monkeypatch.setenv("DERIVLS_NO_FORK", "1")
    assert not parallel.forks_here(parallel.MIN_CHUNKS)
    monkeypatch.delenv("DERIVLS_NO_FORK")
    stop = threading.Event()
    worker = threading.Thread(target=stop.wait)
    worker.start()
    try:
        assert not parallel.forks_here(parallel.MIN_CHUNKS)
    finally:
        stop.set()
        worker.join()


def test_it_does_not_fork_when_the_other_cpus_are_busy(monkeypatch):
    monkeypatch.delenv("DERIVLS_NO_FORK", raising=False)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1}, raising=False)
    monkeypatch.setattr(parallel, "runnable_elsewhere", lambda: 1)
    assert not parallel.forks_here(parallel.MIN_CHUNKS)
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0}, raising=False)
    monkeypatch.setattr(parallel, "runnable_elsewhere", lambda: 0)
    assert not parallel.forks_here(parallel.MIN_CHUNKS)


def test_a_pass_with_few_uncached_entries_does_not_fork(real, monkeypatch):
    index, text, native = real
    analyzer = DocumentAnalyzer(index, native)
    analyzer.analyse(text)
    before = len(_children)
    monkeypatch.setattr(parallel, "forks_here", lambda pending: True)
    monkeypatch.setattr(os, "fork", recorded_fork)
    again = analyzer.analyse(text + "\n")  # a new text: only its last entry is not cached
    assert len(_children) == before
    assert [(d.span, d.code) for d in again.diagnostics] == [
        (d.span, d.code) for d in DocumentAnalyzer(index, native).analyse(text + "\n").diagnostics
    ]


def test_with_sigchld_ignored_the_answer_still_arrives(real, monkeypatch):
    import signal

    alone = _analyse(real, monkeypatch, fork=False)
    previous = signal.signal(signal.SIGCHLD, signal.SIG_IGN)  # the system reaps children: waitpid fails
    try:
        forked = _analyse(real, monkeypatch, fork=True)
    finally:
        signal.signal(signal.SIGCHLD, previous)
    assert _summary(forked) == _summary(alone)
    assert _no_child_left()


class _HoldsEverything:
    """An entry cache that says it holds every chunk (and then serves none: the parent computes them)."""

    def holds(self, text: str) -> bool:
        return True

    def get(self, text: str) -> None:
        return None

    def passed(self, chunks) -> None:
        pass


def test_chunks_the_entry_cache_holds_are_not_sent_to_a_second_process(real, monkeypatch):
    index, text, native = real
    forked: list[int] = []
    monkeypatch.setattr(parallel, "forks_here", lambda pending: True)
    monkeypatch.setattr(os, "fork", lambda: forked.append(1) or (_ for _ in ()).throw(OSError("no fork")))
    DocumentAnalyzer(index, native, store=_HoldsEverything()).analyse(text)  # type: ignore[arg-type]
    assert forked == []
    DocumentAnalyzer(index, native).analyse(text)  # the same pass without the cache would fork
    assert forked == [1]
