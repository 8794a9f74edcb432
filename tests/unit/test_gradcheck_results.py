"""The gradcheck child's answers become diagnostics on the failing formula's text, and a summary
(derivls.gradcheck.results): no torch, no compiler."""

from __future__ import annotations

from types import SimpleNamespace

from derivls.base.diagnostics import Span
from derivls.gradcheck.results import CODE, interpret


def _origin(line: int, column: int, length: int) -> SimpleNamespace:
    return SimpleNamespace(span=Span(line, column, line, column + length))


def _plan(uid: str = "MulBackward0_0") -> SimpleNamespace:
    info = SimpleNamespace(
        derivatives=(SimpleNamespace(var_names=("self",)), SimpleNamespace(var_names=("other",))),
        forward_derivatives=(SimpleNamespace(var_names=("result",)),),
    )
    unit = SimpleNamespace(
        info=info,
        name="MulBackward0",
        entry_line=10,
        name_span=Span(10, 8, 10, 40),
        backward=(_origin(11, 8, 30), _origin(12, 9, 30)),
        forward=(_origin(13, 10, 25),),
    )
    return SimpleNamespace(id=uid, unit=unit)


def _failure(kind: str, input: str, output: str = "result") -> dict:
    return {
        "kind": kind,
        "input": input,
        "output": output,
        "sample": "mul: (Tensor[3] float64, Tensor[3] float64)",
        "dtype": "float64",
        "message": "largest mismatch: d output[0] / d input[0]: numerical 2, analytical -2",
    }


def test_a_failing_backward_formula_is_reported_on_the_formula_of_the_input_it_is_for():
    events = [
        {"event": "unit", "id": "MulBackward0_0", "status": "failed", "failures": [_failure("backward", "other")]}
    ]
    diagnostics, summary = interpret(events, [_plan()])
    assert [d.span.line for d in diagnostics] == [12]
    assert diagnostics[0].code == CODE
    assert "backward formula for other" in diagnostics[0].message
    assert "Tensor[3] float64" in diagnostics[0].message and "numerical 2, analytical -2" in diagnostics[0].message
    assert summary.counts() == {"checked": 1, "passed": 0, "failed": 1, "not-checkable": 0}


def test_a_failing_forward_formula_is_reported_on_the_formula_of_its_output():
    events = [{"event": "unit", "id": "MulBackward0_0", "status": "failed", "failures": [_failure("forward", "self")]}]
    diagnostics, _ = interpret(events, [_plan()])
    assert [(d.span.line, d.span.column) for d in diagnostics] == [(13, 10)]
    assert "forward formula for result" in diagnostics[0].message


def test_a_failing_double_backward_is_reported_on_the_backward_formula_it_differentiates():
    failure = dict(
        _failure("double-backward", "other"), message="Jacobian mismatch for output 0 with respect to input 1"
    )
    events = [{"event": "unit", "id": "MulBackward0_0", "status": "failed", "failures": [failure]}]
    diagnostics, _ = interpret(events, [_plan()])
    assert [d.span.line for d in diagnostics] == [12]
    assert "derivative of the backward formula for other (gradgradcheck)" in diagnostics[0].message


def test_a_mismatch_message_ends_each_sentence_though_torch_s_first_line_goes_on_past_a_comma():
    failure = dict(
        _failure("backward", "other"),
        message="largest mismatch: d output[0] / d input[0]: numerical 2, analytical -2\n"
        "Jacobian mismatch for output 0 with respect to input 1,",
    )
    events = [{"event": "unit", "id": "MulBackward0_0", "status": "failed", "failures": [failure]}]
    diagnostics, _ = interpret(events, [_plan()])
    assert diagnostics[0].message.splitlines() == [
        "MulBackward0: gradcheck fails for the backward formula for other (varying other, float64); "
        "sample mul: (Tensor[3] float64, Tensor[3] float64).",
        "largest mismatch: d output[0] / d input[0]: numerical 2, analytical -2.",
        "Jacobian mismatch for output 0 with respect to input 1.",
    ]


def test_the_summary_counts_the_checks_that_ran_by_kind():
    checks = {"backward": 2, "forward": 1, "double-backward": 2}
    events = [
        {"event": "unit", "id": "a", "status": "passed", "checks": checks},
        {"event": "unit", "id": "b", "status": "passed", "checks": {"backward": 1}},
    ]
    _, summary = interpret(events, [_plan("a"), _plan("b")])
    assert summary.checks() == {"backward": 3, "double-backward": 2, "forward": 1}
    assert "2 double backward (gradgradcheck)" in summary.text()


def test_passing_units_give_no_diagnostic_and_count_as_passed():
    events = [{"event": "unit", "id": "MulBackward0_0", "status": "passed", "failures": [], "samples": 4}]
    diagnostics, summary = interpret(events, [_plan()])
    assert diagnostics == []
    assert summary.counts()["passed"] == 1
    assert "1 checked, 1 passed, 0 failed, 0 not checkable" in summary.text()


def test_not_checkable_units_are_counted_by_reason_and_listed_with_it():
    events = [
        {"event": "unit", "id": "a", "status": "not-checkable", "reason": "no OpInfo sample reaches this overload"},
        {"event": "unit", "id": "b", "status": "not-checkable", "reason": "harness error: RuntimeError: x"},
    ]
    _, summary = interpret(events, [_plan("a"), _plan("b")], [(_plan("c").unit, "an in-place function")])
    assert summary.counts()["not-checkable"] == 3
    assert summary.reasons() == {"no OpInfo sample reaches this overload": 1, "harness error": 1, "not built": 1}
    assert "not checkable: MulBackward0 (line 11): not built: an in-place function" in summary.text()


def test_an_unreachable_helper_makes_the_unit_not_checkable_and_is_named():
    events = [
        {
            "event": "unit",
            "id": "a",
            "status": "passed",
            "failures": [],
            "errors": ["RuntimeError: derivls: FunctionsManual helper not reachable: foo(at::Tensor)"],
        }
    ]
    _, summary = interpret(events, [_plan("a")])
    assert summary.outcomes[0].status == "not-checkable"
    assert "not reachable: foo(at::Tensor)" in summary.outcomes[0].reason


def test_a_unit_the_child_never_answered_is_not_checkable_not_passed():
    _, summary = interpret([{"event": "done"}], [_plan()])
    assert summary.counts() == {"checked": 0, "passed": 0, "failed": 0, "not-checkable": 1}


def test_schema_made_inputs_are_marked_in_the_summary():
    events = [{"event": "unit", "id": "a", "status": "passed", "failures": [], "inputs": "schema"}]
    _, summary = interpret(events, [_plan("a")])
    assert "on inputs made from the schema" in summary.text()


def test_reasons_that_are_facts_about_the_op_are_counted_apart_from_the_harness_s_limits():
    events = [
        {"event": "unit", "id": "a", "status": "passed"},
        {"event": "unit", "id": "b", "status": "not-checkable", "reason": "no CPU kernel: aten::x has no kernel"},
        {"event": "unit", "id": "c", "status": "not-checkable", "reason": "not implemented: the derivative for 'x'"},
        {"event": "unit", "id": "d", "status": "not-checkable", "reason": "every check was skipped: OpInfo: ..."},
    ]
    left_out = [
        (_plan("e").unit, "nothing to check: the entry gives no formula"),
        (_plan("f").unit, "another backend's formula: a formula for AutogradCUDA"),
        (_plan("g").unit, "a return of type SymInt (not a tensor)"),
    ]
    _, summary = interpret(events, [_plan(u) for u in "abcd"], left_out)
    assert summary.facts() == 4
    assert summary.checkable_at_most() == 3  # (the passed unit and the two the harness leaves out)
    assert summary.reasons()["not built"] == 1 and summary.reasons()["another backend's formula"] == 1
    assert "not checkable: 4 for a fact about the op" in summary.text()
    assert "2 for a limit of the harness; at most 3 checkable" in summary.text()
