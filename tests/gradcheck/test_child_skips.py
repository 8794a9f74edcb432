"""The checks OpInfo skips, run where torch's own gradient agrees, and eig's gauge (derivls/gradcheck/child/checks.py,
run here in-process with the installed torch: no compiler; the formulas are Python stand-ins of the compiled ones):
a skip or expected failure of test_ops' test is OpInfo's reason for its test (memory overlap, slowness, a
nondeterministic kernel), so the check is run at a sample where the installed torch's own gradient agrees with
finite differences and stays skipped, with both reasons, where it does not; linalg_eig is checked on a
gauge-invariant function of its eigenvectors, as test_ops checks it; a formula that is not the derivative by design
(a rule on its text, derivls/gradcheck/source.py by_design_fact) is a fact about the entry where finite differences
disagree with it."""

from __future__ import annotations

import types

import pytest

from derivls.compile.file_templates import Templates
from derivls.compile.units import collect_units
from derivls.gradcheck.source import is_fact, render
from derivls.project.analyse import analyse_path
from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck

OPINFO_SKIP = "OpInfo: test_fn_grad is skipped (float64)"


def _unit(torch, aten, overload, wrt, outputs, grads):
    return {
        **unit_request(torch, aten, overload, *wrt),
        "outputs": outputs,
        "grads": grads,
        "backward": "backward",
        "forward": "forward",
    }


def _sample(torch, args, skip, dtype=None):
    return {
        "dtype": dtype or torch.float64,
        "args": args,
        "kwargs": {},
        "origin": "a test",
        "skip": skip,
        "transforms": {},
    }


def _check(child, torch, unit, sample, backward, forward=None):
    ns = types.SimpleNamespace(backward=backward, forward=forward)
    return child.check_samples(torch, ns, unit, [sample], {"variants": False})


def _mul_scalar(shift):
    def backward(self, other, result, grads, mask):
        (grad,) = grads
        return [None if grad is None else grad * (other + shift)]

    def forward(self, other, result, tangents):
        (self_t,) = tangents
        return [self_t * (other + shift)]

    return backward, forward


def test_a_check_opinfo_skips_is_run_where_torchs_own_gradient_agrees_and_a_wrong_formula_still_fails(child, torch):
    unit = _unit(torch, "mul", "Scalar", ["self"], ["result"], [0])
    skip = {"backward": OPINFO_SKIP, "forward": "OpInfo: test_forward_mode_AD is an expected failure (float64)"}
    sample = _sample(torch, [torch.rand(3, 4, dtype=torch.float64), 2.5], skip)
    result = _check(child, torch, unit, sample, *_mul_scalar(0))
    assert result["status"] == "passed", (result["reason"], result.get("errors"))
    assert result["checks"] == {"backward": 1, "forward": 1}
    result = _check(child, torch, unit, sample, *_mul_scalar(1))
    assert result["status"] == "failed"
    assert {f["kind"] for f in result["failures"]} == {"backward", "forward"}


def _max_unpool2d_backward(torch):
    def backward(self, indices, output_size, result, grads, mask):
        (grad,) = grads
        if grad is None:
            return [None]
        return [grad.flatten(-2).gather(-1, indices.flatten(-2)).view_as(self)]  # (max_pool_double_backward)

    return backward


def test_a_check_opinfo_skips_stays_skipped_with_both_reasons_where_torchs_own_gradient_disagrees(child, torch):
    # max_unpool2d with two equal indices: one of the two values lands in the output, the backward gathers the
    # grad to both (OpInfo's reason to skip test_fn_grad); the CPU kernel gives the same output at every call, so
    # the determinism guard does not see it: torch's own gradcheck of the op disagrees there, and the check of the
    # right formula is not run (not reported failed)
    x = torch.randn(1, 1, 4, 4, dtype=torch.float64, generator=torch.Generator().manual_seed(0))
    _, indices = torch.nn.functional.max_pool2d(x, 2, return_indices=True)
    unit = _unit(torch, "max_unpool2d", "default", ["self"], ["result"], [0])
    values = torch.rand(1, 1, 2, 2, dtype=torch.float64)
    right = _sample(torch, [values, indices, [4, 4]], {"backward": OPINFO_SKIP})
    result = _check(child, torch, unit, right, _max_unpool2d_backward(torch))
    assert result["status"] == "passed", [f["message"] for f in result["failures"]]
    repeated = indices.clone()
    repeated.view(-1)[1] = repeated.view(-1)[0]
    sample = _sample(torch, [values, repeated, [4, 4]], {"backward": OPINFO_SKIP})
    result = _check(child, torch, unit, sample, _max_unpool2d_backward(torch))
    assert result["status"] == "not-checkable"
    assert result["reason"] == (
        f"every check was skipped: {OPINFO_SKIP}, and torch's own gradient disagrees with finite differences there"
    )


def test_what_opinfo_says_the_op_does_not_support_stays_skipped_without_asking_torch(child, torch):
    assert child.is_test_skip("OpInfo: test_fn_gradgrad is an expected failure (complex128)")
    assert not child.is_test_skip("OpInfo: no forward AD")
    unit = _unit(torch, "mul", "Scalar", ["self"], ["result"], [0])
    sample = _sample(torch, [torch.rand(3, dtype=torch.float64), 2.5], {"forward": "OpInfo: no forward AD"})
    result = _check(child, torch, unit, sample, *_mul_scalar(0))
    assert result["checks"] == {"backward": 1}


def test_a_units_samples_come_first_from_the_opinfo_whose_test_fn_grad_runs(child, torch):
    # (max_unpool3d's first OpInfo skips test_fn_grad, its samples repeat indices: torch's own gradient disagrees at
    # every one; its 'grad' variant's samples are those test_ops checks)
    unit = unit_request(torch, "max_unpool3d", "default", "self")
    found = child.find_samples(torch, [unit], 2)[unit["id"]]
    assert found and {(s["origin"], str(s["skip"])) for s in found} == {("nn.functional.max_unpool3d.grad", "{}")}


# --- linalg_eig: each eigenvector is defined up to a phase


def _eig(torch, conj=False):
    """linalg_eig's formulas: the backward through torch's own autograd, the jvp as linalg_eig_jvp computes it
    (conj: the gradient / tangent conjugated, a dropped conj)."""

    def backward(self, eigenvalues, eigenvectors, grads, mask):
        if all(g is None for g in grads):
            return [None]
        with torch.enable_grad():
            x = self.detach().requires_grad_(True)
            pairs = [(o, g) for o, g in zip(torch.linalg.eig(x), grads) if g is not None]
            (g,) = torch.autograd.grad([o for o, _ in pairs], x, [g for _, g in pairs])
        g = g.conj() if conj else g
        return [g if self.is_complex() else g.real]  # (handle_r_to_c)

    def forward(self, eigenvalues, eigenvectors, tangents):
        (self_t,) = tangents
        L, V = eigenvalues, eigenvectors
        dA = self_t.to(V.dtype)
        dP = torch.linalg.solve(V, dA.conj() if conj else dA) @ V
        E = L.unsqueeze(-2) - L.unsqueeze(-1)
        E.diagonal(0, -2, -1).fill_(1)
        dV = dP / E
        dV.diagonal(0, -2, -1).zero_()
        dV = V @ dV
        dV = dV - V * (V.mH @ dV).diagonal(0, -2, -1).real.unsqueeze(-2)  # (each eigenvector keeps norm 1)
        return [dP.diagonal(0, -2, -1), dV]

    return backward, forward


def test_eig_is_checked_on_the_absolute_values_of_its_eigenvectors_and_a_dropped_conj_fails(child, torch):
    unit = _unit(torch, "linalg_eig", "default", ["self"], ["eigenvalues", "eigenvectors"], [0, 1])
    generator = torch.Generator().manual_seed(0)
    x = torch.randn(3, 3, dtype=torch.complex128, generator=generator)
    sample = _sample(torch, [x], {}, torch.complex128)
    result = _check(child, torch, unit, sample, *_eig(torch))
    assert result["status"] == "passed", [
        f["message"][:300] for f in result["failures"]
    ]  # (on the eigenvectors themselves: the formula raises, a gauge)
    assert result["checks"] == {"backward": 1, "forward": 1}
    result = _check(child, torch, unit, sample, *_eig(torch, conj=True))
    assert result["status"] == "failed"
    assert {f["kind"] for f in result["failures"]} == {"backward", "forward"}
    # a wrong backward fails at the eigenvalues first, before the formula raises for the eigenvectors' gauge: the
    # right jvp is still checked on the eigenvectors' absolute values (on them as they are, it disagrees: a gauge)
    wrong_backward, right_forward = _eig(torch, conj=True)[0], _eig(torch)[1]
    result = _check(child, torch, unit, sample, wrong_backward, right_forward)
    assert [f["kind"] for f in result["failures"]] == ["backward"] and result["checks"] == {"backward": 1, "forward": 1}
    real = _sample(torch, [torch.randn(3, 3, dtype=torch.float64, generator=generator)], {})
    assert _check(child, torch, unit, real, *_eig(torch))["status"] == "passed"


# --- formulas that are not the derivative by design: a fact about the entry, where finite differences disagree


def test_formulas_not_the_derivative_by_design_are_recognised_by_a_rule_on_their_text(real_files):
    ops = [
        "normal.Tensor_float",
        "normal.Tensor_Tensor",
        "poisson",
        "_standard_gamma",
        "fake_quantize_per_channel_affine_cachemask",
        "_fake_quantize_learnable_per_tensor_affine",
        "_test_autograd_multiple_dispatch.fullcoverage",
        "rrelu_with_noise",
        "acos",
    ]
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags)
    rendered = render(collect_units(analysis, ops), "LIB", Templates(real_files.derivatives))
    kinds = {}
    for plan in rendered.plans:
        why = plan.by_design
        assert why is None or (is_fact(why) and why.startswith("not a derivative by design: "))
        kinds.setdefault(plan.unit.info.func.func.name.name.base, set()).add(why and why.split(": ")[1].split(" (")[0])
    assert kinds["normal"] == {"a random op whose formula is zeros"}
    assert kinds["poisson"] == {"a random op whose formula is zeros"}  # (reported only where the check disagrees)
    assert kinds["_standard_gamma"] == {"a random op's implicit reparameterization"}
    assert kinds["fake_quantize_per_channel_affine_cachemask"] == {"a straight-through estimator"}
    assert kinds["_fake_quantize_learnable_per_tensor_affine"] == {"a straight-through estimator"}
    assert kinds["_test_autograd_multiple_dispatch"] == {"an op of torch's own autograd tests"}
    assert kinds["rrelu_with_noise"] == kinds["acos"] == {None}  # (its noise held: a derivative, checked)


BY_DESIGN = "not a derivative by design: a random op whose formula is zeros (a test)"


def _zeros(self, *rest):
    """A formula of zeros for the first argument (rest: the other arguments, the outputs, the grads, the mask)."""
    grads = rest[-2]
    return [None if grads[0] is None else self.new_zeros(self.shape)]


def test_a_by_design_formula_that_finite_differences_disagree_with_is_a_fact_and_one_they_agree_with_is_checked(
    child, torch
):
    unit = _unit(torch, "normal", "Tensor_float", ["mean"], ["result"], [0])
    sample = _sample(torch, [torch.rand(3, 4, dtype=torch.float64), 1.0], {})
    failed = _check(child, torch, unit, sample, _zeros)
    assert failed["status"] == "failed"  # (at a fixed seed, d draw / d mean = 1)
    assert failed["failures"][0]["message"].startswith("largest mismatch")
    result = _check(child, torch, {**unit, "by_design": BY_DESIGN}, sample, _zeros)
    assert (result["status"], result["reason"], result["failures"]) == ("not-checkable", BY_DESIGN, [])
    skipped = _sample(torch, sample["args"], {"backward": OPINFO_SKIP})  # (torch's own zeros disagree there too)
    assert _check(child, torch, {**unit, "by_design": BY_DESIGN}, skipped, _zeros)["reason"] == BY_DESIGN

    def raises(*args):
        raise RuntimeError("Expecting `quant_min` <= 0")  # (a formula that raised: no disagreement was seen)

    assert _check(child, torch, {**unit, "by_design": BY_DESIGN}, sample, raises)["status"] == "failed"
    unit = _unit(torch, "poisson", "default", ["self"], ["result"], [0])  # (a draw of integers: zeros is right)
    sample = _sample(torch, [torch.rand(3, 4, dtype=torch.float64) * 3 + 1], {})

    result = _check(child, torch, {**unit, "by_design": BY_DESIGN}, sample, _zeros)
    assert result["status"] == "passed", (result["reason"], result.get("errors"))
    assert result["checks"] == {"backward": 1}


def _ones(self, *rest):
    """A formula of ones for the first argument: wrong wherever the op's draw is piecewise constant in it."""
    grads = rest[-2]
    return [None if grads[0] is None else grads[0] * self.new_ones(self.shape)]


def test_an_edited_by_design_formula_that_disagrees_where_torchs_own_gradient_agrees_still_fails(child, torch):
    # poisson's entry matches the by-design rule (a random op whose formula is zeros), and its zeros are also the
    # derivative (an integer draw at a fixed seed): torch's own gradient agrees with finite differences there, so
    # an edit that disagrees is a mistake, not the entry's design
    unit = {**_unit(torch, "poisson", "default", ["self"], ["result"], [0]), "by_design": BY_DESIGN}
    sample = _sample(torch, [torch.rand(3, 4, dtype=torch.float64) * 3 + 1], {})
    result = _check(child, torch, unit, sample, _ones)
    assert result["status"] == "failed", (result["reason"], result.get("errors"))
    assert result["failures"][0]["message"].startswith("largest mismatch")
