"""How the gradcheck child follows OpInfo (derivls/gradcheck/child/, run here in-process with the installed
torch: no compiler): the checks test_ops skips or expects to fail are not run, a gradcheck_wrapper's change
of an input is applied, samples a dense gradcheck cannot use are recognised."""

from __future__ import annotations

import pytest

from tests.gradcheck.conftest import unit_request

pytestmark = pytest.mark.gradcheck


def _op(name: str, variant: str = ""):
    from torch.testing._internal.common_methods_invocations import op_db

    return next(op for op in op_db if op.name == name and op.variant_test_name == variant)


def test_an_expected_failure_of_test_forward_mode_ad_is_not_checked_in_that_dtype_only(child, torch):
    op = _op("logcumsumexp")  # OpInfo: expectedFailure of test_forward_mode_AD for complex128
    assert "expected failure" in child.opinfo_skips(torch, op, torch.complex128)["forward"]
    assert "forward" not in child.opinfo_skips(torch, op, torch.float64)
    assert "backward" not in child.opinfo_skips(torch, op, torch.complex128)


def test_a_tolerance_override_is_not_a_skip(child, torch):
    op = _op("acos")
    assert child.opinfo_skips(torch, op, torch.float64) == {}


def test_a_hermitian_input_wrapper_is_found_and_applied_to_that_input(child, torch):
    op = _op("cholesky")
    sample = next(iter(op.sample_inputs("cpu", torch.float64)))
    transforms = child.wrapper_transforms(torch, op, sample)
    assert set(transforms) == {0}
    a = torch.randn(3, 3, dtype=torch.float64)
    assert torch.equal(transforms[0](a), a + a.mH)


def test_an_identity_wrapper_changes_nothing(child, torch):
    op = _op("acos")
    sample = next(iter(op.sample_inputs("cpu", torch.float64)))
    assert child.wrapper_transforms(torch, op, sample) == {}


def test_non_finite_samples_and_random_results_are_recognised(child, torch):
    assert not child.all_finite(torch, ([torch.tensor([1.0, float("nan")])], {}))
    assert child.all_finite(torch, ([torch.tensor([1, 2])], {"alpha": torch.tensor(0.5)}))
    p = torch.full((64,), 0.5, dtype=torch.float64)
    assert not child.same(torch, torch.bernoulli(p), torch.bernoulli(p))
    assert child.same(torch, (torch.tensor([float("nan")]),), (torch.tensor([float("nan")]),))


def test_a_sample_has_a_non_empty_floating_input_the_entry_has_a_formula_for(child, torch):
    unit = unit_request(torch, "cholesky_inverse", "default", "self")  # OpInfo's first samples are empty matrices
    found = child.find_samples(torch, [unit], 2)[unit["id"]]
    assert found and all(s["args"][0].numel() > 0 for s in found)


def test_samples_are_asked_for_as_test_ops_asks_for_gradient_samples(child, torch):
    # with requires_grad=False, OpInfo adds embedding samples with padding_idx (whose gradient is 0 by design)
    unit = unit_request(torch, "embedding", "default", "weight")
    found = child.find_samples(torch, [unit], 8)[unit["id"]]
    schema = torch.ops.aten.embedding.default
    assert found and all(child.positional(schema, s["args"], s["kwargs"])[2] == -1 for s in found)


def test_a_backward_function_gets_the_calls_of_the_backward_the_reach_index_names(child, torch):
    unit = unit_request(torch, "upsample_nearest2d_backward", "default", "grad_output")
    assert child.find_samples(torch, [unit], 2, {}) == {unit["id"]: []}
    reach = {"aten::upsample_nearest2d_backward.default": ["nn.functional.interpolate.nearest@backward"]}
    found = child.find_samples(torch, [unit], 2, reach)[unit["id"]]
    assert found and all(s["from_backward"] and s["origin"] == "nn.functional.interpolate.nearest" for s in found)


def test_a_function_only_a_module_reaches_gets_that_modules_samples(child, torch):
    unit = unit_request(torch, "convolution_backward", "default", "grad_output", "input", "weight")
    reach = {"aten::convolution_backward.default": ["module:nn.Conv2d@backward"]}
    found = child.find_samples(torch, [unit], 2, reach)[unit["id"]]
    assert len(found) == 2 and all(s["from_backward"] and s["origin"] == "module:nn.Conv2d" for s in found)


def test_the_reach_index_lists_backward_and_module_sources(child, torch, monkeypatch):
    from torch.testing._internal import common_methods_invocations, common_modules

    monkeypatch.setattr(common_methods_invocations, "op_db", [_op("nn.functional.interpolate", "nearest")])
    monkeypatch.setattr(common_modules, "module_db", [m for m in common_modules.module_db if m.name == "nn.Conv2d"])
    index = child.reach_index(torch)
    assert "nn.functional.interpolate.nearest@backward" in index["aten::upsample_nearest2d_backward.default"]
    assert "nn.functional.interpolate.nearest" in index["aten::upsample_nearest2d.default"]
    assert "module:nn.Conv2d@backward" in index["aten::convolution_backward.default"]


def _log_sigmoid_backward_formulas(torch):
    """derivatives.yaml's log_sigmoid_backward formulas in Python: grad_output's, and self's
    (log_sigmoid_double_backward: the buffer is a function of self)."""

    def backward(grad_output, self, buffer, result, grads, mask):
        (grad,) = grads
        if grad is None:  # (an undefined output grad)
            return [None, None]
        s = torch.sigmoid(self)
        return [torch.ops.aten.log_sigmoid_backward(grad, self, buffer), -grad * grad_output * s * (1 - s)]

    return backward


def test_a_backward_functions_forward_intermediate_is_made_again_from_the_varied_input(child, torch):
    unit = {**unit_request(torch, "log_sigmoid_backward", "default", "grad_output", "self"), "outputs": ["result"]}
    unit["grads"] = [0]
    overload = torch.ops.aten.log_sigmoid_backward.default
    (sample, *_) = child.find_samples(torch, [unit], 2)[unit["id"]]
    assert sample["from_backward"] and sample["lineage"][2]["kind"] == "intermediate"  # buffer: log_sigmoid_forward's
    values = child.positional(overload, sample["args"], sample["kwargs"])
    slots, stale = child.backward_slots(torch, unit, values, child.leaf_slots(torch, unit, values), sample)
    assert not stale and [s["name"] for s in slots] == ["grad_output", "self"]
    self_slot = slots[1]
    backward = _log_sigmoid_backward_formulas(torch)
    ok, message, _ = child.run_check(
        torch, overload, unit, values, self_slot, "backward", backward, None, {}, lineage=sample["lineage"]
    )
    assert ok, message
    # held fixed, the buffer is stale as self varies: the right formula then disagrees with finite differences
    ok, _, _ = child.run_check(torch, overload, unit, values, self_slot, "backward", backward, None, {})
    assert not ok


def test_a_backward_call_argument_of_unknown_making_still_skips_the_sample(child, torch):
    unit = unit_request(torch, "log_sigmoid_backward", "default", "grad_output", "self")
    overload = torch.ops.aten.log_sigmoid_backward.default
    (sample, *_) = child.find_samples(torch, [unit], 2)[unit["id"]]
    values = child.positional(overload, sample["args"], sample["kwargs"])
    slots = child.leaf_slots(torch, unit, values)
    unknown = {**sample, "lineage": {}}  # (buffer neither made by a call seen nor one of the sample's inputs)
    assert child.backward_slots(torch, unit, values, slots, unknown)[1]
    assert child.backward_slots(torch, unit, values, slots, {**sample, "lineage": None})[1]  # (no lineage: as before)


def test_a_foreach_function_gets_its_own_opinfos_samples_cut_to_a_few_list_elements(child, torch):
    overload = torch.ops.aten._foreach_div.List
    unit = {**unit_request(torch, "_foreach_div", "List"), "wrt": [("self", True), ("other", True)]}
    found = child.find_samples(torch, [unit], 2)[unit["id"]]  # (from torch's foreach OpInfos: not in op_db)
    assert found and all(s["origin"] == "_foreach_div" for s in found)
    values = child.foreach_values(torch, unit, child.positional(overload, found[0]["args"], found[0]["kwargs"]))
    assert [len(v) for v in values] == [child.FOREACH_ITEMS] * 2
    assert values[0][0].shape == values[1][0].shape  # (the same elements of both lists)
    assert [s["item"] for s in child.leaf_slots(torch, unit, values)] == [0, 1, 0, 1]


def _schema_unit(torch, aten, overload, *wrt):
    return {**unit_request(torch, aten, overload, *wrt)}


def test_schema_made_inputs_the_op_rejects_are_retried_with_other_ranks_shapes_and_dtypes(child, torch):
    matmul = child.fitting_schema_samples(
        torch, _schema_unit(torch, "matmul", "default", "self", "other"), torch.ops.aten.matmul.default
    )
    assert matmul[0]["origin"] == "schema-made (square matrices)"  # (3x4 @ 3x4 is refused)
    fill = child.fitting_schema_samples(
        torch, _schema_unit(torch, "fill", "Tensor", "self", "value"), torch.ops.aten.fill.Tensor
    )
    assert fill[0]["args"][1].dim() == 0  # (fill's value must be a 0-dim tensor)
    conj = child.fitting_schema_samples(
        torch, _schema_unit(torch, "_conj_copy", "default", "self"), torch.ops.aten._conj_copy.default
    )
    assert conj[0]["dtype"] == torch.complex128
    masked = child.fitting_schema_samples(
        torch, _schema_unit(torch, "_masked_softmax", "default", "self"), torch.ops.aten._masked_softmax.default
    )
    assert masked[0]["args"][1].dtype == torch.bool  # (a mask by its name)
    conv = child.fitting_schema_samples(
        torch,
        _schema_unit(torch, "slow_conv_transpose2d", "default", "self"),
        torch.ops.aten.slow_conv_transpose2d.default,
    )
    assert conv[0]["origin"] == "schema-made (a transposed 2-d convolution's)"
    assert conv[0]["args"][1].shape == (2, 3, 2, 2) and conv[0]["args"][2] == [2, 2]  # (weight, kernel_size)


def test_a_retry_that_crashes_the_kernel_is_tried_in_a_forked_copy_and_not_used(child, torch):
    overload = torch.ops.aten._slow_conv2d_backward.output_mask  # (segfaults on shapes it does not check)
    values = child.schema_retry(torch, overload, (2, 3, 4), (3,), None, False)
    assert values is not None and not child.survives(torch, overload, values)
    assert child.survives(torch, torch.ops.aten.acos.default, [torch.rand(3, dtype=torch.float64)])


def test_an_op_without_a_kernel_for_dense_cpu_tensors_is_reported_so(child, torch):
    assert child.no_cpu_kernel(torch, torch.ops.aten.cudnn_convolution.default).startswith("no CPU kernel:")
    assert child.no_cpu_kernel(torch, torch.ops.aten.acos.default) is None
    assert child.no_cpu_kernel(torch, torch.ops.aten.max_pool2d.default) is None  # (a composite one runs on CPU)


def test_a_formula_calling_an_op_without_a_cpu_kernel_is_reported_as_that_fact(child):
    message = "the formula raised RuntimeError: Could not run 'aten::matmul_backward' with arguments from the 'CPU' "
    assert child.formula_without_cpu_kernel(message + "backend.") == (
        "no CPU kernel: the formula calls aten::matmul_backward, which has no kernel for dense CPU tensors"
    )
    assert child.formula_without_cpu_kernel("largest mismatch: d output[2] / d input[2]") is None


def test_an_op_that_calls_another_backend_s_op_on_schema_inputs_is_reported_as_that_fact(child):
    message = "NotImplementedError: Could not run 'aten::_nested_get_values' with arguments from the 'CPU' backend."
    assert child.op_without_cpu_kernel(message) == (
        "no CPU kernel: the op calls aten::_nested_get_values, which has no kernel for dense CPU tensors"
    )
    assert child.op_without_cpu_kernel("RuntimeError: Cannot access accelerator device when none is available.")
    assert child.op_without_cpu_kernel("RuntimeError: expected scalar type Long but found Double") is None


def test_a_nested_tensor_goes_flat_for_gradcheck_and_back_for_the_formula(child, torch):
    nt = child.nested_tensor(torch, [torch.rand(3, 4, dtype=torch.float64), torch.rand(2, 4, dtype=torch.float64)])
    flat = child.to_flat(torch, nt)
    assert flat.shape == (20,) and not flat.is_nested
    back = child.from_flat(torch, flat, child.structure(torch, nt))
    assert back.is_nested and all(bool((a == b).all()) for a, b in zip(back.unbind(), nt.unbind()))
    dense = torch.rand(3)
    assert child.to_flat(torch, dense) is dense and child.from_flat(torch, dense, None) is dense


def test_a_nested_formula_s_samples_are_the_default_s_made_nested_with_dims_past_the_batch_dim(child, torch):
    overload = torch.ops.aten.sum.dim_IntList
    unit = {"wrt": [["self", False]], "args": ["self", "dim", "keepdim", "dtype"]}
    sample = {"dtype": torch.float64, "args": (torch.rand(3, 4, dtype=torch.float64), [1], True), "kwargs": {}}
    (made,) = child.nested_samples(torch, overload, unit, [dict(sample, origin="sum", skip={}, transforms={})])
    self, dim, keepdim = made["args"][:3]
    assert self.is_nested and [tuple(c.shape) for c in self.unbind()] == [(3, 4), (2, 4)]  # (ragged)
    assert dim == [2] and keepdim is True  # (the components' dim 1 is the nested tensor's dim 2)
    assert made["nested"] and made["origin"] == "sum, as a nested tensor (ragged)"
    # keepdim=False: the nested kernel refuses it (a fact of the kernel), so no sample is made of it
    refused = dict(sample, args=(sample["args"][0], [1], False), origin="sum", skip={}, transforms={})
    assert child.nested_samples(torch, overload, unit, [refused]) == []


def test_an_op_without_a_kernel_for_nested_cpu_tensors_is_reported_so(child, torch):
    assert child.no_nested_kernel(torch, torch.ops.aten.sum.default).startswith("no CPU kernel: aten::sum has no")
    assert child.no_nested_kernel(torch, torch.ops.aten.select.int) is None
