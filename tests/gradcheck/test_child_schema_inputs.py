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
