"""The session's JIT (derivls/gradcheck/jit.py, Cling through cppyy) against the g++ path: the same units checked
the same way give the same verdicts, on the same lines, for the shipped formulas (a FunctionsManual helper libtorch
does not export, saved sizes, an in-place op, a tensor list) and for wrong ones; double backward is traced through
JIT-defined formulas as through the extension; code Cling rejects goes to g++, whose verdict is the user's.
Slow (torch, Cling, g++): `python -m pytest -m gradcheck tests/gradcheck/test_jit.py`."""

from __future__ import annotations

import io
import json
import random
import sys
import time
from pathlib import Path

import pytest

from derivls.compile.units import collect_units
from derivls.gradcheck import session as sessions
from derivls.gradcheck.engine import gradcheck_in_session, gradcheck_units
from derivls.gradcheck.runner import torch_include
from derivls.gradcheck.worker import run
from derivls.project.analyse import analyse_path
from tests.gradcheck.conftest import make_wheel_copy, replace_in_entry
from tests.gradcheck.test_acos import SHIPPED
from tests.gradcheck.test_double_backward import DETACHED

pytestmark = pytest.mark.gradcheck

# a factor (n / n) = 1 new at each run of the tests: each selection's source is one the extension cache has not
# seen, so the JIT (not a cached g++ build) serves it
N = random.SystemRandom().randrange(10**6, 10**7)


def fresh(formula: str, k: int) -> str:
    return f"{formula} * ({N + k}.0 / {N + k}.0)"


SHIPPED_OPS = ("acos", "mul.Tensor", "max.dim", "mul_.Tensor", "addcmul", "logsumexp", "cat")


@pytest.fixture(scope="module")
def session():
    live = sessions.Session(sys.executable)
    live.start()
    assert live.ready.wait(300), (live.state, live.error)
    assert live.jit_ready(), live.jit  # (cppyy is in the gradcheck extra)
    yield live
    live.close()


@pytest.fixture
def copy(real_files, tmp_path: Path) -> Path:
    return make_wheel_copy(real_files, tmp_path / "site-packages")


def _units(path: Path, *ops: str):
    folder = path.parent.parent / "ATen" / "native"
    analysis, _ = analyse_path(path, folder / "native_functions.yaml", folder / "tags.yaml")
    return collect_units(analysis, list(ops))


def _verdicts(result) -> dict[str, tuple[str, int]]:
    return {o.name: (o.status, o.entry_line) for o in result.summary.outcomes}


def _lines(result) -> list[tuple[int, str]]:
    return sorted((d.span.line, str(d.code)) for d in result.diagnostics)


def _both(session, path: Path, *ops: str, double_backward: bool = False):
    units = _units(path, *ops)
    include = torch_include(sys.executable)  # (the copy has the yaml files only)
    by_jit = gradcheck_in_session(units, path, session, double_backward=double_backward, torch_include=include)
    by_gxx = gradcheck_units(units, path, python=sys.executable, double_backward=double_backward, torch_include=include)
    return by_jit, by_gxx


def test_the_shipped_formulas_get_the_same_verdicts_from_the_jit_as_from_g_plus_plus(session, copy):
    replace_in_entry(copy, "acos(", SHIPPED, fresh(SHIPPED, 0))
    by_jit, by_gxx = _both(session, copy, *SHIPPED_OPS)
    assert by_jit.timings.jit and by_jit.timings.jit_error is None, by_jit.timings
    assert not by_gxx.timings.jit
    assert _verdicts(by_jit) == _verdicts(by_gxx)
    assert {status for status, _ in _verdicts(by_jit).values()} == {"passed"}, _verdicts(by_jit)
    assert by_jit.diagnostics == by_gxx.diagnostics == []
    assert by_jit.summary.unreachable_helpers == []


def test_a_wrong_formula_fails_on_its_line_through_the_jit_as_through_g_plus_plus(session, copy):
    line = replace_in_entry(copy, "acos(", SHIPPED, fresh(SHIPPED.replace("* -(", "* ("), 1))
    by_jit, by_gxx = _both(session, copy, "acos")
    assert by_jit.timings.jit
    assert (
        _verdicts(by_jit) == _verdicts(by_gxx) == {"AcosBackward0": ("failed", _verdicts(by_gxx)["AcosBackward0"][1])}
    )
    # the backward formula's line, and the forward one derived from it (auto_element_wise) on the next line
    assert _lines(by_jit) == _lines(by_gxx) == [(line - 1, "gradcheck-mismatch"), (line, "gradcheck-mismatch")]


def test_double_backward_is_traced_through_jit_defined_formulas(session, copy):
    line = replace_in_entry(copy, "acos(", SHIPPED, fresh(DETACHED, 2))
    by_jit, by_gxx = _both(session, copy, "acos", double_backward=True)
    assert by_jit.timings.jit
    assert _lines(by_jit) == _lines(by_gxx) and _lines(by_jit), (by_jit.diagnostics, by_gxx.diagnostics)
    assert {span_line for span_line, _ in _lines(by_jit)} == {line - 1}
    assert all("gradgradcheck" in d.message for d in by_jit.diagnostics)


def test_code_cling_rejects_is_judged_by_g_plus_plus_and_the_session_restarts_with_a_fresh_jit(session, copy):
    line = replace_in_entry(copy, "acos(", SHIPPED, "self: grad * derivls_no_such_helper(self)")
    runs, starts = session.jit_runs, session.starts
    include = torch_include(sys.executable)
    # (the JIT rejected it, then g++ did: its errors are the user's, on the entry's lines, as check --compile's)
    by_jit = gradcheck_in_session(_units(copy, "acos"), copy, session, torch_include=include)
    by_gxx = gradcheck_units(_units(copy, "acos"), copy, python=sys.executable, torch_include=include)
    shown = [(d.span.line, str(d.code), d.message) for d in by_jit.diagnostics]
    assert shown == [(d.span.line, str(d.code), d.message) for d in by_gxx.diagnostics]
    assert shown and {code for _, code, _ in shown} == {"compile-error"}
    assert line - 1 in {n for n, _, _ in shown} and all("derivls_no_such_helper" in m for _, _, m in shown)
    assert _verdicts(by_jit)["AcosBackward0"][0] == "not-checkable"
    assert session.jit_runs == runs
    # Cling's state after a rejected definition is not trusted (its roll-back leaves templates half made): the
    # session is restarted, and the next edit is the new process's JIT's
    deadline = time.monotonic() + 300
    while not (session.starts > starts and session.warm() and session.jit_ready()):
        assert time.monotonic() < deadline, session.describe()
        time.sleep(0.2)
    replace_in_entry(copy, "acos(", "self: grad * derivls_no_such_helper(self)", fresh(SHIPPED, 3))
    again = gradcheck_in_session(_units(copy, "acos"), copy, session, torch_include=include)
    assert again.timings.jit and _verdicts(again)["AcosBackward0"][0] == "passed"
    assert session.jit_runs == runs + 1


def test_an_entry_derivls_finds_errors_in_is_built_by_g_plus_plus_and_never_sent_to_the_jit(session, copy):
    # (an error derivls finds without torch's headers, which the copy lacks: with them, an unknown helper is one too)
    text = copy.read_text().replace(SHIPPED, "self: grad * (self", 1)
    folder = copy.parent.parent / "ATen" / "native"
    request = {
        "path": str(copy),
        "text": text,
        "native": str(folder / "native_functions.yaml"),
        "tags": str(folder / "tags.yaml"),
        "lines": [text.splitlines().index("- name: acos(Tensor self) -> Tensor")],
        "torch_include": torch_include(sys.executable),
    }
    starts, runs = session.starts, session.jit_runs
    out = io.StringIO()
    run(request, out, session=session)
    last = json.loads(out.getvalue().splitlines()[-1])
    (entry,) = last["entries"]  # g++'s errors, on the entry's lines (check --compile's), never a file of its build
    assert entry["diagnostics"] and all(d["code"] == "compile-error" for d in entry["diagnostics"]), last
    assert all("unit.cpp" not in d["message"] for d in entry["diagnostics"])
    assert (session.starts, session.jit_runs) == (starts, runs) and session.jit_ready(), session.describe()
