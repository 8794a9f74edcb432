"""Editor features of formulas as plain data: semantic tokens, declarations, schemas, signature help."""

from __future__ import annotations

from derivls.ide.formula_editor import (
    KINDS,
    call_schemas,
    entry_semantic_tokens,
    helper_declarations,
    scope_for_key,
    semantic_tokens,
    signature_help,
)

ABS = "abs(Tensor self) -> Tensor"
MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"


def kinds(formula, scope, headers):
    return [(formula[t.start : t.end], t.kind) for t in semantic_tokens(formula, scope, headers)]


def test_semantic_tokens_classify_every_name_of_a_forward_formula(key_of, headers):
    result, section, key = key_of(ABS, "result")
    formula = key.item.value.value
    assert kinds(formula, scope_for_key(result, section, key), headers) == [
        ("handle_r_to_c", "helper"), ("result", "output"), ("scalar_type", "method"), ("self_t", "tangent"),
        ("conj", "method"), ("self_p", "primal"), ("sgn", "method"),
    ]  # fmt: skip


def test_semantic_tokens_of_a_backward_formula(key_of, headers):
    result, section, key = key_of(MAX_DIM, "self")
    scope = scope_for_key(result, section, key)
    assert kinds("at::sum_to(grad, dim) + zeros_like(indices) * 1.5 + unknown_x", scope, headers) == [
        ("at", "namespace"), ("sum_to", "aten"), ("grad", "grad"), ("dim", "argument"),
        ("zeros_like", "aten"), ("indices", "output"), ("1.5", "number"), ("unknown_x", "unknown"),
    ]  # fmt: skip
    assert {k for _, k in kinds("[](const Tensor& t){ return t; }", scope, headers)} <= set(KINDS)


def test_entry_semantic_tokens_are_placed_on_the_document(real_analysis, headers, real_files):
    lines = real_files.derivatives.read_text().splitlines()
    placed = next(p for p in real_analysis.entries if p.result.schema_string == ABS)
    tokens = entry_semantic_tokens(placed.result, headers)
    found = [(lines[placed.start_line + s.line][s.column : s.end_column], kind) for s, kind in tokens]
    assert {("grad", "grad"), ("self", "argument"), ("sgn", "method"), ("self_p", "primal")} <= set(found)
    assert all(text for text, _ in found)


def test_a_helper_declaration_lists_every_overload(headers):
    decls = helper_declarations("norm_backward", headers)
    assert len(decls) == 2 and all(d.text.startswith("at::Tensor norm_backward(") for d in decls)
    assert decls[1].parameters == ("grad", "self", "p_", "norm", "dim", "keepdim")
    assert helper_declarations("not_a_helper", headers) == []


def test_the_schemas_of_an_aten_function_and_of_a_method(headers):
    assert call_schemas("sum_to_size", headers, method=True) == ["sum_to_size(Tensor self, SymInt[] size) -> Tensor"]
    assert any(s.startswith("scalar_tensor(Scalar s") for s in call_schemas("scalar_tensor", headers, method=False))


def test_signature_help_in_a_helper_call_names_the_active_parameter(key_of, headers):
    result, section, key = key_of(MAX_DIM, "self")
    scope = scope_for_key(result, section, key)
    formula = "norm_backward(grad, self, std::nullopt, indices, self.sym_sizes(), keepdim)"
    help_ = signature_help(formula, formula.index("indices"), scope, headers)
    assert help_ is not None and (help_.callee, help_.kind, help_.active_parameter) == ("norm_backward", "helper", 3)
    assert [s.parameters[3] for s in help_.signatures] == ["norm", "norm"]
    assert help_.active_signature == 0
    later = signature_help(formula, formula.index("keepdim"), scope, headers)
    assert later is not None and later.active_parameter == 5 and later.active_signature == 1
    # sym_sizes() has no schema: TensorBase.h writes it by hand, and that declaration answers
    inner = signature_help(formula, formula.index("sym_sizes") + len("sym_sizes("), scope, headers)
    assert inner is not None and (inner.callee, inner.kind) == ("sym_sizes", "method")
    assert [s.label for s in inner.signatures] == ["c10::SymIntArrayRef sym_sizes() const"]
    sym_size = "self.sym_size(-1)"
    on_member = signature_help(sym_size, sym_size.index("-1"), scope, headers)
    assert on_member is not None and on_member.signatures[0].parameters == ("dim",)
    method = "grad.sum_to_size(self.sym_sizes())"
    on_method = signature_help(method, method.index("self"), scope, headers)
    assert on_method is not None and (on_method.kind, on_method.callee) == ("method", "sum_to_size")
    assert on_method.signatures[0].parameters == ("size",)


def test_signature_help_in_an_aten_call_and_outside_any_call(key_of, headers):
    result, section, key = key_of(MAX_DIM, "self")
    scope = scope_for_key(result, section, key)
    formula = "at::cat({grad, std::get<0>(std::tuple<Tensor, Tensor>())}, dim)"
    help_ = signature_help(formula, formula.index("dim"), scope, headers)
    assert help_ is not None and (help_.callee, help_.kind, help_.active_parameter) == ("cat", "aten", 1)
    assert help_.signatures[0].parameters == ("tensors", "dim")
    assert signature_help("grad + 1", 3, scope, headers) is None
