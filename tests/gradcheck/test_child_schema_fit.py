"""Inputs made from the schema that fit the op (issue 52, derivls/gradcheck/child/schema.py and checks.py, run here
in-process with the installed torch: no compiler): a fixed-length int list as long as its schema says, weight norm's
magnitude shaped like its norm, batched float32 matrices for _grouped_mm, a `*_backward` function's indices made by
its forward, small inputs where every OpInfo sample was too large, only the outputs with a formula looked at for
special points, an op whose only kernel raises for an out-of-tree backend as a fact."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck


def _unit(torch, aten, overload, *wrt, grads=(0,), backward="bw"):
    """A unit as the engine sends it, with the node's outputs and the grads its formulas read."""
    returns = getattr(getattr(torch.ops.aten, aten), overload)._schema.returns
    unit = unit_request(torch, aten, overload, *wrt)
    unit["outputs"] = [r.name or f"result{i}" for i, r in enumerate(returns)] if len(returns) > 1 else ["result"]
    unit["grads"], unit["backward"], unit["fw_inputs"] = list(grads), backward, []
    return unit


def _formulas(backward):
    """What the compiled extension holds: one backward function, `bw`."""
    return type("Formulas", (), {"bw": staticmethod(backward)})


def _checked_and_a_wrong_formula_fails(child, torch, overload, unit, right, wrong, found=()):
    """The unit passes with the right formula; with a wrong one, a check of the same inputs fails."""
    result = child.check_unit(torch, _formulas(right), unit, list(found), {})
    assert result["status"] == "passed", result.get("reason")
    wrong_result = child.check_unit(torch, _formulas(wrong), unit, list(found), {})
    assert wrong_result["status"] != "passed"
    samples = list(found) or child.fitting_schema_samples(torch, unit, overload)
    values = list(samples[0]["args"])
    verdicts = [
        child.run_check(torch, overload, unit, values, slot, "backward", wrong, None, {})[0]
        for slot in child.leaf_slots(torch, unit, values)
    ]
    assert not all(verdicts)
    return result


def test_a_fixed_length_int_list_gets_as_many_values_as_its_schema_says(child, torch):
    overload = torch.ops.aten._nnpack_spatial_convolution.default  # (SymInt[2] padding, SymInt[2] stride=[1, 1])
    values = child.schema_retry(torch, overload, (2, 3, 4, 4), None, None, False)
    assert values[3] == [0, 0]  # (not the input's four sizes: "a list of 2 values to match the convolution dims")
    assert child.fixed_int_list("stride", values[0], 2) == [1, 1]


def test_weight_norms_magnitude_is_shaped_like_the_norm_of_v_and_checked_there(child, torch):
    aten = torch.ops.aten
    overload = aten._weight_norm_interface.default
    unit = _unit(torch, "_weight_norm_interface", "default", "v", "g")
    (sample,) = child.fitting_schema_samples(torch, unit, overload)
    v, g, dim = sample["args"]
    assert (tuple(v.shape), tuple(g.shape), dim) == ((3, 4), (3, 1), 0)

    def right(v, g, dim, result0, result1, grads, mask):
        if grads[0] is None:
            return [None, None]
        return list(aten._weight_norm_interface_backward(grads[0].contiguous(), v, g, result1, dim))

    def wrong(v, g, dim, result0, result1, grads, mask):
        grad_v, grad_g = right(v, g, dim, result0, result1, grads, mask)
        return [grad_v, None if grad_g is None else -grad_g]

    result = _checked_and_a_wrong_formula_fails(child, torch, overload, unit, right, wrong)
    assert result["inputs"] == "schema" and result["checks"] == {"backward": 2}


def test_grouped_mm_gets_batched_float32_matrices_without_offsets_and_is_checked_there(child, torch):
    overload = torch.ops.aten._grouped_mm.default  # (refuses float64; 3-d x 3-d needs no offs, rows of 16 bytes)
    unit = _unit(torch, "_grouped_mm", "default", "self", "mat2")
    (sample,) = child.fitting_schema_samples(torch, unit, overload)
    a, b, offs, bias, _ = sample["args"]
    assert (a.dtype, a.dim(), b.dim(), offs, bias) == (torch.float32, 3, 3, None, None)

    def right(self, mat2, offs, bias, out_dtype, result, grads, mask):
        (grad,) = grads
        return [None, None] if grad is None else [grad @ mat2.mT, self.mT @ grad]

    def wrong(self, mat2, offs, bias, out_dtype, result, grads, mask):
        (grad,) = grads
        return [None, None] if grad is None else [grad @ mat2.mT, mat2.mT @ grad]

    result = _checked_and_a_wrong_formula_fails(child, torch, overload, unit, right, wrong)
    assert result["checks"] == {"backward": 2}


def test_a_backward_functions_indices_are_made_by_running_its_forward(child, torch):
    aten = torch.ops.aten
    overload = aten._embedding_bag_dense_backward.default  # (its forward: _embedding_bag, by its name's first words)
    unit = _unit(torch, "_embedding_bag_dense_backward", "default", "grad", "per_sample_weights")
    (sample,) = child.fitting_schema_samples(torch, unit, overload)
    assert sample["origin"] == "schema-made (by its forward, _embedding_bag)"
    grad, indices, offset2bag, bag_size, maximum_indices, num_weights, scale, mode, weights, _ = sample["args"]
    assert indices.dim() == 1 and not indices.is_floating_point() and int(indices.max()) < num_weights
    assert offset2bag.shape == indices.shape and bag_size.shape == maximum_indices.shape == grad.shape[:1]
    assert overload(*sample["args"]).shape == (num_weights, grad.shape[1])  # (the grad of the forward's weight)


def test_every_opinfo_sample_too_large_falls_back_to_small_inputs_made_from_the_schema(child, torch):
    overload = torch.ops.aten.slice_scatter.default
    unit = _unit(torch, "slice_scatter", "default", "self", "src")

    def right(self, src, dim, start, end, step, result, grads, mask):
        (grad,) = grads
        if grad is None:
            return [None, None]
        return [torch.slice_scatter(grad, torch.zeros_like(src), dim, start, end, step), grad[start:end:step]]

    def wrong(self, src, dim, start, end, step, result, grads, mask):
        (grad,) = grads
        if grad is None:
            return [None, None]
        return [torch.slice_scatter(grad, torch.zeros_like(src), dim, start, end, step), grad.flip(0)]

    child.DROPPED[unit["id"]] = "too large for a dense gradcheck (a tensor of over 4096 elements)"
    try:
        result = _checked_and_a_wrong_formula_fails(child, torch, overload, unit, right, wrong)
        assert result["inputs"] == "schema" and result["checks"] == {"backward": 2}
        child.DROPPED[unit["id"]] = "of a sparse or nested layout (a dense gradcheck of strided tensors only)"
        kept = child.check_unit(torch, _formulas(right), unit, [], {})  # (only the too large ones fall back)
        assert kept["status"] == "not-checkable" and "sparse or nested" in kept["reason"]
    finally:
        del child.DROPPED[unit["id"]]


def _ctc_sample(torch):
    """nn.functional.ctc_loss's kind of sample, as reached inside it: log_softmax'd log_probs (T, N, C), int
    targets, input lengths at least the target lengths."""
    generator = torch.Generator().manual_seed(0)
    log_probs = torch.randn(6, 2, 4, dtype=torch.float64, generator=generator).log_softmax(2)
    targets = torch.randint(1, 4, (2, 3), generator=generator)
    args = (log_probs, targets, [6, 5], [3, 2], 0, False)
    return {"dtype": torch.float64, "args": args, "kwargs": {}, "origin": "an OpInfo", "skip": {}, "transforms": {}}


def test_special_points_are_looked_for_in_the_outputs_with_a_formula_only(child, torch):
    aten = torch.ops.aten
    overload = aten._ctc_loss.default  # (its second output, log_alpha, is -inf where no path reaches)
    sample = {**_ctc_sample(torch), "points": True}  # (a sample reached inside another op: its points are looked at)
    values = list(sample["args"])
    assert not bool(torch.isfinite(overload(*values)[1]).all())
    assert child.unstable_elements(torch, overload, values, 0, range(3)) == {0, 1, 2}
    assert child.unstable_elements(torch, overload, values, 0, range(values[0].numel()), [0]) == set()
    impossible = [values[0], values[1], [2, 5], [3, 2], 0, False]  # (3 labels in 2 steps: an infinite loss)
    assert child.unstable_elements(torch, overload, impossible, 0, range(3), [0]) == {0, 1, 2}
    unit = _unit(torch, "_ctc_loss", "default", "log_probs")

    def right(log_probs, targets, input_lengths, target_lengths, blank, zero_infinity, result0, result1, grads, mask):
        if grads[0] is None:
            return [None]
        return [
            aten._ctc_loss_backward(
                grads[0], log_probs, targets, input_lengths, target_lengths, result0, result1, blank, zero_infinity
            )
        ]

    def wrong(*args):
        (grad,) = right(*args)
        return [None if grad is None else 2 * grad]

    result = child.check_unit(torch, _formulas(right), unit, [sample], {})
    assert (result["status"], result["inputs"], result["checks"]) == ("passed", "opinfo", {"backward": 1})
    assert child.check_unit(torch, _formulas(wrong), unit, [sample], {})["status"] == "failed"


def test_a_sample_skipped_for_a_backwards_intermediate_falls_back_to_inputs_made_from_the_schema(child, torch):
    aten = torch.ops.aten
    # (rrelu_with_noise_backward reached through rrelu's backward: its `noise` has no formula)
    unit = _unit(torch, "rrelu_with_noise_backward", "default", "grad_output", "self")
    x = torch.rand(3, 4, dtype=torch.float64) - 0.5
    args = (torch.rand(3, 4, dtype=torch.float64), x, torch.rand(3, 4, dtype=torch.float64), 0.1, 0.3, True, False)
    reached = {"dtype": torch.float64, "args": args, "kwargs": {}, "origin": "rrelu's backward", "skip": {}}
    reached = {**reached, "transforms": {}, "from_backward": True}
    skipped = child.check_samples(torch, _formulas(None), unit, [reached], {})
    assert skipped["reason"] == "every check was skipped: " + child.INTERMEDIATE

    def right(grad_output, self, noise, lower, upper, training, self_is_result, result, grads, mask):
        if grads[0] is None:
            return [None, None]
        return [aten.rrelu_with_noise_backward(grads[0], self, noise, lower, upper, training, False), 0 * grads[0]]

    def wrong(grad_output, self, noise, lower, upper, training, self_is_result, result, grads, mask):
        return [None, None] if grads[0] is None else [2 * grads[0], 0 * grads[0]]

    result = child.check_unit(torch, _formulas(right), unit, [reached], {})
    assert (result["status"], result["inputs"]) == ("passed", "schema")
    assert child.check_unit(torch, _formulas(wrong), unit, [reached], {})["status"] != "passed"
    (sample,) = child.fitting_schema_samples(torch, unit, aten.rrelu_with_noise_backward.default)
    values = list(sample["args"])
    (slot, _) = child.leaf_slots(torch, unit, values)  # (grad_output's: a wrong formula fails there)
    ok, _, _ = child.run_check(
        torch, aten.rrelu_with_noise_backward.default, unit, values, slot, "backward", wrong, None, {}
    )
    assert not ok


def test_an_op_whose_only_kernel_raises_for_an_out_of_tree_backend_is_a_fact(child, torch):
    unit = _unit(torch, "convolution_overrideable", "default", "input", "weight", "bias")
    result = child.check_samples(torch, _formulas(None), unit, [], {})
    assert result["status"] == "not-checkable"
    assert result["reason"] == "no CPU kernel: the op's only kernel raises, for an out-of-tree backend to override it"
    assert child.schema_refusal(torch, torch.ops.aten.convolution_overrideable.default).startswith(
        "NotImplementedError: convolution_overrideable not implemented."
    )


def test_an_lstm_layer_gets_an_lstms_inputs_and_its_grad_mode_only_workspace_and_is_checked(child, torch):
    aten = torch.ops.aten
    overload = aten.mkldnn_rnn_layer.default  # (float32 only; its workspace, result3, is made in grad mode only)
    wrt = ("input", "weight0", "weight1", "weight2", "weight3", "hx_", "cx_")
    unit = _unit(torch, "mkldnn_rnn_layer", "default", *wrt, grads=(0, 1, 2))
    (sample,) = child.fitting_schema_samples(torch, unit, overload)
    assert sample["origin"] == "schema-made (an LSTM layer's input, weights and state, float32)"

    def right(*args):  # (the schema's 16 arguments, the 4 results, the grads of the first 3, the mask)
        x, w0, w1, w2, w3, hx, cx, reverse, batch_sizes, mode, hidden, layers, biases, bidirectional, first, train = (
            args[:16]
        )
        (out, hy, cy, workspace), grads = args[16:20], args[20]
        if all(g is None for g in grads):
            return [None] * 7
        state = (x, w0, w1, w2, w3, hx, cx, out, hy, cy, *grads)
        flags = (reverse, mode, hidden, layers, biases, train, bidirectional, batch_sizes, first, workspace)
        return list(aten.mkldnn_rnn_layer_backward(*state, *flags))

    def wrong(*args):
        grads = right(*args)
        return [None if g is None else -g for g in grads[:1]] + grads[1:]

    result = _checked_and_a_wrong_formula_fails(child, torch, overload, unit, right, wrong)
    assert result["checks"] == {"backward": 7}
