"""The gradcheck engine starts the torch child before it compiles, so that importing torch and finding OpInfo
samples overlap g++; the child gets the extension once it is built, and dies when the build fails
(derivls.gradcheck.engine with a stand-in child and build: no torch, no compiler)."""

from __future__ import annotations

import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from derivls.compile.toolchain import SetupError
from derivls.gradcheck import engine, entrybuild, runner
from derivls.gradcheck.build import Built

FAKE_CHILD = """
import json, os, signal, sys
signal.alarm(30)  # a stand-in never outlives a broken test
log = open(os.environ["DERIVLS_TEST_CHILD_LOG"], "a")
request = json.loads(sys.stdin.readline())
log.write("started %d\\n" % len(request["units"])); log.flush()
log.write("reach %s\\n" % json.dumps(request.get("reach"))); log.flush()
print(json.dumps({"event": "torch", "version": "0.0"}), flush=True)
if request.get("reach") is None:
    print(json.dumps({"event": "reach-index", "index": {"aten::_softmax.default": ["softmax"]}}), flush=True)
if os.environ.get("DERIVLS_TEST_SETUP_ERROR"):
    print(json.dumps({"event": "setup-error", "message": os.environ["DERIVLS_TEST_SETUP_ERROR"]}), flush=True)
    sys.exit(0)
print(json.dumps({"event": "samples"}), flush=True)
line = sys.stdin.readline()
if not line.strip():
    log.write("no library\\n"); sys.exit(0)
log.write("library %s\\n" % json.loads(line)["library"]); log.flush()
for unit in request["units"]:
    print(json.dumps({"event": "unit-start", "id": unit["id"]}), flush=True)
    crash = os.environ.get("DERIVLS_TEST_CRASH")
    if unit["id"] == crash or crash == "first" and unit is request["units"][0]:
        os.kill(os.getpid(), signal.SIGSEGV)  # (as torch on a sample it does not check)
    if unit["id"] == os.environ.get("DERIVLS_TEST_HANG"):
        while True:  # (as a formula with an infinite loop: no Python runs, no answer comes)
            pass
    print(json.dumps({"event": "unit", "id": unit["id"], "status": "passed", "failures": []}), flush=True)
print(json.dumps({"event": "done"}), flush=True)
"""


@pytest.fixture
def stand_ins(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> SimpleNamespace:
    child = tmp_path / "child.py"
    child.write_text(FAKE_CHILD)
    log = tmp_path / "child.log"
    log.touch()
    monkeypatch.setenv("DERIVLS_TEST_CHILD_LOG", str(log))
    monkeypatch.setattr(runner, "CHILD", child)
    plan = SimpleNamespace(id="AcosBackward0_0", to_json=lambda: {"id": "AcosBackward0_0"})
    rendered = SimpleNamespace(source="// unit", plans=[plan], not_buildable=[])
    monkeypatch.setattr(entrybuild, "render", lambda units, library, templates: rendered)
    monkeypatch.setattr(engine, "Templates", lambda derivatives: None)
    monkeypatch.setattr(engine.Toolchain, "find", staticmethod(lambda *a: None))
    monkeypatch.setattr(engine.building, "gradcheck_toolchain", lambda toolchain: None)
    children: list[runner.Child] = []
    real_child = engine.Child

    def recording_child(*args, **kwargs):
        children.append(real_child(*args, **kwargs))
        return children[-1]

    monkeypatch.setattr(engine, "Child", recording_child)
    monkeypatch.setattr(engine, "interpret", lambda events, plans, not_buildable: ([], SimpleNamespace()))
    return SimpleNamespace(log=log, library=tmp_path / "derivls_gc_x.so", children=children)


def _wait_for(path: Path, text: str, seconds: float = 20) -> bool:
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if text in path.read_text():
            return True
        time.sleep(0.05)
    return False


def test_the_child_is_running_while_the_extension_compiles_and_gets_it_when_built(stand_ins, monkeypatch):
    seen_during_build = []

    def build(source, toolchain, templates, cache, units=1):
        seen_during_build.append(_wait_for(stand_ins.log, "started 1"))
        return Built(stand_ins.library, "derivls_gc_x", False, 0.0)

    monkeypatch.setattr(engine.building, "build", build)
    result = engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable)
    assert seen_during_build == [True]
    assert f"library {stand_ins.library}" in stand_ins.log.read_text()
    assert result.torch_version == "0.0"


def test_a_failed_compile_ends_the_child_and_reports_the_compile(stand_ins, monkeypatch):
    def build(source, toolchain, templates, cache, units=1):
        assert _wait_for(stand_ins.log, "started 1")
        raise SetupError("compiling the formulas failed: error: expected ';'")

    monkeypatch.setattr(engine.building, "build", build)
    with pytest.raises(SetupError, match="compiling the formulas failed"):
        engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable)
    [child] = stand_ins.children
    assert child.process.poll() is not None
    assert "library" not in stand_ins.log.read_text()


def test_a_torch_without_its_test_dependencies_is_a_set_up_error_naming_them(stand_ins, monkeypatch):
    message = "torch's OpInfo database (torch.testing._internal) needs the module numpy: install numpy and expecttest"
    monkeypatch.setenv("DERIVLS_TEST_SETUP_ERROR", message)
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(stand_ins.library, "derivls_gc_x", False, 0.0))
    with pytest.raises(SetupError, match="needs the module numpy"):
        engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable)
    [child] = stand_ins.children
    assert child.process.poll() is not None


def test_a_set_up_error_of_the_child_stops_a_running_build_at_once(stand_ins, monkeypatch, tmp_path: Path):
    # a cold run compiled for ~40 s before it said that numpy was missing (issue 36, item 5)
    from derivls.base import bounded

    message = "torch's OpInfo database (torch.testing._internal) needs the module numpy: install numpy and expecttest"
    monkeypatch.setenv("DERIVLS_TEST_SETUP_ERROR", message)

    def build(source, toolchain, templates, cache, units=1):
        time.sleep(1.0)  # the child's message comes first: the compiler starts after it (CI's order)
        done = bounded.run(["sleep", "60"], bounded.Limits(120, bounded.GB), cwd=tmp_path)  # a compiler at work
        raise SetupError(f"compiling the formulas failed (status {done.returncode})")

    monkeypatch.setattr(engine.building, "build", build)
    started = time.monotonic()
    with pytest.raises(SetupError, match="needs the module numpy"):
        engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable)
    assert time.monotonic() - started < 30
    assert not bounded.live()


def test_the_reach_index_the_child_made_is_kept_per_torch_build_and_sent_with_the_next_request(
    stand_ins, monkeypatch, tmp_path
):
    torch_folder = tmp_path / "torch"
    torch_folder.mkdir()
    (torch_folder / "version.py").write_text("__version__ = '2.13.0+cpu'\n")
    monkeypatch.setattr(engine.reach, "torch_folder_of", lambda python: torch_folder)
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(stand_ins.library, "derivls_gc_x", False, 0.0))
    cache = tmp_path / "cache"
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=cache)
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=cache)
    (torch_folder / "version.py").write_text("__version__ = '2.13.1+cpu'\n")  # another build: made again
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=cache)
    sent = [line for line in stand_ins.log.read_text().splitlines() if line.startswith("reach ")]
    assert sent == ["reach null", 'reach {"aten::_softmax.default": ["softmax"]}', "reach null"]
    assert len(list((cache / "gradcheck").glob("reach-*.json"))) == 2


def test_a_crash_of_torch_on_one_unit_is_that_units_and_the_others_are_checked_in_a_new_child(
    stand_ins, monkeypatch, tmp_path
):
    plans = [SimpleNamespace(id=f"U{i}", to_json=lambda i=i: {"id": f"U{i}"}) for i in range(3)]
    monkeypatch.setattr(
        entrybuild, "render", lambda *a: SimpleNamespace(source="// units", plans=plans, not_buildable=[])
    )
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(stand_ins.library, "derivls_gc_x", False, 0.0))
    seen: list[dict] = []
    monkeypatch.setattr(engine, "interpret", lambda events, p, nb: (seen.extend(events), ([], SimpleNamespace()))[1])
    monkeypatch.setenv("DERIVLS_TEST_CRASH", "U1")
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=tmp_path / "cache")
    units = {e["id"]: e for e in seen if e.get("event") == "unit"}
    assert units["U0"]["status"] == units["U2"]["status"] == "passed"
    assert units["U1"]["status"] == "not-checkable"
    assert units["U1"]["reason"].startswith("crashed: the gradcheck process ended early (status -11)")
    assert len(stand_ins.children) == 2
    assert stand_ins.log.read_text().count("started") == 2 and "started 1\n" in stand_ins.log.read_text()


def test_a_child_that_keeps_crashing_is_started_again_a_bounded_number_of_times(stand_ins, monkeypatch, tmp_path):
    plans = [SimpleNamespace(id=f"U{i}", to_json=lambda i=i: {"id": f"U{i}"}) for i in range(6)]
    monkeypatch.setattr(
        entrybuild, "render", lambda *a: SimpleNamespace(source="// units", plans=plans, not_buildable=[])
    )
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(stand_ins.library, "derivls_gc_x", False, 0.0))
    seen: list[dict] = []
    monkeypatch.setattr(engine, "interpret", lambda events, p, nb: (seen.extend(events), ([], SimpleNamespace()))[1])
    monkeypatch.setenv("DERIVLS_TEST_CRASH", "first")  # (every child crashes on the first unit it checks)
    monkeypatch.setattr(engine, "MAX_RESTARTS", 2)
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=tmp_path / "cache")
    assert len(stand_ins.children) == 3
    reasons = {e["id"]: e["reason"].split(":")[0] for e in seen if e.get("event") == "unit"}
    assert reasons == {
        "U0": "crashed",
        "U1": "crashed",
        "U2": "harness",
        "U3": "harness",
        "U4": "harness",
        "U5": "harness",
    }


def test_a_unit_past_its_time_bound_is_not_checkable_and_the_units_after_it_are_checked_in_a_new_child(
    stand_ins, monkeypatch, tmp_path
):
    plans = [SimpleNamespace(id=f"U{i}", to_json=lambda i=i: {"id": f"U{i}"}) for i in range(3)]
    monkeypatch.setattr(
        entrybuild, "render", lambda *a: SimpleNamespace(source="// units", plans=plans, not_buildable=[])
    )
    monkeypatch.setattr(engine.building, "build", lambda *a, **k: Built(stand_ins.library, "derivls_gc_x", False, 0.0))
    seen: list[dict] = []
    monkeypatch.setattr(engine, "interpret", lambda events, p, nb: (seen.extend(events), ([], SimpleNamespace()))[1])
    monkeypatch.setenv("DERIVLS_TEST_HANG", "U1")
    monkeypatch.setenv("DERIVLS_GRADCHECK_SECONDS", "1.5")  # (each unit's bound, not the child's)
    engine.gradcheck_units([], Path("derivatives.yaml"), python=sys.executable, cache=tmp_path / "cache")
    units = {e["id"]: e for e in seen if e.get("event") == "unit"}
    assert units["U0"]["status"] == units["U2"]["status"] == "passed"
    assert units["U1"]["status"] == "not-checkable"
    assert units["U1"]["reason"] == "it ran out of 1.5 s"
    assert len(stand_ins.children) == 2  # the second for U2 only: the hung unit is not run again
    assert stand_ins.log.read_text().count("started") == 2 and "started 1\n" in stand_ins.log.read_text()
    assert all(child.process.poll() is not None for child in stand_ins.children)


def test_derivls_gradcheck_seconds_bounds_each_unit_in_the_child_and_the_session(monkeypatch):
    from derivls.gradcheck.session import run_seconds

    monkeypatch.setenv("DERIVLS_GRADCHECK_SECONDS", "7")
    assert runner.unit_seconds() == runner.unit_seconds(runner.SESSION_UNIT_SECONDS) == 7
    assert runner.child_limits(3).seconds == runner.START_SECONDS + 3 * 7
    assert run_seconds(2) == 60 + 2 * 7
    monkeypatch.delenv("DERIVLS_GRADCHECK_SECONDS")
    assert runner.unit_seconds() == runner.UNIT_SECONDS == 300  # the one-shot child (the CLI)
    assert runner.unit_seconds(runner.SESSION_UNIT_SECONDS) == 120  # the editor's session
    assert run_seconds(1) == 180


def test_an_entry_whose_code_does_not_compile_gets_check_compiles_errors_and_the_others_are_built_again(
    monkeypatch,
):
    from derivls.compile import engine as compiling
    from derivls.gradcheck import trials

    bad, good = SimpleNamespace(entry_line=10), SimpleNamespace(entry_line=20)
    first = SimpleNamespace(
        source="// both",
        plans=[SimpleNamespace(id="A_0", unit=bad), SimpleNamespace(id="B_1", unit=good)],
        not_buildable=[],
    )
    again = SimpleNamespace(source="// B only", plans=[SimpleNamespace(id="B_0", unit=good)], not_buildable=[])
    built = Built(Path("x.so"), "derivls_gc_x", False, 0.0)

    def build(source, *a, **k):
        if source == "// both":
            raise engine.building.CompileFailed("compiling the formulas failed", ["unit.cpp:2:5: error: 'gard'"])
        return built

    error = SimpleNamespace(message="AcosBackward0: 'gard' was not declared", span=SimpleNamespace(line=11, column=8))
    compiled: list = []
    monkeypatch.setattr(engine.building, "build", build)
    monkeypatch.setattr(trials, "culprits", lambda source, errors, by_plan: {"A_0"})
    monkeypatch.setattr(
        compiling,
        "compile_units",
        lambda units, *a, **k: (compiled.append(units), SimpleNamespace(by_entry={10: [error]}))[1],
    )
    monkeypatch.setattr(entrybuild, "render", lambda units, library, templates: again if units == [good] else None)
    got, rendered, diagnostics = entrybuild.build_checkable([bad, good], first, None, None, None)
    assert got is built and rendered is again
    assert compiled == [[bad]]  # (only the blamed unit's code is compiled again, as check --compile does)
    assert diagnostics == [error]
    assert rendered.not_buildable == [(bad, entrybuild.NOT_COMPILED)]
