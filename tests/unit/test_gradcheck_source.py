"""What `derivls gradcheck` compiles and refuses, without a compiler or torch: the harness around the
node derivls renders, which entries are left out and why, and the release check."""

from __future__ import annotations

from pathlib import Path

from derivls.compile.file_templates import Templates
from derivls.compile.units import collect_units
from derivls.gradcheck.release import release_mismatch
from derivls.gradcheck.source import render
from derivls.project.analyse import analyse_path


def _units(real_files, *ops):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags)
    return collect_units(analysis, list(ops))


def test_a_node_runs_its_own_apply_with_the_mask_as_grad_input_mask(real_files):
    rendered = render(_units(real_files, "acos"), "LIB", Templates(real_files.derivatives))
    (plan,) = rendered.plans
    source = rendered.source
    assert "struct AcosBackward0_0_gc : public AcosBackward0" in source
    assert "bool task_should_compute_output(std::initializer_list<IndexRange> idxs) const" in source
    assert "return AcosBackward0_apply_functional(std::move(grads), needs_input_grad, self);" in source
    assert "grad_fn->self_ = SavedVariable(self, false);" in source  # VariableType's save statement
    assert "c10::make_intrusive<AcosBackward0_0_gc>()" in source
    assert 'm.def("AcosBackward0_0_bw(Tensor self, Tensor result, Tensor?[] derivls_grads, int derivls_mask)' in source
    assert "CompositeImplicitAutograd" in source
    assert (plan.aten, plan.overload, plan.wrt, plan.grads) == ("acos", "default", [("self", False)], [0])
    assert plan.forward == "AcosBackward0_0_fw" and plan.fw_inputs == ["self"]


def test_saved_sizes_are_computed_from_the_kernels_inputs_and_outputs_saved_as_values(real_files):
    source = render(_units(real_files, "max.dim"), "LIB", Templates(real_files.derivatives)).source
    assert "grad_fn->self_sym_sizes = self.sym_sizes().vec();" in source
    assert "grad_fn->indices_ = SavedVariable(indices, false);" in source  # (VariableType: true)


def test_the_size_of_a_differentiable_tensor_list_is_set_as_variable_type_sets_it(real_files):
    # (the node's apply gives the list its range of grads from it: unset, every grad of cat's inputs is lost)
    source = render(_units(real_files, "cat"), "LIB", Templates(real_files.derivatives)).source
    assert "grad_fn->tensors_size_ = tensors.size();" in source


def test_in_place_functions_and_nested_tensor_formulas_are_built(real_files):
    ops = ("as_strided_", "elu_", "sum", "rrelu_with_noise_")
    rendered = render(_units(real_files, *ops), "LIB", Templates(real_files.derivatives))
    # through the in-place op on a clone (rrelu_with_noise_ also writes `noise`, a buffer it has no formula for)
    assert {"as_strided_", "elu_", "rrelu_with_noise_"} <= {plan.aten for plan in rendered.plans}
    # sum's formula for AutogradNestedTensor: checked on nested tensors (the child makes them)
    layouts = {
        plan.unit.name: plan.layout for plan in rendered.plans if plan.aten == "sum" and plan.overload == "default"
    }
    assert layouts == {"SumBackward0": "strided", "SumBackwardAutogradNestedTensor0": "nested"}
    assert not rendered.not_buildable


def test_an_entry_without_a_formula_is_reported_as_a_fact_about_the_op_not_the_harness(real_files):
    from derivls.gradcheck.results import interpret

    rendered = render(_units(real_files, "eq.Tensor", "isnan", "acos"), "LIB", Templates(real_files.derivatives))
    _, summary = interpret([], [], rendered.not_buildable)
    reasons = {o.function: o.reason for o in summary.outcomes}
    assert reasons["eq.Tensor"] == (
        "nothing to check: the op has no differentiable output (output_differentiability: all False)"
    )
    assert reasons["isnan"] == "nothing to check: the entry gives no formula, only non_differentiable inputs (self)"
    assert "acos" not in reasons  # (built: it has formulas)
    assert summary.reasons() == {"nothing to check": 2}


def test_an_op_dispatched_to_other_backends_only_or_a_cuda_formula_is_a_fact_not_a_harness_limit(real_files):
    from derivls.gradcheck.results import interpret

    ops = (
        "_scaled_dot_product_flash_attention",  # (a SymInt return: not built, and CUDA only)
        "_test_autograd_multiple_dispatch.fullcoverage",  # (a Default, an AutogradCUDA, an AutogradNestedTensor formula)
        "_scaled_dot_product_fused_attention_overrideable",  # (a SymInt return, a CompositeExplicitAutograd kernel)
        "acos",
    )
    rendered = render(_units(real_files, *ops), "LIB", Templates(real_files.derivatives))
    _, summary = interpret([], [], rendered.not_buildable)
    reasons = {o.name: o.reason for o in summary.outcomes}
    assert reasons["ScaledDotProductFlashAttentionBackward0"] == (
        "no CPU kernel: native_functions.yaml dispatches aten::_scaled_dot_product_flash_attention to CUDA, "
        "NestedTensorCUDA, XPU only"
    )
    assert reasons["TestAutogradMultipleDispatchBackwardAutogradCUDA0"].startswith(
        "another backend's formula: a formula for AutogradCUDA, which CPU tensors never reach"
    )
    # a nested tensor is a CPU tensor too: its formula is checked on nested tensors, not left out
    assert "TestAutogradMultipleDispatchBackwardAutogradNestedTensor0" not in reasons
    assert "TestAutogradMultipleDispatchBackwardAutogradNestedTensor0" in {p.unit.name for p in rendered.plans}
    assert reasons["ScaledDotProductFusedAttentionOverrideableBackward0"].startswith("not built: a return of type")
    assert summary.facts() == 2
    assert summary.checkable_at_most() == len(summary.outcomes) - 2


def test_a_function_writing_a_buffer_it_has_no_formula_for_is_built(real_files):
    # (rrelu_with_noise writes noise, batch norm its running stats: the child passes the formulas what was written)
    rendered = render(
        _units(real_files, "rrelu_with_noise", "_batch_norm_with_update"), "LIB", Templates(real_files.derivatives)
    )
    assert {p.aten for p in rendered.plans} == {"rrelu_with_noise", "_batch_norm_with_update"}
    assert not rendered.not_buildable


def test_a_file_of_another_release_than_torchs_is_refused(tmp_path: Path):
    site = tmp_path / "site-packages"
    path = site / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"
    path.parent.mkdir(parents=True)
    path.write_text("")
    (site / "torch").mkdir()
    (site / "torch" / "version.py").write_text("__version__ = '2.4.1'\n")
    message = release_mismatch(path, "2.13.0+cpu")
    assert message is not None and "2.4.1" in message and "2.13.0+cpu" in message and "--force" in message
    assert release_mismatch(path, "2.4.0") is None


def test_a_forward_formula_runs_only_when_an_input_whose_tangent_it_reads_has_one(real_files):
    # gen_variable_type's guard (isFwGradDefined of the formula's required inputs): nextafter's formula reads self_t
    # only, so a tangent of `other` alone gives no tangent, not the formula on self's zero tangent (an integer self:
    # int64 zeros, which autograd refuses as a tangent)
    source = render(_units(real_files, "nextafter"), "LIB", Templates(real_files.derivatives)).source
    assert "bool _any_has_forward_grad_result = derivls_t_self.defined();" in source
    source = render(_units(real_files, "mul.Tensor"), "LIB", Templates(real_files.derivatives)).source
    assert "bool _any_has_forward_grad_result = derivls_t_self.defined() || derivls_t_other.defined();" in source
