"""What the gradcheck session's JIT defines (derivls/gradcheck/jit.py), without Cling or torch: the rendered
extension's own code, in a namespace of its own per source, registered boxed instead of by TORCH_LIBRARY, with
torch.compile's methods left out and every formula kept as the build renders it."""

from __future__ import annotations

import re

from derivls.compile.file_templates import Templates
from derivls.compile.units import collect_units
from derivls.gradcheck import build as building
from derivls.gradcheck import jit
from derivls.gradcheck.source import render
from derivls.project.analyse import analyse_path


def _rendered(real_files, *ops):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags)
    return render(collect_units(analysis, list(ops)), building.LIBRARY_PLACEHOLDER, Templates(real_files.derivatives))


def _source(real_files, *ops):
    rendered = _rendered(real_files, *ops)
    ns = jit.namespace(rendered)
    return (
        rendered,
        ns,
        jit.jit_source(
            rendered,
            ns,
            ['"torch/csrc/autograd/FunctionsManual.h"'],
            [real_files.packaged.parent.parent / "torch" / "include"],
        ),
    )


def test_every_derivls_namespace_is_renamed_to_the_sources_own_and_no_torch_library_is_left(real_files):
    rendered, ns, source = _source(real_files, "acos")
    assert re.fullmatch(r"derivls_jit_[0-9a-f]{20}", ns)
    assert "derivls_gradcheck" not in source
    assert f"namespace torch::autograd::generated {{\nnamespace {ns} {{\n" in source
    assert f"namespace torch::autograd::VariableType {{\nnamespace {ns} {{" in source
    assert "TORCH_LIBRARY" not in source and building.LIBRARY_PLACEHOLDER not in source
    assert '#include "derivls-autograd.h"' not in source  # (the session parsed its includes once)
    assert source.startswith('#include "torch/csrc/autograd/FunctionsManual.h"\n')
    # Functions.cpp's file-level helpers go into the fresh namespace too (a second source defines them again)
    head = source.index(f"namespace {ns} {{")
    assert source.index("static at::IValue compute_output_metadata(") > head


def test_the_formulas_are_the_builds_and_only_compiled_autograds_bodies_are_left_out(real_files):
    rendered, _, source = _source(real_files, "acos")
    formula = "auto grad_result = any_grad_defined ? (grad * -((-self * self + 1).rsqrt()).conj()) : Tensor();"
    assert formula in rendered.source and formula in source
    forward = "result_new_fw_grad_opt = (self_t.conj() * -((-self_p * self_p + 1).rsqrt()).conj()).conj();"
    assert forward in rendered.source and forward in source
    for head in (
        "void AcosBackward0::compiled_args(CompiledNodeArgs& args) const {",
        "variable_list AcosBackward0::apply_with_saved(const variable_list& grads, SwapSavedVariables& saved) {",
        "inline variable_list AcosBackward0_apply_functional_ivalue(const variable_list& grads, "
        "const ivalue_list& args)\n{",
    ):
        assert head in source
        assert source[source.index(head) + len(head) :].startswith(jit.LEFT_OUT)
    assert "args.collect(self_, false);" in rendered.source and "args.collect(self_, false);" not in source
    # the node's apply and the harness's own apply are kept whole
    assert "variable_list AcosBackward0::apply(variable_list&& grads) {" in source
    assert "variable_list derivls_apply(variable_list&& grads) {" in source


def test_each_op_is_registered_boxed_with_one_unboxed_argument_per_parameter(real_files):
    rendered, ns, source = _source(real_files, "acos", "max.dim")
    assert [op.name for op in rendered.ops] == [
        "AcosBackward0_0_bw",
        "AcosBackward0_0_fw",
        "MaxBackward0_1_bw",
        "MaxBackward0_1_fw",
    ]
    assert f'static int registered = (derivls_jit::library("{ns}"),' in source
    for op in rendered.ops:
        assert f'derivls_jit::op("{op.schema}", "{op.name}", &{op.name}_boxed),' in source
        body = source[source.index(f"static void {op.name}_boxed(") :]
        body = body[: body.index("\n}\n")]
        assert body.count("c10::impl::ivalue_to_arg<") == len(op.params)
        assert f"torch::jit::drop(st, {len(op.params)});" in body
    (max_bw,) = [op for op in rendered.ops if op.name == "MaxBackward0_1_bw"]
    assert max_bw.schema.startswith("MaxBackward0_1_bw(Tensor self, int dim, bool keepdim, Tensor values, ")
    assert max_bw.params[:3] == ("const at::Tensor &", "int64_t", "bool")
    assert max_bw.params[-2:] == ("const c10::List<::std::optional<at::Tensor>>&", "int64_t")


def test_an_entry_left_out_is_not_registered_though_its_code_is_defined(real_files):
    # (an AutogradCUDA formula beside the Default one: left out, as no CPU tensor reaches it)
    rendered = _rendered(real_files, "acos", "_test_autograd_multiple_dispatch.fullcoverage")
    left = {unit.name for unit, _ in rendered.not_buildable}
    assert left and all(not any(op.name.startswith(name) for name in left) for op in rendered.ops)
    assert {op.name for op in rendered.ops} == {n for p in rendered.plans for n in (p.backward, p.forward) if n}


def test_a_source_has_one_namespace_and_another_source_another(real_files):
    first, again, other = _rendered(real_files, "acos"), _rendered(real_files, "acos"), _rendered(real_files, "asin")
    assert jit.namespace(first) == jit.namespace(again) != jit.namespace(other)


def test_the_session_parses_the_precompiled_headers_includes(real_files):
    header = building.pch_header(Templates(real_files.derivatives))
    found = jit.includes(header)
    assert found[0] == '"torch/csrc/autograd/FunctionsManual.h"'
    assert "<torch/library.h>" in found and len(found) == header.count("#include")


def test_the_edited_helpers_namespace_is_the_sources_own_so_a_second_source_defines_them_again(real_files):
    """Issue 51: the edited FunctionsManual.cpp helpers are defined in a namespace named by their text
    (derivls.gradcheck.manual); a later edit of the formula with the same helpers would define that namespace's
    names a second time in the session, which Cling refuses: the JIT renames it with the source."""
    from dataclasses import replace

    from derivls.gradcheck.manual import manual_code, parse_manual

    manual = parse_manual(
        "namespace torch::autograd::generated::details {\n"
        "Tensor acos_grad(const Tensor& grad, const Tensor& self) {\n"
        "  return grad * -((-self * self + 1).rsqrt()).conj();\n"
        "}\n"
        "}\n"
    )
    code = manual_code(manual, {"acos_grad"})
    assert re.search(r"derivls_manual_\w+", code.text)
    sources = []
    for n in (1, 2):
        rendered = _rendered(real_files, "acos")
        rendered = replace(rendered, source=code.text + rendered.source.replace("{\n", "{\n" + code.usings(), 1))
        rendered = replace(rendered, source=rendered.source + f"// edit {n}\n")  # (another formula, same helpers)
        ns = jit.namespace(rendered)
        source = jit.jit_source(rendered, ns, [], [real_files.packaged.parent.parent / "torch" / "include"])
        assert "derivls_manual_" not in source
        assert f"namespace torch::autograd::generated::details::{ns}_manual {{" in source
        assert f"using ::torch::autograd::generated::details::{ns}_manual::acos_grad;" in source
        sources.append(ns)
    assert sources[0] != sources[1]
