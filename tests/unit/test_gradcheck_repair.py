"""derivls.gradcheck.repair: the usual repairs of a failing formula, as text (no torch, no compiler)."""

from __future__ import annotations

import ast
from pathlib import Path

import pytest

from derivls.gradcheck import repair
from derivls.gradcheck.repair import Candidate, Outcome, candidates, canonical, choose

ACOS_SHIPPED = "grad * -((-self * self + 1).rsqrt()).conj()"
ACOS_SIGN_DROPPED = "grad * ((-self * self + 1).rsqrt()).conj()"


def formulas(formula: str, **kw) -> dict[str, str]:
    """Each candidate's formula -> how it was made."""
    return {c.formula: c.how for c in candidates(formula, **kw)}


def same(a: str, b: str) -> bool:
    return canonical(a) == canonical(b) is not None


# --- sign


def test_a_dropped_sign_of_acos_is_repaired_by_the_sign_candidate():
    found = formulas(ACOS_SIGN_DROPPED, inputs=["self"])
    assert found[ACOS_SHIPPED] == "sign"


def test_a_minus_on_a_factor_is_dropped_where_it_stands():
    assert formulas("-grad * (result * result).conj()", inputs=["self"])["grad * (result * result).conj()"] == "sign"


def test_a_leading_number_gets_the_minus():
    assert "-0.5 * grad * result.pow(3).conj()" in formulas("0.5 * grad * result.pow(3).conj()", inputs=["self"])


def test_the_argument_of_a_call_is_negated():
    assert formulas("2.0 / sqrt(M_PI) * exp(self.pow(2)) * grad", inputs=["self"]).get(
        "2.0 / sqrt(M_PI) * exp(-(self.pow(2))) * grad"
    ) == ("sign")


def test_a_sign_transparent_call_gets_no_argument_candidate():
    # sin(-x) is -sin(x): the same as the whole formula negated, which is one candidate already
    found = formulas("grad * sin(self)", inputs=["self"])
    assert "grad * sin(-self)" not in found
    assert "grad * -sin(self)" in found


def test_a_minus_inside_is_dropped():
    assert "grad * ((self * self + 1).rsqrt()).conj()" in formulas(ACOS_SIGN_DROPPED, inputs=["self"])


def test_a_sign_on_a_non_tensor_member_is_not_tried():
    assert not any(
        "-(self.sym_sizes())" in f or "-self.sym_sizes()" in f
        for f in formulas("grad.expand_symint(self.sym_sizes())", inputs=["self"])
    )


# --- conj


@pytest.mark.parametrize(
    ("mistaken", "shipped"),
    [
        ("grad * self.cos()", "grad * self.cos().conj()"),
        ("grad * result", "grad * result.conj()"),
        ("grad.div(self)", "grad.div(self.conj())"),
        ("grad / (2 * result)", "grad / (2 * result.conj())"),
        ("grad / (self * self + 1)", "grad / (self * self + 1).conj()"),
        ("grad * (result + 1)", "grad * (result.conj() + 1)"),
        ("grad.ger(vec)", "grad.ger(vec.conj())"),
    ],
)
def test_a_missing_conj_is_added_on_the_factor_that_lacks_it(mistaken, shipped):
    # the shipped formula, or the same formula written another way ((result + 1).conj() for result.conj() + 1)
    conj = [f for f, how in formulas(mistaken, inputs=["self", "vec"]).items() if how == "conj"]
    assert any(same(f, shipped) for f in conj), conj


def test_a_conj_is_dropped():
    assert formulas("grad * self.cos().conj()", inputs=["self"])["grad * self.cos()"] == "conj"


def test_no_conj_after_a_value_that_is_not_a_tensor():
    found = formulas("grad.expand_symint(self.sym_sizes()) / self.numel()", inputs=["self"])
    assert not any("sym_sizes().conj()" in f or "numel().conj()" in f for f in found)


def test_no_conj_after_a_name_that_is_not_a_tensor():
    assert not any("dim.conj()" in f for f in formulas("grad.cumsum(dim)", inputs=["self"]))


# --- swap


def test_two_inputs_are_exchanged_everywhere():
    found = formulas("atan2_backward(grad, other, self, grad_input_mask)", inputs=["self", "other"])
    assert found["atan2_backward(grad, self, other, grad_input_mask)"] == "swap"


def test_one_occurrence_of_an_input_is_replaced_by_another():
    assert formulas("grad * other / result", inputs=["self", "other"])["grad * self / result"] == "swap"
    assert formulas("grad * (tensor1 * value).conj()", inputs=["self", "tensor1", "tensor2"]).get(
        "grad * (tensor2 * value).conj()"
    ) == ("swap")


def test_a_one_input_op_gets_no_swap():
    assert "swap" not in formulas("grad * self.cos()", inputs=["self"]).values()


# --- scale and result


def test_the_formula_is_scaled_by_two_and_by_a_half():
    found = formulas("grad * self.cos()", inputs=["self"])
    assert found["2 * (grad * self.cos())"] == "scale"
    assert found["0.5 * (grad * self.cos())"] == "scale"


def test_the_recomputed_value_becomes_result_and_back():
    assert formulas("grad * self.exp()", inputs=["self"], recompute=["self.exp()"])["grad * result"] == "result"
    assert formulas("grad * result", inputs=["self"], recompute=["self.exp()"])["grad * (self.exp())"] == "result"
    # written another way (at::exp(self)), it is the same value
    assert formulas("grad * at::exp(self)", inputs=["self"], recompute=["self.exp()", "at::exp(self)"]).get(
        "grad * result"
    ) == ("result")


def test_no_result_candidate_without_a_recomputed_form():
    assert "result" not in formulas("grad * result", inputs=["self"]).values()


# --- what is never a candidate


def test_the_formula_itself_and_its_rewrites_are_never_candidates():
    for formula in (ACOS_SIGN_DROPPED, "grad * other / result", "-grad * (result * result).conj()"):
        keys = [canonical(c.formula) for c in candidates(formula, inputs=["self", "other"])]
        assert canonical(formula) not in keys
        assert len(keys) == len(set(keys)), "two candidates are one formula written two ways"


@pytest.mark.parametrize("keyword", ["auto_element_wise", "auto_linear", "non_differentiable", " not_implemented "])
def test_keywords_have_no_candidates(keyword):
    assert candidates(keyword, inputs=["self"]) == []


def test_a_not_implemented_formula_has_no_candidates():
    assert candidates('not_implemented("acos")', inputs=["self"]) == []


def test_a_formula_the_parser_does_not_read_has_no_candidates():
    assert candidates("grad * (self", inputs=["self"]) == []
    assert canonical("grad * (self") is None


# --- canonical


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("-grad * x", "grad * -x"),
        ("(2 * r).conj()", "2 * r.conj()"),
        ("-(a + b)", "-a - b"),
        ("grad * (x)", "grad * x"),
        ("a.conj().conj()", "a"),
        ("2.0f * x", "2.0 * x"),
        ("grad*x", "grad * x"),
    ],
)
def test_the_same_formula_written_another_way_has_one_canonical_form(a, b):
    assert canonical(a) == canonical(b)


@pytest.mark.parametrize(
    ("a", "b"),
    [
        ("grad * x", "-grad * x"),
        ("grad * x", "grad * x.conj()"),
        ("a - b", "b - a"),
        ("f(a, b)", "f(b, a)"),
        ("grad / x", "grad * x"),
    ],
)
def test_different_formulas_have_different_canonical_forms(a, b):
    assert canonical(a) != canonical(b)


# --- choose


def _outcome(formula: str, passed: bool, samples: int = 4) -> Outcome:
    return Outcome(Candidate(formula, "sign"), passed, samples)


def test_choose_offers_the_one_candidate_that_passed():
    chosen = choose([_outcome("a", False), _outcome("b", True, 7), _outcome("c", False)])
    assert chosen is not None and chosen.candidate.formula == "b" and chosen.samples == 7


def test_choose_offers_nothing_when_none_passed():
    assert choose([_outcome("a", False), _outcome("b", False)]) is None
    assert choose([]) is None


def test_choose_offers_nothing_when_several_passed():
    assert choose([_outcome("a", True), _outcome("b", True), _outcome("c", False)]) is None


# --- the layers


def test_repair_imports_neither_torch_nor_torchgen():
    tree = ast.parse(Path(repair.__file__).read_text(encoding="utf-8"))
    imported = {
        (n.module or "") if isinstance(n, ast.ImportFrom) else a.name
        for n in ast.walk(tree)
        if isinstance(n, (ast.Import, ast.ImportFrom))
        for a in (n.names if isinstance(n, ast.Import) else [None])  # type: ignore[list-item]
    }
    assert not {m for m in imported if m.split(".")[0] in ("torch", "torchgen")}


# --- an in-place op's forward formula


def test_an_in_place_write_is_repaired_inside_the_call_only():
    # `-self_t.copy_(-e)` returns e but writes -e into the tangent: never a candidate
    written = "self_t.copy_(-elu_backward(original_self_t, alpha, result))"
    found = formulas(written, inputs=["self_p"], tensors=["self_t", "original_self_t", "alpha", "result"])
    assert found["self_t.copy_(elu_backward(original_self_t, alpha, result))"] == "sign"
    assert all(f.startswith("self_t.copy_(") and f.endswith(")") for f in found), found
    assert "self_t.copy_(2 * (-elu_backward(original_self_t, alpha, result)))" in found


# --- trials: the candidate as a YAML scalar, the compiler's errors, the choice


def test_a_candidate_keeps_the_quoting_of_the_scalar_it_replaces():
    from derivls.gradcheck.trials import scalar_text

    assert scalar_text("grad * -x", "grad * x") == "grad * -x"
    assert scalar_text('f("a: b")', "f(x)") == '"f(\\"a: b\\")"'  # (": " would end a plain scalar)
    assert scalar_text("a ? b : c", '"a ? c : b"') == '"a ? b : c"'
    assert scalar_text("it's", "'x'") == "'it''s'"
    assert scalar_text("-x", "x") == "-x" and scalar_text("- x", "x") == '"- x"'


def test_compiler_errors_blame_the_candidate_whose_code_holds_them():
    from types import SimpleNamespace

    from derivls.gradcheck.trials import culprits

    source = "\n".join(
        [
            "#include <pch>",
            "struct AcosBackward0_repair1 : public TraceableFunction {",
            "  x;",
            "static std::vector<at::Tensor> AcosBackward0_repair1_0_bw(...) {",
            "struct AcosBackward0_repair2 : public TraceableFunction {",
            "  y;",
            "static std::vector<at::Tensor> AcosBackward0_repair2_1_bw(...) {",
        ]
    )
    trials = {
        "AcosBackward0_repair1_0": SimpleNamespace(
            unit=SimpleNamespace(info=SimpleNamespace(op="AcosBackward0_repair1"))
        ),
        "AcosBackward0_repair2_1": SimpleNamespace(
            unit=SimpleNamespace(info=SimpleNamespace(op="AcosBackward0_repair2"))
        ),
    }
    assert culprits(source, "unit.cpp:6:3: error: no match", trials) == {"AcosBackward0_repair2_1"}
    assert culprits(source, "unit.cpp:3:1: error: a\nunit.cpp:7:2:   required from here", trials) == {
        "AcosBackward0_repair1_0",
        "AcosBackward0_repair2_1",
    }
    assert culprits(source, "unit.cpp:1:1: error: outside every candidate", trials) is None
    assert culprits(source, "stubs.cpp:1:1: error: not the unit", trials) is None


def _trials(*formulas: str):
    from types import SimpleNamespace

    from derivls.base.diagnostics import Edit, Span
    from derivls.gradcheck.trials import Trial, Trials

    span = Span(3, 8, 3, 40)
    made = [Trial("AcosBackward0_0", Candidate(f, "sign"), object(), Edit(span, f)) for f in formulas]  # type: ignore[arg-type]
    plans = [SimpleNamespace(id=f"c{i}", unit=t.unit) for i, t in enumerate(made)]
    return Trials(made), plans


def _answers(*statuses: str) -> list[dict]:
    return [{"event": "unit", "id": f"c{i}", "status": s, "samples": 9} for i, s in enumerate(statuses)] + [
        {"event": "done"}
    ]


def test_the_one_passing_candidate_is_offered_as_the_fix_of_its_formula():
    from derivls.gradcheck.trials import offers

    trials, plans = _trials("a", "b", "c")
    (offer,) = offers(trials, plans, _answers("failed", "passed", "failed"))
    assert offer.formula == "b" and offer.samples == 9 and offer.unit == "AcosBackward0_0"
    assert offer.fix().title == "Replace with `b` (passes gradcheck on 9 samples)"
    assert offer.fix().edits == (trials.trials[1].edit,)


def test_no_offer_when_two_candidates_pass_or_none_does():
    from derivls.gradcheck.trials import offers

    trials, plans = _trials("a", "b", "c")
    assert offers(trials, plans, _answers("passed", "passed", "failed")) == []
    assert offers(trials, plans, _answers("failed", "not-checkable", "failed")) == []


def test_no_offer_when_the_child_stopped_before_answering_every_candidate():
    from derivls.gradcheck.trials import offers

    trials, plans = _trials("a", "b", "c")
    assert offers(trials, plans, _answers("failed", "passed")) == []  # (c might have passed too)


def test_a_candidate_that_did_not_compile_is_not_waited_for():
    from derivls.gradcheck.trials import offers

    trials, plans = _trials("a", "b", "c")
    # c's code did not compile: it was not rendered again, so it has no plan (and is never the repair)
    (offer,) = offers(trials, plans[:2], _answers("failed", "passed"))
    assert offer.formula == "b"


def test_a_repair_travels_with_its_diagnostic_from_the_worker_to_the_editor():
    from derivls.base.diagnostics import Diagnostic, Edit, Severity, Span
    from derivls.codes.gradcheck import GRADCHECK_MISMATCH
    from derivls.gradcheck.job import GradcheckJob
    from derivls.gradcheck.trials import Suggestion
    from derivls.jobs.wire import diagnostic_to_json

    span = Span(226, 8, 226, 50)
    offer = Suggestion("AcosBackward0_0", "grad * -x", "sign", Edit(span, "grad * -x"), 9)
    d = Diagnostic(span, Severity.ERROR, GRADCHECK_MISMATCH, "fails", fixes=(offer.fix(),))
    sent = diagnostic_to_json(d, 224)  # (relative to the entry's line, as the worker sends it)
    back = GradcheckJob.diagnostic(None, sent)  # type: ignore[arg-type]
    assert back.fixes[0].title == offer.title
    assert back.fixes[0].edits == (Edit(Span(2, 8, 2, 50), "grad * -x"),)
    # placed again at the entry's line (placed_diagnostics shifts a diagnostic with its fixes)
    assert back.shifted(224).fixes == d.fixes


def test_a_failure_of_the_repair_phase_loses_no_result(monkeypatch):
    from types import SimpleNamespace

    from derivls.gradcheck import engine, trials

    def broken(*args, **kwargs):
        raise RuntimeError("a bug")

    monkeypatch.setattr(trials, "make_trials", broken)
    rendered = SimpleNamespace(plans=[SimpleNamespace(id="AcosBackward0_0", unit=object())])
    events = [{"event": "unit", "id": "AcosBackward0_0", "status": "failed", "failures": [{"kind": "backward"}]}]
    timings = engine.Timings()

    def never(*args):
        raise AssertionError("nothing to check")

    found = engine.repair_phase(
        events,
        rendered,
        engine.RepairSource("", None),
        None,
        None,
        None,
        never,
        timings,  # type: ignore[arg-type]
    )
    assert found == [] and timings.repair_error == "RuntimeError: a bug"
    # nothing failed: no repair phase at all
    timings = engine.Timings()
    assert engine.repair_phase([], rendered, engine.RepairSource("", None), None, None, None, never, timings) == []  # type: ignore[arg-type]
    assert timings.repair == 0.0 and timings.repair_error is None
