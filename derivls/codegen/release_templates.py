"""The Functions.h / Functions.cpp templates of older releases, verbatim from their gen_autograd_functions.py.

derivls renders 2.13's templates (derivls.codegen.templates); a release whose templates differ names its set in
derivls.derivatives.releases (ReleaseRules.codegen_templates), and `templates_for` gives them. The environment
process_function fills serves each set: it also fills the names older templates use (num_vars, unpacked_saved_vars).
"""

from __future__ import annotations

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


_SETS: dict[str, tuple[CodeTemplate, CodeTemplate]] = {
    "2.7": (FUNCTION_DECLARATION, FUNCTION_DEFINITION),
    "2.6": (FUNCTION_DECLARATION_2_6, FUNCTION_DEFINITION_2_6),
}


def templates_for(name: str) -> tuple[CodeTemplate, CodeTemplate]:
    """(declaration, definition) templates of a release's set ("2.7": the ones from 2.7 on)."""
    return _SETS[name]
