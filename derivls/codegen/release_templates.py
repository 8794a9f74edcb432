"""The Functions.h / Functions.cpp templates of older releases, verbatim from their gen_autograd_functions.py.

derivls renders 2.13's templates (derivls.codegen.templates); a release whose templates differ names its set in
derivls.derivatives.releases (ReleaseRules.codegen_templates), and `templates_for` gives them. The environment
process_function fills serves each set: it also fills the names older templates use (num_vars, unpacked_saved_vars).
"""

from __future__ import annotations

from dataclasses import dataclass

from derivls.codegen.templates import FUNCTION_DECLARATION, FUNCTION_DEFINITION, CodeTemplate

# torch 2.6
FUNCTION_DECLARATION_2_6 = CodeTemplate(
    """\
#ifdef _WIN32
struct ${op} : public ${superclass} {
  TORCH_API ${op}() = default;
#else
struct TORCH_API ${op} : public ${superclass} {
#endif
  using ${superclass}::${superclass};
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "${op}"; }
  void release_variables() override {
    ${thread_lock}
    ${release_variables}
  }
  ${will_release_variables}
  void compiled_args(CompiledNodeArgs& args) override;
  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;
  ${saved_variables}
  ${saved_list_sizes}
};
"""
)


# torch 2.6
FUNCTION_DEFINITION_2_6 = CodeTemplate(
    """\
static variable_list ${op}_apply_functional(
  variable_list&& grads,
  std::array<bool,${num_vars}> needs_input_grad${,unpacked_saved_vars_signature})
{
  IndexRangeGenerator gen;
  ${compute_index_ranges}
  variable_list grad_inputs(gen.size());
  ${body}
  return grad_inputs;
}

variable_list ${op}::apply(variable_list&& grads) {
  ${thread_lock}
  ${asserts}
  ${unpacks}
  ${compute_needs_input_grad}
  return ${op}_apply_functional(std::move(grads), needs_input_grad${,unpacked_saved_vars});
}

void ${op}::compiled_args(CompiledNodeArgs& args) {
    ${compiled_args}
}
variable_list ${op}::apply_with_saved(const variable_list& grads, SwapSavedVariables& saved) {
    ${apply_with_saved_before}
    variable_list result = apply(variable_list(grads));
    ${apply_with_saved_after}
    return result;
}
"""
)


# torch 2.1 - 2.5
FUNCTION_DECLARATION_2_5 = CodeTemplate(
    """\
#ifdef _WIN32
struct ${op} : public ${superclass} {
  TORCH_API ${op}() = default;
#else
struct TORCH_API ${op} : public ${superclass} {
#endif
  using ${superclass}::${superclass};
  variable_list apply(variable_list&& grads) override;
  std::string name() const override { return "${op}"; }
  void release_variables() override {
    ${thread_lock}
    ${release_variables}
  }
  ${will_release_variables}
  void compiled_args(CompiledNodeArgs& args) override;
  variable_list apply_with_saved(const variable_list& inputs, SwapSavedVariables& saved) override;
  ${saved_variables}
  ${saved_list_sizes}
};
"""
)

# torch 2.1 - 2.5
FUNCTION_DEFINITION_2_5 = CodeTemplate(
    """\
variable_list ${op}::apply(variable_list&& grads) {
  ${thread_lock}
  ${asserts}
  IndexRangeGenerator gen;
  ${compute_index_ranges}
  variable_list grad_inputs(gen.size());
  ${body}
  return grad_inputs;
}
void ${op}::compiled_args(CompiledNodeArgs& args) {
    ${compiled_args}
}
variable_list ${op}::apply_with_saved(const variable_list& grads, SwapSavedVariables& saved) {
    ${apply_with_saved_before}
    variable_list result = apply(variable_list(grads));
    ${apply_with_saved_after}
    return result;
}
"""
)

# torch 2.1 - 2.5
GRAD_INPUT_MASK_2_5 = CodeTemplate(
    """\
  auto grad_input_mask = std::array<bool, ${n}>{
    ${masks}
  };\
"""
)

# torch 2.1 - 2.5
DERIVATIVE_SINGLE_2_5 = CodeTemplate(
    """\
if (task_should_compute_output({ ${name}_ix })) {
  auto grad_result = ${derivative};
  copy_range(grad_inputs, ${name}_ix, grad_result);
}
"""
)

# torch 2.1 - 2.5
DERIVATIVE_SINGLE_FOREACH_2_5 = CodeTemplate(
    """\
if (task_should_compute_output({ ${name}_ix })) {
  std::vector<Tensor> grad_result;
  grad_result.reserve(grads.size());
  for (const auto & i : c10::irange(grads.size())) {
    if (grads[i].defined()) {
      grad_result.emplace_back(${derivative});
    } else {
      grad_result.emplace_back(Tensor());
    }
  }
  copy_range(grad_inputs, ${name}_ix, grad_result);
}
"""
)

# torch 2.1 - 2.5
DERIVATIVE_MULTI_COPY_RANGE_2_5 = CodeTemplate(
    """\
  if (task_should_compute_output({ ${name}_ix })) {
    copy_range(grad_inputs, ${name}_ix, std::get<${i}>(grad_result));
  }
"""
)

# torch 2.1 - 2.5
DERIVATIVE_MULTI_2_5 = CodeTemplate(
    """\
if (task_should_compute_output({ ${idx_ranges} })) {
  ${grad_input_mask}
  auto grad_result = ${derivative};
  ${copy_ranges}
}
"""
)


@dataclass(frozen=True)
class InnerTemplates:
    """The per-derivative templates of releases before 2.6 (task_should_compute_output, unpacking in the body)."""

    single: CodeTemplate
    single_foreach: CodeTemplate
    multi_copy_range: CodeTemplate
    multi: CodeTemplate
    grad_input_mask: CodeTemplate


INNER_2_5 = InnerTemplates(
    DERIVATIVE_SINGLE_2_5,
    DERIVATIVE_SINGLE_FOREACH_2_5,
    DERIVATIVE_MULTI_COPY_RANGE_2_5,
    DERIVATIVE_MULTI_2_5,
    GRAD_INPUT_MASK_2_5,
)

_SETS: dict[str, tuple[CodeTemplate, CodeTemplate]] = {
    "2.7": (FUNCTION_DECLARATION, FUNCTION_DEFINITION),
    "2.6": (FUNCTION_DECLARATION_2_6, FUNCTION_DEFINITION_2_6),
    "2.5": (FUNCTION_DECLARATION_2_5, FUNCTION_DEFINITION_2_5),
}
_INNER: dict[str, InnerTemplates] = {"2.5": INNER_2_5}


def inner_templates_for(name: str) -> InnerTemplates | None:
    """The per-derivative templates of a set, when they are not 2.6+'s (None)."""
    return _INNER.get(name)


def templates_for(name: str) -> tuple[CodeTemplate, CodeTemplate]:
    """(declaration, definition) templates of a release's set ("2.7": the ones from 2.7 on)."""
    return _SETS[name]
