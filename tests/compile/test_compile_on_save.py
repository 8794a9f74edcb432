"""compileOnSave: a save compiles the edited entries in the background; the errors land on the formula.

Drives the LSP wiring (derivls.server.documents.compile_on_save) with a stand-in for the server object:
its two hooks, the progress it reports, and the diagnostics it merges into a publish.
"""

from __future__ import annotations

import asyncio
import time
from concurrent.futures import Future
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

from derivls.aten.native import NativeIndex
from derivls.base.discovery import NativeFiles
from derivls.compile.job import CompileOnSave
from derivls.derivatives.loader import DocumentAnalyzer

pytestmark = pytest.mark.compile

SHIPPED = "  self: mul_tensor_backward(grad, other, self.scalar_type())\n"
MISTAKEN = "  self: mul_tensor_backward(grad, other)\n"


@pytest.fixture(scope="module")
def analyzer(real_files):
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    return DocumentAnalyzer(index, str(real_files.native))


def _position(text: str, needle: str) -> tuple[int, int]:
    offset = text.index(needle)
    return text.count("\n", 0, offset), offset - (text.rfind("\n", 0, offset) + 1)


def test_a_save_compiles_the_changed_entry_and_its_error_lands_on_the_formula(real_files, analyzer, tmp_path):
    original = real_files.derivatives.read_text(encoding="utf-8")
    engine = CompileOnSave()
    engine.on_open("u", analyzer.analyse(original))
    seeded = original.replace(SHIPPED, MISTAKEN, 1)
    analysis = analyzer.analyse(seeded)
    started = time.monotonic()
    job = engine.on_save(
        "u", str(real_files.derivatives), seeded, analysis, str(real_files.native), str(real_files.tags)
    )
    assert job is not None and time.monotonic() - started < 1.0
    assert job.request["lines"] == [_position(seeded, "- name: mul.Tensor")[0]]  # only the edited entry
    assert job.wait(1800) is not None
    assert engine.collect("u").error is None
    line, column = _position(seeded, MISTAKEN.strip())
    column += len("self: ")
    diagnostics = engine.diagnostics("u", analysis)
    assert [(d.span.line, d.span.column, d.span.end_column) for d in diagnostics] == [
        (line, column, column + len("mul_tensor_backward"))
    ]
    # a line inserted above: the error moves with its entry
    moved = analyzer.analyse("# a comment\n" + seeded)
    assert [d.span.line for d in engine.diagnostics("u", moved)] == [line + 1]
    # the entry edited: its compile errors are dropped at once
    edited = analyzer.analyse(seeded.replace(MISTAKEN, "  self: mul_tensor_backward(grad, other, 1)\n", 1))
    assert engine.diagnostics("u", edited) == []
    # saved again unchanged: nothing to compile
    assert engine.on_save("u", "p", seeded, analysis, str(real_files.native), None) is None


@dataclass
class _Settings:
    compile_on_save: bool = True
    profile: str = "auto"


@dataclass
class _Doc:
    uri: str
    path: Path
    text: str
    analysis: Any
    lines: Any
    files: NativeFiles


@dataclass
class _Progress:
    sent: list[tuple[str, Any]] = field(default_factory=list)
    tokens: dict[str, Future] = field(default_factory=dict)

    async def create_async(self, token: str) -> None:
        self.tokens[token] = Future()

    def begin(self, token: str, value: Any) -> None:
        self.sent.append(("begin", value))

    def report(self, token: str, value: Any) -> None:
        self.sent.append(("report", value))

    def end(self, token: str, value: Any) -> None:
        self.sent.append(("end", value))


class _Server:
    def __init__(self, doc: _Doc) -> None:
        self.settings = _Settings()
        self.docs = {doc.uri: doc}
        self.work_done_progress = _Progress()
        self.published: list[list[Any]] = []

    def current(self, uri: str) -> _Doc | None:
        return self.docs.get(uri)

    def publish(self, doc: _Doc) -> None:
        from derivls.server.documents import compile_on_save

        self.published.append(compile_on_save.lsp_diagnostics(self, doc))

    def window_show_message(self, params: Any) -> None:
        raise AssertionError(params.message)


async def test_the_server_wiring_reports_progress_and_publishes_the_compiler_diagnostic(real_files, analyzer):
    from derivls.server.documents import compile_on_save
    from derivls.server.documents.positions import LineIndex

    original = real_files.derivatives.read_text(encoding="utf-8")
    seeded = original.replace(SHIPPED, MISTAKEN, 1)
    files = NativeFiles(real_files.native, real_files.tags, ())
    doc = _Doc("file:///d.yaml", real_files.derivatives, original, analyzer.analyse(original), None, files)
    doc.lines = LineIndex(original, "utf-16")
    ls = _Server(doc)
    compile_on_save.on_open(ls, doc.uri)
    doc.text, doc.analysis, doc.lines = seeded, analyzer.analyse(seeded), LineIndex(seeded, "utf-16")
    started = time.monotonic()
    compile_on_save.on_save(ls, doc.uri)
    assert time.monotonic() - started < 1.0
    while not ls.published:
        await asyncio.sleep(0.5)
    [published] = ls.published
    line, column = _position(seeded, MISTAKEN.strip())
    assert [(d.range.start.line, d.range.start.character, d.source) for d in published] == [
        (line, column + len("self: "), "derivls-compile")
    ]
    kinds = [kind for kind, _ in ls.work_done_progress.sent]
    assert kinds[0] == "begin" and kinds[-1] == "end"
