"""Issue 51, the server's wiring of FunctionsManual.cpp (derivls.server.documents.manual_runs) on a stand-in server:
which file a derivatives.yaml uses, what a save starts, which results it drops, and what is published for the
FunctionsManual.cpp buffer. The run itself (a real server, torch) is tests/lsp/test_gradcheck_manual.py's."""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from pathlib import Path
from typing import Any

import pytest
from pygls.uris import from_fs_path

from derivls.base.diagnostics import Diagnostic, Severity, Span
from derivls.codes.gradcheck import GRADCHECK_MISMATCH
from derivls.gradcheck.job import GradcheckRuns
from derivls.jobs.entries import entry_key
from derivls.server.documents import gradcheck_runs, manual_runs
from derivls.server.documents.positions import LineIndex
from derivls.server.documents.settings import Settings
from tests.unit.ide_support import analyse
from tests.unit.test_manual_saves import DERIVATIVES, MANUAL


@dataclass
class Doc:
    uri: str
    path: Path
    analysis: Any
    lines: LineIndex
    files: Any = None


@dataclass
class Server:
    """What manual_runs and gradcheck_runs use of the server."""

    settings: Settings
    root: Path
    docs: dict[str, Doc] = field(default_factory=dict)
    encoding: str = "utf-16"
    published: dict[str, list[Any]] = field(default_factory=dict)  # uri -> the last diagnostics published
    republished: list[str] = field(default_factory=list)  # derivatives.yaml documents published again

    def workspace_roots(self) -> list[Path]:
        return [self.root]

    def text_document_publish_diagnostics(self, params: Any) -> None:
        self.published[params.uri] = params.diagnostics

    def publish(self, doc: Doc) -> None:
        self.republished.append(doc.uri)


def checkout(tmp_path: Path) -> tuple[Path, Path]:
    derivatives = tmp_path / "tools" / "autograd" / "derivatives.yaml"
    manual = tmp_path / "torch" / "csrc" / "autograd" / "FunctionsManual.cpp"
    for path, text in ((derivatives, DERIVATIVES), (manual, MANUAL)):
        path.parent.mkdir(parents=True)
        path.write_text(text, encoding="utf-8")
    return derivatives, manual


def server(tmp_path: Path, derivatives: Path, **settings: Any) -> Server:
    ls = Server(Settings(gradcheck_on_save=True, trusted_workspace=True, **settings), tmp_path)
    uri = from_fs_path(str(derivatives))
    ls.docs[uri] = Doc(uri, derivatives, analyse(DERIVATIVES), LineIndex(DERIVATIVES, "utf-16"))
    return ls


@pytest.fixture
def started(monkeypatch):
    calls: list[tuple[str, list[int], str | None]] = []

    def start_entries(ls: Any, uri: str, doc: Any, lines: list[int], manual: str | None = None) -> bool:
        calls.append((uri, lines, manual))
        return True

    monkeypatch.setattr(gradcheck_runs, "start_entries", start_entries)
    return calls


def test_a_derivatives_yaml_uses_its_checkouts_functions_manual_or_the_setting(tmp_path):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    doc = next(iter(ls.docs.values()))
    assert manual_runs.manual_path(ls, doc) == str(manual.resolve())
    other = tmp_path / "elsewhere" / "my_manual.cpp"
    ls.settings = replace(ls.settings, functions_manual=other)
    assert manual_runs.manual_path(ls, doc) == str(other)
    assert manual_runs.is_manual(ls, from_fs_path(str(other)))
    assert manual_runs.is_manual(ls, from_fs_path(str(manual)))
    assert not manual_runs.is_manual(ls, from_fs_path(str(derivatives)))


def test_saving_a_changed_helper_checks_the_entries_that_call_it_with_the_file_named(tmp_path, started):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    uri, doc = next(iter(ls.docs.items()))
    manual_runs.seen(ls, doc)
    manual.write_text(MANUAL.replace("return grad * k;", "return grad * -k;"), encoding="utf-8")
    manual_runs.on_save(ls, from_fs_path(str(manual)))
    acos, abs_ = doc.analysis.entries[0].line, doc.analysis.entries[2].line
    assert started == [(uri, [acos, abs_], str(manual.resolve()))]
    manual_runs.files_changed(ls, [str(manual)])  # the client's watcher after the save: nothing changed since
    assert len(started) == 1


def test_a_save_that_changes_no_helper_or_an_uncalled_one_starts_nothing(tmp_path, started):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    manual_runs.seen(ls, next(iter(ls.docs.values())))
    manual.write_text(MANUAL.replace("// acos's backward", "// the backward of acos"), encoding="utf-8")
    manual_runs.on_save(ls, from_fs_path(str(manual)))
    manual.write_text(MANUAL.replace("return x;", "return -x;"), encoding="utf-8")
    manual_runs.files_changed(ls, [str(manual)])  # changed on disk, not open
    assert started == []


def test_without_gradcheck_on_save_or_trust_a_save_starts_nothing(tmp_path, started):
    derivatives, manual = checkout(tmp_path)
    for settings in (Settings(trusted_workspace=True), Settings(gradcheck_on_save=True)):
        ls = server(tmp_path, derivatives)
        ls.settings = settings
        manual_runs.seen(ls, next(iter(ls.docs.values())))
        manual.write_text(MANUAL.replace("return grad * k;", f"return grad * k * {id(ls)};"), encoding="utf-8")
        manual_runs.on_save(ls, from_fs_path(str(manual)))
    assert started == []


def failed(ls: Server, uri: str, placed: Any) -> None:
    """A gradcheck-mismatch on the entry's formula line (the line after `- name:`), as a finished run leaves it."""
    runs = ls._derivls_gradcheck = GradcheckRuns()  # type: ignore[attr-defined]
    d = Diagnostic(Span(1, 8, 1, 20), Severity.ERROR, GRADCHECK_MISMATCH, "gradcheck: the backward formula is wrong")
    runs._state(uri).done[entry_key(placed)] = [d]


def test_a_failing_caller_is_published_on_the_edited_helpers_line_and_dropped_when_the_helper_is_saved_again(
    tmp_path, started
):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    uri, doc = next(iter(ls.docs.items()))
    manual_uri = from_fs_path(str(manual))
    manual_runs.opened(ls, manual_uri, MANUAL)
    wrong = MANUAL.replace("return grad * k;", "return grad * -k;")
    manual.write_text(wrong, encoding="utf-8")
    manual_runs.on_save(ls, manual_uri)
    assert ls.published[manual_uri] == []
    failed(ls, uri, doc.analysis.entries[0])  # acos failed: it calls acos_grad, which calls the edited scale_grad
    manual_runs.publish(ls)
    (shown,) = ls.published[manual_uri]
    line = wrong.splitlines().index("Tensor scale_grad(const Tensor& grad, double k) {")
    assert (shown.range.start.line, shown.range.start.character) == (line, 7)
    assert shown.source == "derivls-gradcheck" and shown.code == GRADCHECK_MISMATCH
    assert "`acos(Tensor self) -> Tensor` calls the edited `scale_grad`" in shown.message
    assert shown.related_information[0].location.uri == uri
    assert shown.related_information[0].location.range.start.line == doc.analysis.entries[0].line + 1
    manual.write_text(MANUAL.replace("return grad * k;", "return (grad * k);"), encoding="utf-8")  # fixed
    manual_runs.on_save(ls, manual_uri)
    assert ls.published[manual_uri] == []  # acos's result was of the helper before: dropped, checked again
    assert gradcheck_runs.diagnostics_now(ls, doc) == []
    assert uri in ls.republished and len(started) == 2


def test_closing_the_buffer_clears_what_was_published_for_it(tmp_path, started):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    uri, doc = next(iter(ls.docs.items()))
    manual_uri = from_fs_path(str(manual))
    manual_runs.opened(ls, manual_uri, MANUAL)
    manual.write_text(MANUAL.replace("return grad * k;", "return grad * -k;"), encoding="utf-8")
    manual_runs.on_save(ls, manual_uri)
    failed(ls, uri, doc.analysis.entries[0])
    manual_runs.publish(ls)
    assert ls.published[manual_uri]
    manual_runs.closed(ls, manual_uri)
    assert ls.published[manual_uri] == []


def compile_error(line: int) -> dict[str, Any]:
    """A compile-error on `line` of FunctionsManual.cpp, as the worker's answer gives it (its "manual")."""
    from derivls.codes.compile import COMPILE_ERROR
    from derivls.jobs.wire import diagnostic_to_json

    d = Diagnostic(Span(line, 2, line, 30), Severity.ERROR, COMPILE_ERROR, "scale_grad: 'kk' was not declared")
    return diagnostic_to_json(d, 0)


def test_a_helper_that_does_not_compile_shows_the_compilers_error_on_its_line_until_a_save_changes_helpers(
    tmp_path, started
):
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    manual_uri = from_fs_path(str(manual))
    manual_runs.opened(ls, manual_uri, MANUAL)
    runs = ls._derivls_gradcheck = GradcheckRuns()  # type: ignore[attr-defined]
    line = MANUAL.splitlines().index("  return grad * k;")
    path = str(manual.resolve())
    # (the helper left out of the build: nothing compiled, its error reported)
    runs.record_manual({"path": path, "edited": ["scale_grad"], "compiled": [], "diagnostics": [compile_error(line)]})
    manual_runs.publish(ls)
    (shown,) = ls.published[manual_uri]
    assert (shown.range.start.line, shown.code, shown.source) == (line, "compile-error", "derivls-gradcheck")
    runs.record_manual({"path": path, "edited": ["scale_grad"], "compiled": [], "diagnostics": []})
    manual_runs.publish(ls)
    assert len(ls.published[manual_uri]) == 1  # (a run that compiled no helper leaves the error)
    manual.write_text(MANUAL.replace("return grad * k;", "return grad * k * 1;"), encoding="utf-8")
    manual_runs.on_save(ls, manual_uri)
    assert ls.published[manual_uri] == []


def test_a_helper_the_run_found_edited_against_its_base_carries_its_callers_failure(tmp_path, started):
    """A helper edited before the server read the file: the run's base (torch's commit) says it is edited."""
    derivatives, manual = checkout(tmp_path)
    ls = server(tmp_path, derivatives)
    uri, doc = next(iter(ls.docs.items()))
    manual_uri = from_fs_path(str(manual))
    manual_runs.opened(ls, manual_uri, MANUAL)
    failed(ls, uri, doc.analysis.entries[0])
    manual_runs.publish(ls)
    assert ls.published[manual_uri] == []  # (nothing edited since the server read it)
    runs = ls._derivls_gradcheck  # type: ignore[attr-defined]
    path = str(manual.resolve())
    no_base = "no base (torch's commit is not known): every helper the entries call"
    runs.record_manual({"path": path, "base": no_base, "edited": ["acos_grad", "scale_grad"], "compiled": ["x"]})
    manual_runs.publish(ls)
    assert ls.published[manual_uri] == []  # (without a base every helper is "edited": that says nothing)
    runs.record_manual(
        {"path": path, "base": "torch's commit 0123456789ab", "edited": ["acos_grad"], "compiled": ["x"]}
    )
    manual_runs.publish(ls)
    (shown,) = ls.published[manual_uri]
    assert shown.range.start.line == MANUAL.splitlines().index(
        "Tensor acos_grad(const Tensor& grad, const Tensor& self) {"
    )


def test_a_failures_related_place_in_functions_manual_comes_through_the_workers_json():
    """The run places a failing formula's helper as related information (its line in FunctionsManual.cpp): the
    editor keeps it (a place in another file, not moved with the entry)."""
    from derivls.base.diagnostics import Related
    from derivls.gradcheck.job import diagnostic_from_json
    from derivls.jobs.wire import diagnostic_to_json

    d = Diagnostic(
        Span(43, 8, 43, 30),
        Severity.ERROR,
        GRADCHECK_MISMATCH,
        "gradcheck: wrong",
        (Related("/w/torch/csrc/autograd/FunctionsManual.cpp", 120, "calls scale_grad, compiled from this file"),),
    )
    back = diagnostic_from_json(diagnostic_to_json(d, 42))
    assert back.span == Span(1, 8, 1, 30) and back.related == d.related
    assert back.shifted(42).related == d.related


def test_go_to_definition_and_completion_read_the_functions_manual_setting_first(tmp_path):
    """Outside a checkout the setting's FunctionsManual.cpp is where a helper call's definition is."""
    from derivls.server.documents.indexes import manual_files

    lone = tmp_path / "lone" / "derivatives.yaml"
    lone.parent.mkdir()
    lone.write_text(DERIVATIVES, encoding="utf-8")
    mine = tmp_path / "mine" / "FunctionsManual.cpp"
    mine.parent.mkdir()
    mine.write_text(MANUAL, encoding="utf-8")
    ls = server(tmp_path / "lone", lone)
    doc = next(iter(ls.docs.values()))
    assert manual_files(ls, doc) == []  # type: ignore[arg-type]
    ls.settings = replace(ls.settings, functions_manual=mine)
    assert manual_files(ls, doc) == [mine]  # type: ignore[arg-type]
    ls.settings = replace(ls.settings, functions_manual=tmp_path / "missing.cpp")
    assert manual_files(ls, doc) == []  # type: ignore[arg-type]
