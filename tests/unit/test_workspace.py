"""derivls.project.workspace: the server's LSP-free host of native indexes and analyzers (rust-analyzer's
AnalysisHost). A file's analyzer and set-up problems are made again only when its index or the
profile changed; a file whose index is not loaded waits; new rules drop every index."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.project import opener as project
from derivls.project.workspace import Options, Source, Workspace, build_index

CHECKOUT = Path(__file__).resolve().parents[1] / "fixtures" / "lsp" / "checkout"
DERIVATIVES = CHECKOUT / "tools" / "autograd" / "derivatives.yaml"


def located(host: Workspace) -> Source:
    source = Source(path=DERIVATIVES)
    host.locate(source)
    assert source.key is not None and source.key[0].endswith("native_functions.yaml")
    return source


def loaded(host: Workspace, source: Source, replaces: bool = False) -> None:
    assert source.key is not None
    host.add_index(build_index(source.key, host.next_version(), None, None, False), replaces)


@pytest.fixture
def prepares(monkeypatch: pytest.MonkeyPatch) -> list[int]:
    """Each call into derivls.project.opener for an analyzer and its set-up problems."""
    calls: list[int] = []
    real = project.prepare

    def counted(*args, **kwargs):
        calls.append(1)
        return real(*args, **kwargs)

    monkeypatch.setattr(project, "prepare", counted)
    return calls


def test_a_file_waits_for_its_index_then_is_analysed_once_per_text(prepares: list[int]) -> None:
    host = Workspace()
    source = located(host)
    text = DERIVATIVES.read_text(encoding="utf-8")
    assert host.waiting(source) and host.analyse(source, text) is None and prepares == []
    loaded(host, source)
    analysis = host.analyse(source, text)
    assert analysis is not None and source.analysis is analysis and source.text == text
    assert prepares == [1] and host.analyses == 1 and host.is_current(source, text)
    assert not host.is_current(source, text + "\n")
    host.analyse(source, text + "\n")
    assert prepares == [1] and host.analyses == 2  # the same analyzer: its index and profile did not change


def test_a_rebuilt_index_or_another_profile_makes_the_analyzer_again(prepares: list[int]) -> None:
    host = Workspace()
    source = located(host)
    text = DERIVATIVES.read_text(encoding="utf-8")
    loaded(host, source)
    host.analyse(source, text)
    first = source.analyzer
    loaded(host, source, replaces=True)  # a new version of the same index
    assert not host.is_current(source, text)
    seen: list[str | None] = []
    host.analyse(source, text, lambda old: seen.append(old) or None)
    assert source.analyzer is not first and prepares == [1, 1]
    assert seen == [None]  # a new analyzer is given no edits: it analyses the whole text
    assert host.configure(Options(profile="legacy")) and host.indexes == {}  # new rules: every index dropped
    assert not host.configure(Options(profile="legacy", native_functions=None))  # the same rules: kept
    host.locate(source)
    assert host.waiting(source)
