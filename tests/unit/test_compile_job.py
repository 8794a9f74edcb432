"""CompileOnSave's job: started on save without blocking, one at a time, cancellable (no real compile)."""

from __future__ import annotations

import time

import pytest

from derivls.compile.job import CompileOnSave
from derivls.project.analyse import analyse_path


@pytest.fixture
def slow_compiler(tmp_path, monkeypatch):
    """A 'compiler' that answers --version and then takes 60 s for anything else."""
    script = tmp_path / "slow-cxx"
    script.write_text('#!/bin/sh\nif [ "$1" = "--version" ]; then echo "slow 1.0"; exit 0; fi\nsleep 60\n')
    script.chmod(0o755)
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    return str(script)


@pytest.fixture(scope="module")
def analysed(real_files):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags, "torchgen")
    return analysis, real_files.derivatives.read_text(encoding="utf-8")


def _save(engine, real_files, analysed):
    analysis, text = analysed
    return engine.on_save(
        "file:///d.yaml", str(real_files.derivatives), text, analysis, str(real_files.native), str(real_files.tags)
    )


def test_a_save_starts_a_job_at_once_and_cancel_ends_it_and_its_compilers(real_files, analysed, slow_compiler):
    engine = CompileOnSave(cxx=slow_compiler)
    started = time.monotonic()
    job = _save(engine, real_files, analysed)
    assert job is not None and time.monotonic() - started < 1.0  # never blocks the caller
    time.sleep(3)  # the worker is in the (slow) compiler by now
    assert engine.running("file:///d.yaml") is job
    cancelled_at = time.monotonic()
    job.cancel()
    result = job.wait(15)
    assert result is not None and result.cancelled and time.monotonic() - cancelled_at < 15
    assert engine.collect("file:///d.yaml").cancelled
    assert engine.diagnostics("file:///d.yaml", analysed[0]) == []


def test_a_second_save_cancels_the_running_job(real_files, analysed, slow_compiler):
    engine = CompileOnSave(cxx=slow_compiler)
    first = _save(engine, real_files, analysed)
    second = _save(engine, real_files, analysed)
    assert first is not second
    assert first.wait(15) is not None and first.poll().cancelled
    assert engine.running("file:///d.yaml") is second
    second.cancel()
    assert second.wait(15).cancelled


def test_a_missing_compiler_is_the_jobs_one_line_error(real_files, analysed, tmp_path, monkeypatch):
    monkeypatch.setenv("XDG_CACHE_HOME", str(tmp_path / "cache"))
    engine = CompileOnSave(cxx=str(tmp_path / "no-cxx"))
    job = _save(engine, real_files, analysed)
    result = job.wait(60)
    assert result is not None and "compiler not found" in (result.error or "")
    engine.collect("file:///d.yaml")
    assert engine.last_error == result.error


def _worker_profile(real_files, monkeypatch, **settings):
    """The rules the compile worker analyses the file by (its compile step replaced by a recorder)."""
    import io
    import types

    import derivls.cli.compile
    import derivls.compile.document
    from derivls.compile import worker

    seen = []

    def record(path, analysis, **kwargs):
        seen.append(analysis.profile)
        return types.SimpleNamespace(by_entry={})

    monkeypatch.setattr(derivls.compile.document, "compile_file", record)
    request = {
        "path": str(real_files.derivatives),
        "text": real_files.derivatives.read_text(encoding="utf-8"),
        "native": str(real_files.native),
        "tags": str(real_files.tags),
        "lines": [],
        **settings,
    }
    out = io.StringIO()
    code = worker.run(request, out)
    return code, seen, out.getvalue()


def test_the_compile_worker_reads_the_file_by_the_torch_version_setting(real_files, monkeypatch):
    code, seen, _ = _worker_profile(real_files, monkeypatch, torch_version="2.4")
    assert code == 0 and [p.release for p in seen] == ["2.4"]
    code, seen, _ = _worker_profile(real_files, monkeypatch)
    assert code == 0 and seen[0].release is not None and seen[0].release != "2.4"  # found from the files


def test_the_compile_worker_reports_a_bad_torch_version_in_one_line(real_files, monkeypatch):
    code, seen, out = _worker_profile(real_files, monkeypatch, torch_version="banana")
    assert code == 2 and not seen
    assert "'banana' is not a torch version" in out and out.count("\n") == 1


def test_a_workers_verdict_on_an_entry_stays_until_the_entry_changes(real_files):
    # issue 36, item 4: the lens shows the last gradcheck verdict of each entry, dropped when the entry changes
    from types import SimpleNamespace

    from derivls.jobs.background import EntryJobs, JobResult, verdict_text
    from derivls.jobs.entries import entry_key
    from derivls.project.opener import open_project

    analyzer = open_project(real_files.derivatives, real_files.native, real_files.tags, "torchgen").analyzer
    text = real_files.derivatives.read_text(encoding="utf-8")

    def acos_of(source: str):
        return next(p for p in analyzer.analyse(source).entries if p.line == text.splitlines().index(ACOS_NAME))

    acos = acos_of(text)
    finished = SimpleNamespace(
        done=True, poll=lambda: JobResult(verdicts={entry_key(acos): verdict_text("passed", 8.14)})
    )
    runs = EntryJobs(lambda request: finished)
    runs.launch("file:///d.yaml", analyzer.analyse(text), [acos.line], {})
    runs.collect("file:///d.yaml")
    said = runs.verdict("file:///d.yaml", acos)
    assert said is not None and said.startswith("passed at ") and said.endswith(", 8.1 s")
    edited = text.replace("  self: grad * -((-self * self + 1).rsqrt()).conj()", "  self: -grad", 1)
    assert runs.verdict("file:///d.yaml", acos_of(edited)) is None


ACOS_NAME = "- name: acos(Tensor self) -> Tensor"
