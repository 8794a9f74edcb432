"""The scope of a formula as the generated code has it, and the names the C++ sources declare."""

from __future__ import annotations

from pathlib import Path

from derivls.derivatives.formulas.declarations import parse_declarations
from derivls.derivatives.formulas.scope import build_scope
from derivls.derivatives.formulas.sources import find_sources

MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
CLAMP = "clamp.Tensor(Tensor self, Tensor? min=None, Tensor? max=None) -> Tensor"


def test_a_backward_formula_sees_arguments_outputs_grads_but_no_tangents(key_of):
    result, section, key = key_of(MAX_DIM, "self")
    scope = build_scope(result.canonical, section.info, True, key.var_names)
    assert {"self", "dim", "keepdim", "values", "indices", "grad", "grads", "retain_variables"} <= set(scope.locals)
    assert "self_t" not in scope.locals and "grad_input_mask" not in scope.locals


def test_a_forward_formula_sees_tangents_and_primals_of_differentiable_inputs_only(key_of):
    result, section, key = key_of(MAX_DIM, "values")
    scope = build_scope(result.canonical, section.info, False, key.var_names)
    assert {"self_t", "self_p", "dim", "values"} <= set(scope.locals)
    assert "dim_t" not in scope.locals and "grad" not in scope.locals


def test_grad_input_mask_exists_only_for_a_formula_of_several_inputs(key_of):
    result, section, key = key_of(CLAMP, "min, max")
    assert "grad_input_mask" in build_scope(result.canonical, section.info, True, key.var_names).locals
    result, section, key = key_of(CLAMP, "self")
    assert "grad_input_mask" not in build_scope(result.canonical, section.info, True, key.var_names).locals


def test_sources_are_found_beside_a_wheel_and_a_checkout(real_files, tmp_path: Path):
    wheel = find_sources(real_files.derivatives)
    assert wheel.functions_manual is not None and wheel.functions_manual.name == "FunctionsManual.h"
    assert wheel.tensor_base is not None and len(wheel.tensor_body) == 2 and wheel.missing == ()
    root = tmp_path / "pytorch"
    (root / "tools/autograd").mkdir(parents=True)
    (root / "tools/autograd/derivatives.yaml").write_text("")
    (root / "torch/csrc/autograd").mkdir(parents=True)
    (root / "torch/csrc/autograd/FunctionsManual.h").write_text("Tensor f(const Tensor& x);\n")
    checkout = find_sources(root / "tools/autograd/derivatives.yaml")
    assert checkout.functions_manual == root / "torch/csrc/autograd/FunctionsManual.h"
    assert checkout.missing == ("TensorBody.h", "TensorBase.h")
    assert find_sources(tmp_path / "lone.yaml").missing == ("FunctionsManual.h", "TensorBody.h", "TensorBase.h")


def test_declarations_keep_every_overload_with_parameter_names():
    header = """
namespace torch::autograd::generated::details {
extern const char* kMsg;
// a comment with f(x);
TORCH_API Tensor f(const Tensor& grad, int64_t dim = 0);
at::Tensor f(
    at::Tensor grad,
    const std::optional<at::Scalar>& p_);
inline std::optional<Tensor> g(const Tensor& t, const bool cond) {
  return cond ? t : std::nullopt;
}
struct S { int h(int a); };
}
"""
    decls = parse_declarations(header)
    assert [(d.name, d.parameters) for d in decls] == [
        ("kMsg", ()),
        ("f", ("grad", "dim")),
        ("f", ("grad", "p_")),
        ("g", ("t", "cond")),
    ]
    assert decls[1].text == "Tensor f(const Tensor& grad, int64_t dim = 0)" and decls[1].line == 4


def test_an_overload_s_arity_counts_defaults_and_variadic_parameters():
    header = """
Tensor a();
Tensor b(const Tensor& x, std::array<bool, 2> mask = {true, false}, c10::SymIntArrayRef s = {});
Tensor c(const Tensor& x, const std::vector<std::pair<int, int>>& v, int64_t k = f(1, 2));
template <typename... Args> Tensor d(const Tensor& x, Args&&... rest);
"""
    arity = {d.name: d.arity for d in parse_declarations(header)}
    assert arity == {"a": (0, 0), "b": (1, 3), "c": (2, 3), "d": (1, float("inf"))}


def test_the_header_index_knows_helpers_methods_and_aten_functions(headers):
    assert len(headers.helpers["norm_backward"]) == 2
    assert "kCudnnDoubleBackwardMsg" in headers.helpers
    assert headers.is_method("sgn") and headers.is_method("sym_sizes") and headers.is_method("has_value")
    assert not headers.is_method("sgnn")
    assert "scalar_tensor" in headers.at_functions and "zeros_symint" in headers.at_functions
    assert "add_out" in headers.at_functions and "add_outf" in headers.at_functions
    assert {"Tensor", "Scalar", "IntArrayRef", "TensorList", "fmap"} <= headers.using


def test_missing_sources_are_said_once_and_present_ones_not_at_all(real_files, native_index, tmp_path: Path):
    from derivls.derivatives.formulas.entry_formulas import workspace_diagnostics

    assert workspace_diagnostics(native_index, str(real_files.native)) == []
    lone = tmp_path / "native_functions.yaml"
    lone.write_text("")
    notices = workspace_diagnostics(native_index, str(lone))
    assert [(d.code, d.severity.label) for d in notices] == [("formula-sources-missing", "information")]
    assert "FunctionsManual.h" in notices[0].message and "not checked" in notices[0].message


def test_declarations_carry_their_own_line_and_normalized_parameters():
    # lines are counted incrementally between declarations: each must still be its own line
    header = (
        "// comment (with parens)\n"
        "#define X(a) a\n"
        "namespace torch {\n"
        "Tensor first(const Tensor& a);\n"
        "\n"
        "/* a\n   block */ Tensor second(\n    const Tensor&   b,\n\tint64_t c = 1);\n"
        "extern const char* kMessage;\n"
        "Tensor third(at::IntArrayRef d, std::optional<std::vector<int64_t>> e);\n"
        "}\n"
    )
    decls = {d.name: d for d in parse_declarations(header)}
    assert {name: d.line for name, d in decls.items()} == {"first": 3, "second": 6, "kMessage": 9, "third": 10}
    assert decls["second"].parameter_texts == ("const Tensor& b", "int64_t c = 1")
    assert decls["second"].parameters == ("b", "c")
    assert decls["third"].parameters == ("d", "e")
    assert decls["third"].parameter_texts == ("at::IntArrayRef d", "std::optional<std::vector<int64_t>> e")


def test_the_codegen_memo_keeps_what_the_current_pass_computed_when_it_overflows(monkeypatch):
    from derivls.derivatives.formulas import entry_formulas as hook

    monkeypatch.setattr(hook, "_codegen_cache", {})
    old = [object() for _ in range(hook.MEMO_LIMIT - 10)]  # earlier versions of the file
    for r in old:
        hook.remember_codegen(r, frozenset(), [])  # type: ignore[arg-type]
    current = [object() for _ in range(50)]  # a pass that crosses the limit
    for r in current:
        hook.remember_codegen(r, frozenset({"f"}), [])  # type: ignore[arg-type]
    assert all(hook.remembered_codegen(r) == (frozenset({"f"}), []) for r in current)  # type: ignore[arg-type]
    assert len(hook._codegen_cache) < hook.MEMO_LIMIT
    assert hook.remembered_codegen(old[0]) is None  # type: ignore[arg-type]
