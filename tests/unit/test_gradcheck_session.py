"""derivls.gradcheck.session with a stand-in child (no torch): start, restart on death, restart above the RSS
bound, stop when idle, and nothing left (process, folder) when its parent is killed -9."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import textwrap
import time
from pathlib import Path

import pytest

from derivls.gradcheck.session import Session, SessionUnavailable

STAND_IN = textwrap.dedent(
    """
    import json, sys
    def emit(o):
        sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
    emit({"event": "torch", "version": "0.0-stand-in"})
    emit({"event": "ready"})
    for line in sys.stdin:
        r = json.loads(line)
        if r["op"] == "quit":
            break
        if r["op"] == "check":
            for u in r["units"]:
                emit({"event": "unit", "id": u, "status": "passed"})
            emit({"event": "done"})
    """
)


def stand_in(tmp_path: Path, **kwargs) -> Session:
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    return Session(sys.executable, command=[sys.executable, "-I", str(script)], **kwargs)


def wait_for(condition, seconds: float = 20.0) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if condition():
            return True
        time.sleep(0.05)
    return False


def alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    status = Path(f"/proc/{pid}/status")
    return not (status.exists() and "zombie" in status.read_text())


def test_a_started_session_is_warm_and_answers_a_check_with_its_events(tmp_path):
    session = stand_in(tmp_path)
    try:
        session.start()
        assert session.ready.wait(20)
        assert session.torch_version == "0.0-stand-in"
        with session.use() as conn:
            conn.send({"op": "check", "units": ["a", "b"]})
            events = list(conn.events(10))
        assert [e.get("id") for e in events] == ["a", "b", None]
        assert events[-1]["event"] == "done"
    finally:
        session.close()


def test_a_session_not_started_is_unavailable_and_a_use_starts_it(tmp_path):
    session = stand_in(tmp_path)
    try:
        with pytest.raises(SessionUnavailable):
            with session.use():
                pass
        assert session.ready.wait(20)  # the failed use started it: warm for the next run
    finally:
        session.close()


def test_a_killed_session_is_restarted_with_a_new_process(tmp_path):
    session = stand_in(tmp_path)
    try:
        session.start()
        assert session.ready.wait(20)
        first = session.pid
        assert first is not None
        os.killpg(first, signal.SIGKILL)
        assert wait_for(lambda: session.warm() and session.pid not in (None, first))
        assert session.starts == 2
    finally:
        session.close()


def test_a_session_above_its_rss_bound_is_restarted_after_the_run(tmp_path):
    session = stand_in(tmp_path, rss_bound=1)  # any process is above one byte
    try:
        session.start()
        assert session.ready.wait(20)
        first = session.pid
        with session.use() as conn:
            conn.send({"op": "check", "units": ["a"]})
            list(conn.events(10))
        assert wait_for(lambda: session.warm() and session.pid not in (None, first))
    finally:
        session.close()


def test_an_idle_session_is_stopped_and_its_folder_removed(tmp_path):
    session = stand_in(tmp_path, idle_seconds=0.3)
    try:
        session.start()
        assert session.ready.wait(20)
        pid, folder = session.pid, session.folder
        assert folder is not None and Path(folder).is_dir()
        assert wait_for(lambda: session.state == "stopped")
        assert pid is not None and wait_for(lambda: not alive(pid))
        assert not Path(folder).exists()
    finally:
        session.close()


def test_the_sessions_guard_runs_isolated_in_its_folder_in_a_session_of_its_own_and_ends_with_the_session(tmp_path):
    session = stand_in(tmp_path)
    try:
        session.start()
        assert session.ready.wait(20)
        assert session._guard is not None and session.folder is not None
        guard = session._guard.pid
        assert os.readlink(f"/proc/{guard}/cwd") == session.folder
        assert os.getsid(guard) == guard != os.getsid(0)  # not in the server's group: it outlives a kill -9
        assert os.getsid(guard) != session.pid  # nor in the group it kills
        argv = Path(f"/proc/{guard}/cmdline").read_bytes().split(b"\0")
        assert argv[1:3] == [b"-I", b"-c"]
        session.stop()
        assert wait_for(lambda: session.state == "stopped")
        assert wait_for(lambda: not alive(guard))
    finally:
        session.close()


def test_a_run_over_its_bound_kills_the_session_and_it_is_restarted(tmp_path):
    from derivls.gradcheck.session import SessionDied

    session = stand_in(tmp_path)
    try:
        session.start()
        assert session.ready.wait(20)
        first = session.pid
        with pytest.raises(SessionDied):
            with session.use() as conn:
                conn.send({"op": "ping"})  # the stand-in never answers a ping: the run's bound is reached
                list(conn.events(0.5))
        assert wait_for(lambda: session.warm() and session.pid not in (None, first))
    finally:
        session.close()


def test_killing_the_parent_with_sigkill_kills_the_session_and_removes_its_folder(tmp_path):
    script = tmp_path / "stand_in.py"
    script.write_text(STAND_IN)
    parent = subprocess.Popen(
        [
            sys.executable,
            "-c",
            textwrap.dedent(
                f"""
                import json, sys, time
                from derivls.gradcheck.session import Session
                s = Session(sys.executable, command=[sys.executable, "-I", {str(script)!r}])
                s.start()
                s.ready.wait(20)
                print(json.dumps({{"pid": s.pid, "folder": s.folder}}), flush=True)
                time.sleep(60)
                """
            ),
        ],
        stdout=subprocess.PIPE,
        text=True,
        env={**os.environ, "TMPDIR": str(tmp_path)},
    )
    try:
        assert parent.stdout is not None
        found = json.loads(parent.stdout.readline())
        assert alive(found["pid"]) and Path(found["folder"]).is_dir()
        parent.kill()
        parent.wait(10)
        assert wait_for(lambda: not alive(found["pid"]))
        assert wait_for(lambda: not Path(found["folder"]).exists())
    finally:
        parent.kill()


def test_untrusted_the_server_starts_no_session_and_trusted_it_may(monkeypatch):
    from types import SimpleNamespace

    from derivls.gradcheck import session as sessions
    from derivls.server.documents import gradcheck_runs

    started = []
    monkeypatch.setattr(
        sessions,
        "get",
        lambda python, build=None: SimpleNamespace(
            pid=None, state="stopped", start=lambda: started.append(python), warm=lambda: False
        ),
    )
    settings = SimpleNamespace(trusted_workspace=False, gradcheck_on_save=True, gradcheck_python="py")
    ls = SimpleNamespace(settings=settings)
    doc = SimpleNamespace(uri="file:///d.yaml", analysis=SimpleNamespace(entries=[]), lines=object())
    gradcheck_runs.lsp_diagnostics(ls, doc)
    assert gradcheck_runs.engine(ls).use_session is False
    assert started == []
    settings.trusted_workspace = True
    gradcheck_runs.lsp_diagnostics(ls, SimpleNamespace(**{**vars(doc), "uri": "file:///e.yaml"}))
    assert gradcheck_runs.engine(ls).use_session is True
    assert started == ["py"]


def test_derivls_gradcheck_session_0_disables_the_session(monkeypatch):
    from derivls.gradcheck.job import GradcheckRuns

    monkeypatch.setenv("DERIVLS_GRADCHECK_SESSION", "0")
    assert GradcheckRuns().session(start=True) is None


class Progress:
    """The server's `ls.work_done_progress`, recording what it would send."""

    def __init__(self) -> None:
        self.sent: list[tuple[str, str, object]] = []

    async def create_async(self, token: str) -> None:
        self.sent.append(("create", token, None))

    def begin(self, token: str, value: object) -> None:
        self.sent.append(("begin", token, value))

    def end(self, token: str, value: object) -> None:
        self.sent.append(("end", token, value))


def progress_of_session_starts(session: Session, supports: bool, starts: int) -> list[tuple[str, str, object]]:
    """What the server sends while `session` starts `starts` times (the second by SIGKILL: a restart)."""
    import asyncio
    from types import SimpleNamespace

    from derivls.server.documents import gradcheck_runs

    progress = Progress()
    ls = SimpleNamespace(
        work_done_progress=progress, client_supports=lambda name: supports and name == "window.work_done_progress"
    )

    async def scenario() -> None:
        gradcheck_runs.watch_session(ls, SimpleNamespace(live_session=session))
        session.start()
        for n in range(starts):
            if n:
                os.killpg(session.pid, signal.SIGKILL)
            deadline = time.monotonic() + 20
            while time.monotonic() < deadline and not (
                session.warm() and session.starts == n + 1 and sum(s[0] == "end" for s in progress.sent) >= n + supports
            ):
                await asyncio.sleep(0.05)
        assert session.warm() and session.starts == starts

    asyncio.run(scenario())
    return progress.sent


def test_the_server_reports_progress_while_the_session_starts_and_restarts(tmp_path):
    from derivls.server.documents.gradcheck_runs import SESSION_TITLE

    session = stand_in(tmp_path)
    try:
        sent = progress_of_session_starts(session, supports=True, starts=2)
    finally:
        session.close()
    assert [kind for kind, _, _ in sent] == ["create", "begin", "end"] * 2
    assert len({token for _, token, _ in sent}) == 2  # a token of its own per start
    begins = [value for kind, _, value in sent if kind == "begin"]
    ends = [value for kind, _, value in sent if kind == "end"]
    assert {b.title for b in begins} == {SESSION_TITLE}
    assert all(e.message.startswith("ready in ") and e.message.endswith(" s (torch 0.0-stand-in)") for e in ends)


def test_a_client_without_work_done_progress_gets_none_and_the_session_starts_all_the_same(tmp_path):
    session = stand_in(tmp_path)
    try:
        assert progress_of_session_starts(session, supports=False, starts=1) == []
    finally:
        session.close()


def test_a_restarted_session_process_is_sent_the_reach_index_again(tmp_path):
    session = stand_in(tmp_path)
    try:
        session.start()
        assert session.ready.wait(20)
        assert session.reach_sent is False
        session.reach_sent = True  # (what the engine's first run does: the index goes with its `prepare`)
        first = session.pid
        assert first is not None
        os.killpg(first, signal.SIGKILL)
        assert wait_for(lambda: session.warm() and session.pid not in (None, first))
        assert session.reach_sent is False  # the new process has no index: the next run sends it
    finally:
        session.close()


# a session that says it is ready only once the indexer runs (else after 10 s, noting it), and records each request
INDEXED = textwrap.dedent(
    """
    import json, os, sys, time
    folder = sys.argv[1]
    def emit(o):
        sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
    emit({"event": "torch", "version": "0.0-stand-in"})
    deadline = time.monotonic() + 10
    while not os.path.exists(os.path.join(folder, "indexing")) and time.monotonic() < deadline:
        time.sleep(0.02)
    if not os.path.exists(os.path.join(folder, "indexing")):
        open(os.path.join(folder, "late"), "w").close()
    emit({"event": "ready"})
    for line in sys.stdin:
        with open(os.path.join(folder, "requests"), "a") as f:
            f.write(line)
        r = json.loads(line)
        if r["op"] == "quit":
            break
        if r["op"] == "prepare":
            emit({"event": "prepared", "units": 0})
    """
)
# the one-shot child asked for the index alone: its request line, then the index (after `seconds`), then its end
INDEXER = textwrap.dedent(
    """
    import json, os, sys, time
    folder, seconds = sys.argv[1], float(sys.argv[2])
    request = json.loads(sys.stdin.readline())
    open(os.path.join(folder, "indexing"), "w").write(json.dumps(request))
    print(json.dumps({"event": "torch", "version": "0.0-stand-in"}), flush=True)
    time.sleep(seconds)
    print(json.dumps({"event": "reach-index", "index": {"aten::_softmax.default": ["softmax"]}}), flush=True)
    """
)


def indexed(tmp_path: Path, monkeypatch, seconds: float = 0.5) -> tuple[Session, Path]:
    """A session of INDEXED with INDEXER as its indexer, its reach index kept in tmp_path/cache (none yet)."""
    from derivls.gradcheck import reach

    (tmp_path / "session.py").write_text(INDEXED)
    (tmp_path / "indexer.py").write_text(INDEXER)
    kept = tmp_path / "cache" / "reach.json"
    monkeypatch.setattr(reach, "file_for", lambda python, cache=None: kept)
    session = Session(
        sys.executable,
        command=[sys.executable, "-I", str(tmp_path / "session.py"), str(tmp_path)],
        indexer=[sys.executable, "-I", str(tmp_path / "indexer.py"), str(tmp_path), str(seconds)],
        send_reach=True,
    )
    return session, kept


def requests(tmp_path: Path) -> list[dict]:
    return [json.loads(line) for line in (tmp_path / "requests").read_text().splitlines()]


def test_a_torch_builds_first_session_has_its_reach_index_made_beside_its_start_and_sent_before_it_is_ready(
    tmp_path, monkeypatch
):
    session, kept = indexed(tmp_path, monkeypatch)
    try:
        session.start()
        assert session.ready.wait(30)
        assert not (tmp_path / "late").exists()  # the indexer ran while the session started, not after
        assert json.loads((tmp_path / "indexing").read_text()) == {"units": [], "reach": None}
        index = {"aten::_softmax.default": ["softmax"]}
        assert requests(tmp_path) == [{"op": "prepare", "units": [], "reach": index}]
        assert session.reach_sent is True  # the first run sends no index: its process has it
        assert json.loads(kept.read_text()) == index  # kept: the next session is sent it without an indexer
        assert session._indexer is None
    finally:
        session.close()


def test_a_kept_reach_index_is_sent_while_the_session_starts_and_no_indexer_runs(tmp_path, monkeypatch):
    session, kept = indexed(tmp_path, monkeypatch)
    kept.parent.mkdir()
    kept.write_text(json.dumps({"aten::mul.Tensor": ["cov"]}))
    (tmp_path / "indexing").write_text("")  # (the stand-in's start waits for it: no indexer makes it here)
    try:
        session.start()
        assert session.ready.wait(30)
        assert requests(tmp_path) == [{"op": "prepare", "units": [], "reach": {"aten::mul.Tensor": ["cov"]}}]
        assert session.reach_sent is True
        assert (tmp_path / "indexing").read_text() == ""
    finally:
        session.close()


def test_an_indexer_that_ends_without_an_index_leaves_the_first_run_to_make_it(tmp_path, monkeypatch):
    session, kept = indexed(tmp_path, monkeypatch)
    session.indexer = [
        sys.executable,
        "-I",
        "-c",
        "import sys, pathlib; pathlib.Path(sys.argv[1]).touch()",
        str(tmp_path / "indexing"),
    ]
    try:
        session.start()
        assert session.ready.wait(30)
        assert not (tmp_path / "requests").exists() and session.reach_sent is False
        assert not kept.exists()
    finally:
        session.close()


RECORDING = textwrap.dedent(
    """
    import json, sys
    def emit(o):
        sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
    emit({"event": "torch", "version": "0.0-stand-in"})
    emit({"event": "ready"})
    for line in sys.stdin:
        with open(sys.argv[1], "a") as f:
            f.write(line)
        if json.loads(line)["op"] == "quit":
            break
    """
)


def test_an_edited_entry_has_its_samples_found_by_the_idle_session_before_the_save_once(tmp_path, real_files):
    from derivls.gradcheck.job import GradcheckRuns
    from derivls.project.opener import open_project

    script, log = tmp_path / "recording.py", tmp_path / "requests.jsonl"
    script.write_text(RECORDING)
    session = Session(sys.executable, command=[sys.executable, "-I", str(script), str(log)])
    runs = GradcheckRuns(sys.executable)
    runs.live_session = session
    project = open_project(real_files.derivatives, real_files.native, real_files.tags, "auto")
    text = real_files.derivatives.read_text()
    uri = real_files.derivatives.as_uri()
    try:
        session.start()
        assert session.ready.wait(20)
        runs.seen(uri, project.analyzer.analyse(text))  # (the text as opened counts as checked)
        edited = text.replace(
            "self: grad * -((-self * self + 1).rsqrt()).conj()", "self: grad * -(1 - self * self).rsqrt()"
        )
        analysis = project.analyzer.analyse(edited)
        runs.prefetch(uri, str(real_files.derivatives), analysis, delay=0)
        assert wait_for(lambda: log.is_file() and log.read_text().strip())
        (request,) = [json.loads(line) for line in log.read_text().splitlines()]
        assert request["op"] == "prepare" and [u["name"] for u in request["units"]] == ["AcosBackward0"]
        assert "reach" in request and request["max_samples"] == 4  # (the save's run: the same samples)
        again = edited.replace("-(1 - self * self).rsqrt()", "-(1 - self.square()).rsqrt()")  # (acos, again)
        runs.prefetch(uri, str(real_files.derivatives), project.analyzer.analyse(again), delay=0)
        time.sleep(0.5)
        assert len(log.read_text().splitlines()) == 1  # once per entry and session process
        assert session.runs == 0  # (not a run)
    finally:
        session.close()


HANGING = textwrap.dedent(
    """
    import json, sys
    def emit(o):
        sys.stdout.write(json.dumps(o) + "\\n"); sys.stdout.flush()
    emit({"event": "torch", "version": "0.0-stand-in"})
    emit({"event": "ready"})
    for line in sys.stdin:
        r = json.loads(line)
        with open(sys.argv[2], "a") as f:
            f.write(json.dumps(r) + "\\n")
        if r["op"] == "quit":
            break
        if r["op"] == "prepare":
            emit({"event": "prepared", "units": 0})
        if r["op"] == "check":
            for u in r["units"]:
                emit({"event": "unit-start", "id": u["id"]})
                while u["id"] == sys.argv[1]:  # (a formula with an infinite loop: no answer comes)
                    pass
                emit({"event": "unit", "id": u["id"], "status": "passed", "failures": []})
            emit({"event": "done"})
    """
)


def test_a_unit_past_its_bound_in_the_session_is_answered_at_once_and_never_run_again_nor_one_shot(
    tmp_path, monkeypatch
):
    from types import SimpleNamespace

    from derivls.gradcheck import engine, entrybuild
    from derivls.gradcheck.build import Built

    plans = [SimpleNamespace(id=f"U{i}", unit=None, to_json=lambda i=i: {"id": f"U{i}"}) for i in range(3)]
    monkeypatch.setattr(
        entrybuild, "render", lambda *a: SimpleNamespace(source="// units", plans=plans, not_buildable=[])
    )
    monkeypatch.setattr(engine, "Templates", lambda derivatives: None)
    monkeypatch.setattr(engine.Toolchain, "find", staticmethod(lambda *a: None))
    monkeypatch.setattr(engine.building, "gradcheck_toolchain", lambda toolchain: None)
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(tmp_path / "x.so", "derivls_gc_x", False, 0.0))
    seen: list[dict] = []
    monkeypatch.setattr(engine, "interpret", lambda events, p, nb: (seen.extend(events), ([], SimpleNamespace()))[1])

    def no_one_shot(*args, **kwargs):
        raise AssertionError("a one-shot child was started")

    monkeypatch.setattr(engine, "Child", no_one_shot)
    monkeypatch.setenv("DERIVLS_GRADCHECK_SECONDS", "1.5")  # (each unit's bound)
    script, log = tmp_path / "hanging.py", tmp_path / "requests.jsonl"
    script.write_text(HANGING)
    session = Session(sys.executable, command=[sys.executable, "-I", str(script), "U1", str(log)])
    partials: list = []
    try:
        session.start()
        assert session.ready.wait(20)
        first = session.pid
        engine.gradcheck_in_session(
            [], Path("derivatives.yaml"), session, jit=False, cache=tmp_path / "cache", on_checked=partials.append
        )
        assert session.pid not in (None, first) and session.warm()  # killed at U1's bound, restarted
    finally:
        session.close()
    units = {e["id"]: e for e in seen if e.get("event") == "unit"}
    assert units["U0"]["status"] == units["U2"]["status"] == "passed"
    assert units["U1"] == {
        "event": "unit",
        "id": "U1",
        "status": "not-checkable",
        "reason": "it ran out of 1.5 s",
        "failures": [],
    }
    checks = [json.loads(line)["units"] for line in log.read_text().splitlines() if '"check"' in line]
    assert [[u["id"] for u in units] for units in checks] == [["U0", "U1", "U2"], ["U2"]]
    assert partials  # (U1's answer published before U2's check in the new process)


def test_the_editors_run_answers_a_unit_past_its_bound_and_checks_the_other_entry_without_a_one_shot_child(
    tmp_path, monkeypatch, real_files
):
    import io

    from derivls.gradcheck import engine, worker
    from derivls.gradcheck.build import Built
    from derivls.project.opener import open_project

    monkeypatch.setattr(engine.Toolchain, "find", staticmethod(lambda *a: None))
    monkeypatch.setattr(engine.building, "gradcheck_toolchain", lambda toolchain: None)
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(tmp_path / "x.so", "derivls_gc_x", False, 0.0))

    def no_one_shot(*args, **kwargs):
        raise AssertionError("the run fell back to a one-shot child")

    monkeypatch.setattr(engine, "gradcheck_units", no_one_shot)
    monkeypatch.setattr(engine, "Child", no_one_shot)
    monkeypatch.setenv("DERIVLS_GRADCHECK_SECONDS", "1.5")
    project = open_project(real_files.derivatives, real_files.native, real_files.tags, "auto")
    text = real_files.derivatives.read_text()
    analysis = project.analyzer.analyse(text)
    lines = [
        p.line
        for p in analysis.entries
        if p.entry.name.value in ("acos(Tensor self) -> Tensor", "asin(Tensor self) -> Tensor")
    ]
    assert len(lines) == 2
    script, log = tmp_path / "hanging.py", tmp_path / "requests.jsonl"
    script.write_text(HANGING)
    session = Session(sys.executable, command=[sys.executable, "-I", str(script), "AcosBackward0_0", str(log)])
    request = {
        "path": str(real_files.derivatives),
        "text": text,
        "native": str(real_files.native),
        "lines": lines,
        "python": sys.executable,
        "repair": False,
    }
    out = io.StringIO()
    try:
        session.start()
        assert session.ready.wait(20)
        code = worker.run(
            request, out, analysis=analysis, session=session, setup={"version": "2.13.0+cpu", "include": None}
        )
    finally:
        session.close()
    assert code == 0, out.getvalue()
    messages = [json.loads(line) for line in out.getvalue().splitlines() if line.startswith("{")]
    answers = [m for m in messages if "entries" in m]
    partial, final = answers[0], answers[-1]
    assert partial.get("partial") and [e["line"] for e in partial["entries"]] == [lines[0]]  # acos, at once
    assert partial["entries"][0]["verdict"] == "not checkable"
    assert [e["verdict"] for e in final["entries"]] == ["not checkable", "passed"]
    assert "AcosBackward0 (line %d): it ran out of 1.5 s" % (lines[0] + 1) in final["summary"]


def test_a_run_of_one_unit_past_its_bound_ends_with_its_answer_without_waiting_for_the_restart(tmp_path, monkeypatch):
    from types import SimpleNamespace

    from derivls.gradcheck import engine, entrybuild
    from derivls.gradcheck.build import Built

    plans = [SimpleNamespace(id="U0", unit=None, to_json=lambda: {"id": "U0"})]
    monkeypatch.setattr(
        entrybuild, "render", lambda *a: SimpleNamespace(source="// unit", plans=plans, not_buildable=[])
    )
    monkeypatch.setattr(engine, "Templates", lambda derivatives: None)
    monkeypatch.setattr(engine.Toolchain, "find", staticmethod(lambda *a: None))
    monkeypatch.setattr(engine.building, "gradcheck_toolchain", lambda toolchain: None)
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(tmp_path / "x.so", "derivls_gc_x", False, 0.0))
    seen: list[dict] = []
    monkeypatch.setattr(engine, "interpret", lambda events, p, nb: (seen.extend(events), ([], SimpleNamespace()))[1])
    monkeypatch.setenv("DERIVLS_GRADCHECK_SECONDS", "1")
    script, log = tmp_path / "hanging.py", tmp_path / "requests.jsonl"
    script.write_text(HANGING)
    session = Session(sys.executable, command=[sys.executable, "-I", str(script), "U0", str(log)])
    waited: list = []
    monkeypatch.setattr(session, "wait_restarted", lambda *a: waited.append(a) or True, raising=False)
    try:
        session.start()
        assert session.ready.wait(20)
        engine.gradcheck_in_session([], Path("derivatives.yaml"), session, jit=False, cache=tmp_path / "cache")
    finally:
        session.close()
    assert [(e["id"], e["reason"]) for e in seen if e.get("event") == "unit"] == [("U0", "it ran out of 1 s")]
    assert waited == []  # (nothing left to check: the answer is not held back for the new process)
    assert sum('"check"' in line for line in log.read_text().splitlines()) == 1
