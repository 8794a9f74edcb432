"""Inputs the gradcheck child makes from an overload's schema when no OpInfo sample reaches it
(derivls/gradcheck/child/schema.py, run here in-process with the installed torch: no compiler): what an argument's
name and type say it must be, a `*_backward` function's grad shaped by its forward, and float32 where a kernel
refuses float64, checked at float32's tolerances."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck


def test_a_backward_functions_grad_is_shaped_like_its_forwards_output(child, torch):
    aten = torch.ops.aten
    unit = unit_request(torch, "_upsample_bicubic2d_aa_backward", "default", "grad_output")
    (sample,) = child.fitting_schema_samples(torch, unit, aten._upsample_bicubic2d_aa_backward.default)
    grad_output, output_size, input_size = sample["args"][:3]
    assert grad_output.shape == aten._upsample_bicubic2d_aa(torch.rand(input_size), output_size, False).shape
    # grad_output comes first, but a convolution's input and weight are made first, the grad after (by the forward)
    unit = unit_request(torch, "_slow_conv2d_backward", "output_mask", "grad_output", "self", "weight")
    (sample,) = child.fitting_schema_samples(torch, unit, aten._slow_conv2d_backward.output_mask)
    grad_output, self, weight = sample["args"][:3]
    assert (self.dim(), weight.dim(), grad_output.shape[1]) == (4, 4, weight.shape[0])


def test_arguments_get_what_their_names_and_types_say(child, torch):
    aten = torch.ops.aten
    unit = unit_request(torch, "affine_grid_generator", "default", "theta")
    (sample,) = child.fitting_schema_samples(torch, unit, aten.affine_grid_generator.default)
    assert sample["args"][0].shape == (1, 2, 3) and sample["args"][1] == [1, 2, 4, 4]  # (theta, the image's size)
    unit = unit_request(torch, "_pack_padded_sequence", "default", "input")
    (sample,) = child.fitting_schema_samples(torch, unit, aten._pack_padded_sequence.default)
    steps, batch = sample["args"][0].shape[:2]
    lengths = sample["args"][1]
    assert lengths.shape == (batch,) and lengths.dtype == torch.int64  # (one per batch element, descending)
    assert lengths.tolist() == sorted(lengths.tolist(), reverse=True) and int(lengths.max()) <= steps
    unit = {**unit_request(torch, "_foreach_pow", "ScalarAndTensor", "exponent"), "wrt": [("exponent", True)]}
    (sample,) = child.fitting_schema_samples(torch, unit, aten._foreach_pow.ScalarAndTensor)
    assert len(sample["args"][1]) == 2 and all(t.dtype == torch.float64 for t in sample["args"][1])


def test_a_kernel_that_refuses_float64_gets_float32_inputs(child, torch):
    unit = unit_request(torch, "_grid_sampler_2d_cpu_fallback", "default", "input", "grid")
    (sample,) = child.fitting_schema_samples(torch, unit, torch.ops.aten._grid_sampler_2d_cpu_fallback.default)
    assert sample["dtype"] == torch.float32 and sample["origin"].endswith(", float32)")
    assert sample["args"][1].shape[-1] == 2  # (a sampling grid)


def _square_backward(torch, sign):
    def backward(self, result, grads, mask):
        (grad,) = grads
        return [None if grad is None else sign * 2 * grad * self]

    return backward


def test_a_float32_sample_is_checked_at_float32_tolerances_and_a_wrong_formula_still_fails(child, torch):
    overload = torch.ops.aten.square.default
    unit = {**unit_request(torch, "square", "default", "self"), "outputs": ["result"], "grads": [0]}
    values = [torch.rand(3, 4, dtype=torch.float32) + 0.5]
    (slot,) = child.leaf_slots(torch, unit, values)
    ok, message, _ = child.run_check(
        torch, overload, unit, values, slot, "backward", _square_backward(torch, 1), None, {}
    )
    assert ok, message  # (at float64's step and tolerances, rounding alone fails it)
    ok, _, _ = child.run_check(torch, overload, unit, values, slot, "backward", _square_backward(torch, -1), None, {})
    assert not ok


def test_a_sparse_or_mkldnn_output_is_seen_as_its_dense_values(child, torch):
    x = torch.rand(3, 4, dtype=torch.float64)
    assert torch.equal(child.to_flat(torch, x.to_sparse_csr()), x)
    assert torch.equal(child.to_flat(torch, x.float().to_mkldnn()), x.float())
    flat = child.flat_output(torch, torch.ops.aten._to_sparse_csr.default, [x, None])
    assert flat is not None and torch.equal(flat, x.reshape(-1).to(torch.complex128))


def test_an_overload_no_sample_reaches_gets_its_sibling_overloads_samples_by_argument_name(child, torch):
    aten = torch.ops.aten
    unit = unit_request(torch, "norm", "Scalar", "self")  # (OpInfos reach norm.ScalarOpt_dim, not norm.Scalar)
    reach = {"aten::norm.ScalarOpt_dim": ["nn.functional.triplet_margin_loss"]}  # (a part of the reach index)
    found = child.find_samples(torch, [unit], 2, reach)[unit["id"]]
    assert found and all(s["origin"].endswith("(through aten.norm.ScalarOpt_dim)") for s in found)
    assert all(len(s["args"]) == 2 and isinstance(s["args"][0], torch.Tensor) for s in found)  # (self, p)
    sibling = {"dtype": torch.float64, "args": (torch.rand(3), None, [0]), "kwargs": {}}
    # a None p does not fit norm.Scalar's `Scalar p=2`: its default; a dtype the schema needs: the sample's
    assert child.as_overload(torch, aten.norm.Scalar, aten.norm.ScalarOpt_dim, sibling)[1] == 2
    assert child.as_overload(torch, aten.norm.ScalarOpt_dtype, aten.norm.ScalarOpt_dim, sibling)[2] == torch.float64


def test_values_above_one_are_a_retry_for_an_op_defined_there(child, torch):
    unit = unit_request(torch, "special_zeta", "self_scalar", "other")  # (zeta(0.75, q) is nan)
    (sample,) = child.fitting_schema_samples(torch, unit, torch.ops.aten.special_zeta.self_scalar)
    assert sample["origin"] == "schema-made (values above 1)" and sample["args"][0] == 1.75


def test_a_unit_whose_opinfo_samples_all_lie_outside_its_domain_is_checked_on_schema_made_inputs(child, torch):
    unit = {**unit_request(torch, "special_zeta", "default", "other"), "outputs": ["result"], "grads": [0]}
    unit["backward"], unit["fw_inputs"] = "zeta_backward", []

    class Formulas:  # (what the compiled extension holds: the entry's formula for `other`)
        @staticmethod
        def zeta_backward(self, other, result, grads, mask):
            (grad,) = grads
            return [None if grad is None else grad * -self * torch.special.zeta(self + 1.0, other)]

    below = (torch.rand(3, dtype=torch.float64) - 2, torch.rand(3, dtype=torch.float64) + 0.5)  # (zeta(x < 1): nan)
    found = [{"dtype": torch.float64, "args": below, "kwargs": {}, "origin": "an OpInfo", "skip": {}, "transforms": {}}]
    assert child.check_samples(torch, Formulas, unit, found, {})["reason"].endswith("not finite")
    result = child.check_unit(torch, Formulas, unit, found, {})
    assert (result["status"], result["inputs"]) == ("passed", "schema")
