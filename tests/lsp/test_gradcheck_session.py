"""Issue 36's end to end: gradcheck on save through the live session, against the real server (`python -m
derivls` over stdio, pytest-lsp), a trusted workspace with `gradcheckOnSave`.

A copy of the installed torch 2.13 wheel's files whose derivatives.yaml holds acos only. Opening it starts the
session in the background (`$/progress` while it starts; its JIT made ready: cppyy is in the `gradcheck` extra);
then acos's formula is saved three times (right, its sign dropped, right again): passed / failed (a
gradcheck-mismatch on the formula's line, with the repair that passes offered as a quick fix) / passed, each run
in the same session process and each formula defined by its JIT (no g++ build). The session is killed (SIGKILL): it is restarted (with `$/progress` again), is sent the
reach index, and the next save is answered by the new process. The server's exit leaves no process of either session's group.

Each formula carries a factor `(n / n)` (= 1) with an `n` new at each run of the test, so every save is an edit
the extension cache has not seen: the session's JIT compiles it, as it would compile a user's edit. The time from each save to
its diagnostics is printed (`-s`); nothing asserts it (the machine is shared). Slow (a compiler, torch's import):
`python -m pytest -m gradcheck tests/lsp/test_gradcheck_session.py -s`.
"""

from __future__ import annotations

import asyncio
import os
import random
import signal
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from derivls.codes.gradcheck import GRADCHECK_MISMATCH
from derivls.compile.toolchain import cache_root
from derivls.gradcheck.reach import index_path
from derivls.gradcheck.runner import torch_folder
from derivls.ide.gradcheck import RUN_GRADCHECK
from tests.gradcheck.conftest import make_wheel_copy
from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize, position_of, status

pytestmark = pytest.mark.gradcheck

SOURCE = "derivls-gradcheck"
ACOS = "- name: acos(Tensor self) -> Tensor"
TIMEOUT = 900.0  # a save's run: a cold precompiled header takes minutes on a loaded machine


def formula(n: int, sign: str = "-") -> str:
    """acos's backward formula as shipped (sign "-") or with its sign dropped (""), times (n / n)."""
    return f"self: grad * {sign}((-self * self + 1).rsqrt()).conj() * ({n} / {n})"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    lsp_client.shut_down = False  # type: ignore[attr-defined]
    lsp_client.progress_times = {}  # type: ignore[attr-defined]  # token -> [(time.monotonic(), message)]
    features = lsp_client.protocol.fm.features
    recorded = features[types.PROGRESS]  # pytest-lsp's: it keeps client.progress_reports

    def timed(params: types.ProgressParams) -> Any:
        value = params.value if isinstance(params.value, dict) else {}
        message = value.get("message") or value.get("title") or value.get("kind", "")
        lsp_client.progress_times.setdefault(str(params.token), []).append((time.monotonic(), message))  # type: ignore[attr-defined]
        return recorded(params)

    features[types.PROGRESS] = timed
    yield
    if not lsp_client.shut_down:  # type: ignore[attr-defined]
        await lsp_client.shutdown_session()


def group_members(group: int) -> list[int]:
    """The live (not zombie) processes of process group `group`."""
    found = []
    for entry in Path("/proc").iterdir():
        if not entry.name.isdigit():
            continue
        try:
            stat = (entry / "stat").read_text()
        except OSError:
            continue
        fields = stat[stat.rindex(")") + 2 :].split()  # state, ppid, pgrp, ...
        if fields[0] != "Z" and int(fields[2]) == group:
            found.append(int(entry.name))
    return found


async def session_status(client: LanguageClient) -> dict[str, Any]:
    found = (await status(client)).gradcheckSession
    assert found is not None, "the server has no gradcheck session"
    got = {k: getattr(found, k) for k in ("state", "pid", "starts", "runs", "torchVersion", "error", "jit", "jitRuns")}
    jit = got["jit"]
    got["jit"] = jit if isinstance(jit, dict) else {k: getattr(jit, k) for k in dir(jit) if not k.startswith("_")}
    return got


async def warm_session(client: LanguageClient, not_pid: int | None = None, timeout: float = 300.0) -> dict[str, Any]:
    """The session's status once it is ready (with another pid than `not_pid`)."""
    deadline = time.monotonic() + timeout
    while True:
        found = await session_status(client)
        if found["state"] == "ready" and found["pid"] not in (None, not_pid):
            return found
        assert found["state"] != "failed", found["error"]
        assert time.monotonic() < deadline, f"the gradcheck session is not ready within {timeout} s: {found}"
        await asyncio.sleep(0.1)


async def session_progress(client: LanguageClient, starts: int) -> list[list[Any]]:
    """The `$/progress` values of the session's first `starts` starts, once each has ended (a token each)."""
    deadline = time.monotonic() + 30
    while True:
        found = [list(v) for t, v in client.progress_reports.items() if str(t).startswith("derivls-session-")]
        ended = [v for v in found if v and isinstance(v[-1], types.WorkDoneProgressEnd)]
        if len(ended) >= starts or time.monotonic() > deadline:
            return found
        await asyncio.sleep(0.05)


def run_tokens(client: LanguageClient) -> set[str]:
    return {str(t) for t in client.progress_reports if str(t).startswith("derivls-gradcheck-")}


class Editor:
    """acos's formula edited and saved in the open document; each save's run waited for and timed."""

    def __init__(self, client: LanguageClient, docs: Documents, doc: str, current: str) -> None:
        self.client, self.docs, self.doc, self.current = client, docs, doc, current
        self.times: list[tuple[str, float]] = []

    async def lens_title(self) -> str:
        lenses = await self.client.text_document_code_lens_async(
            types.CodeLensParams(text_document=types.TextDocumentIdentifier(uri=self.doc))
        )
        line = position_of(self.docs.texts[self.doc], ACOS).line
        (found,) = [
            x for x in lenses if x.command and x.command.command == RUN_GRADCHECK and x.range.start.line == line
        ]
        return found.command.title

    async def save(self, text: str, what: str) -> tuple[list[types.Diagnostic], list[Any]]:
        """Edit the formula to `text`, save, and wait for the run's diagnostics: its gradcheck diagnostics and the
        run's `$/progress` values."""
        start = position_of(self.docs.texts[self.doc], self.current)
        end = position_of(self.docs.texts[self.doc], self.current, offset=len(self.current))
        self.docs.edit(self.doc, start.line, start.character, end.line, end.character, text)
        self.current = text
        await diagnostics(self.client, self.doc, timeout=60)  # (the edit's: the entry's verdict is gone)
        assert await self.lens_title() == "Run gradcheck"
        before = run_tokens(self.client)
        self.client.diagnostics.pop(self.doc, None)
        started = time.monotonic()
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=self.doc))
        )
        while True:  # the run's progress ended, and the document published again with its results
            new = run_tokens(self.client) - before
            ended = [
                t for t in new if any(isinstance(v, types.WorkDoneProgressEnd) for v in self.client.progress_reports[t])
            ]
            if ended and self.doc in self.client.diagnostics:
                break
            assert time.monotonic() - started < TIMEOUT, f"{what}: no gradcheck result within {TIMEOUT} s"
            await asyncio.sleep(0.02)
        took = time.monotonic() - started
        self.times.append((what, took))
        load = Path("/proc/loadavg").read_text().split()[0]
        (token,) = ended
        steps = ", ".join(f"{message} +{at - started:.1f}" for at, message in self.client.progress_times.get(token, []))
        print(f"save -> gradcheck diagnostics, {what}: {took:.1f} s (load {load}) [{steps}]")
        print(f"  lens: {await self.lens_title()}")
        found = [d for d in self.client.diagnostics[self.doc] if d.source == SOURCE]
        return found, list(self.client.progress_reports[token])


async def test_a_session_checks_three_saves_survives_a_kill_and_ends_with_the_server(
    client: LanguageClient, real_files, tmp_path: Path
):
    site = tmp_path / "site-packages"
    path = make_wheel_copy(real_files, site)
    n = random.SystemRandom().randrange(10**6, 10**7)  # (a new edit at each run of the test: see the module's doc)
    opened = formula(n)
    path.write_text(f"{ACOS}\n  {opened}\n  result: auto_element_wise\n", encoding="utf-8")
    options = {"derivls": {"trustedWorkspace": True, "gradcheckOnSave": True}}
    await initialize(client, site, options=options)
    docs = Documents(client)
    doc = docs.open(path)
    await diagnostics(client, doc, timeout=120)

    # opened with gradcheckOnSave in a trusted workspace: the session starts in the background, with $/progress
    started = time.monotonic()
    first = await warm_session(client)
    print(f"session ready {time.monotonic() - started:.1f} s after the document's diagnostics")
    assert first["starts"] == 1 and first["runs"] == 0 and first["torchVersion"].startswith("2.13")
    assert first["jit"]["ready"], first["jit"]
    # the reach index was made (or read) while it started, and kept: no save waits for it
    index = index_path(cache_root(), torch_folder(sys.executable))  # (the server's: the same cache folder)
    assert index is not None and index.is_file()
    (values,) = await session_progress(client, 1)
    assert (
        isinstance(values[0], types.WorkDoneProgressBegin)
        and values[0].title == "derivls: starting the gradcheck session"
    )
    assert isinstance(values[-1], types.WorkDoneProgressEnd) and values[-1].message.startswith("ready in ")
    print(f"session start: {values[-1].message}")

    editor = Editor(client, docs, doc, opened)

    # 1. right: passed
    found, _ = await editor.save(formula(n + 1), "right")
    assert found == []
    assert (await editor.lens_title()).startswith("Gradcheck passed at ")

    # 2. its sign dropped: failed, on the formula's line
    dropped = formula(n + 2, sign="")
    found, _ = await editor.save(dropped, "sign dropped")
    where = position_of(docs.texts[doc], dropped, offset=len("self: "))
    mismatches = [d for d in found if d.code == str(GRADCHECK_MISMATCH)]
    assert (where.line, where.character) in [(d.range.start.line, d.range.start.character) for d in mismatches]
    title = await editor.lens_title()
    assert title.startswith("Gradcheck failed at ") and title.endswith(" s · run again"), title
    actions = await client.text_document_code_action_async(
        types.CodeActionParams(
            text_document=types.TextDocumentIdentifier(uri=doc),
            range=types.Range(start=where, end=where),
            context=types.CodeActionContext(diagnostics=mismatches),
        )
    )
    repairs = [a for a in actions or [] if isinstance(a, types.CodeAction) and a.title.startswith("Replace with")]
    assert len(repairs) == 1 and " (passes gradcheck on " in repairs[0].title, actions
    print(f"  repair offered: {repairs[0].title}")

    # 3. right again: passed
    found, _ = await editor.save(formula(n + 3), "right again")
    assert found == []
    assert (await editor.lens_title()).startswith("Gradcheck passed at ")

    # the three runs in one session process
    after = await session_status(client)
    assert (after["pid"], after["starts"], after["runs"]) == (first["pid"], 1, 3)
    assert after["jitRuns"] == 3, after  # (each save's formulas defined by the JIT: no g++ build)

    # killed: restarted (with $/progress), and the next save is answered by the new process, which is sent the
    # kept reach index while it starts rather than making it again
    made = index.stat().st_mtime_ns
    os.kill(first["pid"], signal.SIGKILL)
    killed = time.monotonic()
    second = await warm_session(client, not_pid=first["pid"])
    print(f"session restarted: ready {time.monotonic() - killed:.1f} s after the SIGKILL")
    assert second["starts"] == 2
    restart = (await session_progress(client, 2))[1]
    assert [type(v) for v in restart] == [types.WorkDoneProgressBegin, types.WorkDoneProgressEnd], restart
    print(f"session restart: {restart[-1].message}")
    found, _ = await editor.save(formula(n + 4), "right, after the restart")
    assert found == []
    assert (await editor.lens_title()).startswith("Gradcheck passed at ")
    after = await session_status(client)
    assert (after["pid"], after["runs"], after["jitRuns"]) == (second["pid"], 4, 4)
    assert index.stat().st_mtime_ns == made  # (a process without the index makes it and the server saves it)

    # the server's exit leaves no process of either session's group
    assert group_members(second["pid"])  # (alive until then: the check below can fail)
    await client.shutdown_session()
    client.shut_down = True  # type: ignore[attr-defined]
    deadline = time.monotonic() + 30
    while (left := group_members(first["pid"]) + group_members(second["pid"])) and time.monotonic() < deadline:
        await asyncio.sleep(0.1)
    assert left == [], f"session processes left after the server's exit: {left}"
    print("save -> diagnostics: " + ", ".join(f"{what} {took:.1f} s" for what, took in editor.times))
