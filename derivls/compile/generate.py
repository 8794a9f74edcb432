"""The C++ the compiler checks: Functions.cpp nodes and forward-mode (VariableType) kernels.

Backward: each node's Functions.h struct and Functions.cpp definitions, rendered by derivls's own
codegen (byte-equal to torchgen's), inside torchgen's Functions.cpp template. The installed
headers already declare torchgen's nodes in `torch::autograd::generated`, so derivls's nodes go in
a namespace nested there (`derivls_compile`): every name a formula uses resolves as in the real
file, and derivls's structs shadow the installed ones.

Forward: for each function with forward formulas, a kernel with the function's dispatcher
arguments and its outputs, holding the blocks torchgen's gen_variable_type.py
(`emit_fw_derivatives`) writes for them (FW_DERIVATIVE_TEMPLATE and its unpacking templates),
inside the VariableType.cpp template's namespaces and using-directives.

Saving: after each node, a function with the kernel's arguments that holds the `grad_fn->… = …;`
statements VariableType's kernel writes for it (gen_variable_type.py's `save_variables`): the values
torchgen saves for a formula's `x.sym_sizes()`, `x.scalar_type()`… are computed there, so a mistake in
one (`dim.sym_sizes()` of an int) breaks VariableType.cpp, not Functions.cpp.

All are written into a SourceMap as they are generated: each formula's range and each unit's.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from derivls.compile.sourcemap import FormulaOrigin, SourceMap
from derivls.compile.units import Unit
from derivls.derivatives.saved import IDENT_REGEX

PCH_NAME = "derivls-autograd.h"

# The head of torchgen's templates (torch 2.13), used when the templates are not beside the yaml.
FALLBACK_FUNCTIONS_CPP = """\
#include "torch/csrc/autograd/FunctionsManual.h"
#include "torch/csrc/dynamo/compiled_autograd.h"

// ${generated_comment}

using namespace torch::autograd::generated::details;
using at::Tensor;
using at::Scalar;
using at::IntArrayRef;
using at::TensorList;

namespace torch::autograd::generated {

static at::IValue compute_output_metadata(const torch::autograd::edge_list& next_edges) {
  auto output_metadata = torch::dynamo::autograd::IValuePacker<
      std::vector<std::optional<InputMetadata>>>::pack(
              torch::dynamo::autograd::get_input_metadata(next_edges));
  return output_metadata;
}

static C10_NOINLINE variable_list compiled_autograd_apply_functional(
    const PackedArgs& packed_args,
    const edge_list& next_edges,
    SwapSavedVariables& saved,
    const variable_list& grads,
    const std::string& name) {
  auto output_metadata = compute_output_metadata(next_edges);
  const auto& pyinterface = torch::dynamo::autograd::getPyCompilerInterface();
  return pyinterface->call_function(
      saved.get_py_compiler(),
      "apply_functional",
      name,
      grads,
      packed_args.vec(),
      output_metadata);
}

${autograd_function_definitions}

} // namespace torch::autograd::generated
"""

FALLBACK_VARIABLE_TYPE_INCLUDES = """\
#include "torch/csrc/autograd/VariableTypeUtils.h"
#include "torch/csrc/autograd/generated/VariableType.h"
#include "torch/csrc/autograd/FunctionsManual.h"
#include <ATen/RedispatchFunctions.h>
#include <c10/core/impl/TorchDispatchModeTLS.h>
#include <ATen/core/TorchDispatchUtils.h>
#include <torch/library.h>
#include <ATen/SparseCsrTensorUtils.h>
"""

_INCLUDE = re.compile(r'^\s*#\s*include\s*[<"][^>"]+[>"]\s*$', re.MULTILINE)


class Templates:
    """torchgen's Functions.cpp and VariableType.cpp templates: beside the yaml, else built in."""

    def __init__(self, derivatives: Path | None) -> None:
        folder = derivatives.parent / "templates" if derivatives is not None else None
        self.functions_cpp = _read(folder, "Functions.cpp") or FALLBACK_FUNCTIONS_CPP
        variable_type = _read(folder, "VariableType.cpp")
        self.variable_type_includes = (
            "\n".join(_INCLUDE.findall(variable_type)) if variable_type else FALLBACK_VARIABLE_TYPE_INCLUDES
        )

    def pch_header(self) -> str:
        """Every header either generated file includes: one precompiled header serves both."""
        lines = _INCLUDE.findall(self.functions_cpp) + self.variable_type_includes.splitlines()
        return "#pragma once\n" + "\n".join(dict.fromkeys(line.strip() for line in lines if line.strip())) + "\n"


def _read(folder: Path | None, name: str) -> str | None:
    if folder is None:
        return None
    try:
        return (folder / name).read_text(encoding="utf-8")
    except OSError:
        return None


_GRAD_RESULT_MARKERS = ("auto grad_result = ", "grad_result.emplace_back(")
_ANY_GRAD_DEFINED = "any_grad_defined ? ("


def formula_offsets(definition: str, derivatives: Sequence[Any]) -> list[int]:
    """Where each derivative's formula stands in a node's Functions.cpp text (-1: not found).

    torchgen's apply_functional holds one `auto grad_result = FORMULA;` (foreach:
    `grad_result.emplace_back(FORMULA)`) per derivative, in the info's order.
    """
    offsets = []
    at = max(definition.find("_apply_functional("), 0)
    for derivative in derivatives:
        found = -1
        while found < 0:
            marks = [(m, marker) for marker in _GRAD_RESULT_MARKERS if (m := definition.find(marker, at)) >= 0]
            if not marks:
                break
            mark, marker = min(marks)
            begin = mark + len(marker)
            if definition.startswith(_ANY_GRAD_DEFINED, begin):
                begin += len(_ANY_GRAD_DEFINED)
            if definition.startswith(derivative.formula, begin):
                found = begin
            at = begin  # foreach nodes also have `grad_result.emplace_back(Tensor())`: look further
        offsets.append(found)
        if found >= 0:
            at = found + len(derivative.formula)
    return offsets


def backward_source(units: Sequence[Unit], templates: Templates) -> SourceMap:
    """One Functions.cpp translation unit for these units' nodes."""
    from derivls.codegen.nodes import generate_node

    head, _, tail = templates.functions_cpp.partition("${autograd_function_definitions}")
    head = head.replace("${generated_comment}", "generated by derivls check --compile")
    source = SourceMap()
    source.append(f'#include "{PCH_NAME}"\n')
    source.append(head)
    source.append("namespace derivls_compile {\n")
    for unit in units:
        if not unit.has_backward:
            continue
        node = generate_node(unit.info)
        start = source.append(node.declaration + "\n")
        at = source.append(node.definition + "\n")
        for origin, offset in zip(unit.backward, formula_offsets(node.definition, unit.info.derivatives)):
            if origin is not None and offset >= 0:
                source.add_formula(at + offset, origin)
        source.add_unit(start, at + len(node.definition) + 1, unit.name, unit.name_span, unit.entry_line)
        saving = save_function(unit)
        if saving is not None:
            text, slices = saving
            begin = source.append(text)
            for offset, origin, at, length in slices:
                source.add_slice(begin + offset, origin, at, length)
            source.add_unit(begin, begin + len(text), f"{unit.name} (saved values)", unit.name_span, unit.entry_line)
    source.append("} // namespace derivls_compile\n")
    source.append(tail)
    return source


# --- saving: gen_variable_type.py (torch 2.13), save_variables


def _kernel_bindings(f: Any) -> Any:
    """A VariableType kernel's parameters: the function's faithful C++ arguments, SymInt-typed."""
    from derivls.aten import cpp

    return cpp.arguments(
        f.func.arguments,
        faithful=True,
        symint=True,
        method=False,
        cpp_no_default_args=frozenset(),
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=False,
    )


def _saved_name(arg: Any) -> str:
    """The name a SavedAttribute is saved under (a SpecialArgName's own name)."""
    return getattr(arg.nctype.name, "name", arg.nctype.name)


def save_statements(saved: Sequence[Any], is_output: bool, inplace: bool) -> list[str]:
    """The `grad_fn->… = …;` statements torchgen's `save_variables` writes for these SavedAttributes of a
    function that is not a foreach one (in its order: by name), without their guards."""
    from derivls.aten import cpp_types as t

    tensor_like = (
        t.BaseCType(t.tensorT),
        t.OptionalCType(t.BaseCType(t.tensorT)),
        t.MutRefCType(t.OptionalCType(t.BaseCType(t.tensorT))),
    )
    tensor_lists = (
        t.BaseCType(t.tensorListT),
        t.ListCType(t.OptionalCType(t.BaseCType(t.tensorT))),
        t.BaseCType(t.iTensorListRefT),
    )
    vectors = (
        t.BaseCType(t.intArrayRefT),
        t.BaseCType(t.symIntArrayRefT),
        t.ArrayRefCType(t.BaseCType(t.BaseCppType("at", "Scalar"))),
    )
    stmts: list[str] = []
    for arg in sorted(saved, key=lambda sa: str(sa.nctype.name)):
        name = _saved_name(arg)
        kind, expr = arg.nctype.type, arg.expr
        if kind in tensor_like or (is_output and kind == t.BaseCType(t.scalarT)):
            var = name
            name += "_"
            if var == "self" and inplace:
                stmts.append("if (!original_self.has_value()) original_self = self.clone();")
                var = "original_self.value()"
            if inplace and is_output:
                expr = "SavedVariable(self, true, self.is_view())"
            else:
                expr = f"SavedVariable({var}, {str(is_output).lower()})"
        elif kind in tensor_lists:
            expr = f"make_saved_variable_list({name}, false)"
            name += "_"
        elif kind in vectors:
            expr += ".vec()"
        elif kind == t.BaseCType(t.stringT):
            expr = f"std::string({expr})"
        elif kind == t.OptionalCType(t.BaseCType(t.stringT)):
            expr = f"{expr}.has_value() ? ::std::optional<std::string>(std::string({expr}.value())) : ::std::nullopt"
        stmts.append(f"grad_fn->{name} = {expr};")
    return stmts


def save_function(unit: Unit) -> tuple[str, list[tuple[int, FormulaOrigin, int, int]]] | None:
    """A function with the kernel's parameters and outputs that saves what the node keeps, as
    VariableType's kernel does (the values a formula's `x.sym_sizes()`, `x.scalar_type()`… become are
    computed there, not in Functions.cpp); None for a foreach function or a node without saved values.

    With its text, where a saved value's expression stands verbatim in a backward formula as written:
    (offset in the text, that formula, offset in its text, length) (see SourceMap.add_slice)."""
    from derivls.aten import cpp

    info = unit.info
    f = info.func
    if info.name.startswith("_foreach") or not (info.all_saved_inputs or info.all_saved_outputs):
        return None
    inplace = bool(f.func.name.name.inplace)
    bindings = _kernel_bindings(f)
    lines = [f"  auto grad_fn = c10::make_intrusive<{info.op}>();"]
    if inplace:
        lines.append("  ::std::optional<at::Tensor> original_self;")
    lines += [f"  {s}" for s in save_statements(info.all_saved_inputs, False, inplace)]
    declared = {b.name for b in bindings}
    for name, ret in zip(cpp.return_names(f), f.func.returns):
        if name not in declared:
            lines.append(f"  {cpp.return_type(ret, symint=True).remove_const_ref().cpp_type()} {name};")
            declared.add(name)
    lines += [f"  {s}" for s in save_statements(info.all_saved_outputs, True, inplace)]
    params = ", ".join(f"{b.type} {b.name}" for b in bindings)
    ident = re.sub(r"\W", "_", unit.name)
    text = f"[[maybe_unused]] static void {ident}_save({params}) {{\n" + "\n".join(lines) + "\n}\n"
    slices = []
    for arg in (*info.all_saved_inputs, *info.all_saved_outputs):
        name = _saved_name(arg)
        written = f"grad_fn->{name} = {arg.expr}"
        at = text.find(written)
        origin = next((o for o in unit.backward if o is not None and arg.expr in o.original), None)
        if arg.expr != name and at >= 0 and origin is not None:
            slices.append((at + len(written) - len(arg.expr), origin, origin.original.index(arg.expr), len(arg.expr)))
    return text, slices


# --- forward mode: torchgen/packaged/autograd/gen_variable_type.py (torch 2.13), emit_fw_derivatives

FW_DERIVATIVE_DEFINED_GRAD_TEMPLATE = """\
auto ${inp_name}_t_raw = toNonOptFwGrad(${inp});
auto ${inp_name}_tensor = toNonOptTensor(${inp});
auto ${inp_name}_t = (${inp_name}_t_raw.defined() || !${inp_name}_tensor.defined())
  ? ${inp_name}_t_raw : at::${zeros_fn}(${inp_name}_tensor.sym_sizes(), ${inp_name}_tensor.options());
"""
FW_DERIVATIVE_UPDATE_WRAPPED_NUM_TEMPLATE = """\
update_wrapped_number(${inp_name}_tensor, ${inp_name}_t);
"""
FW_DERIVATIVE_DEFINED_PRIMAL_TEMPLATE = """\
auto ${inp_name}_p = toNonOptPrimal(${inp});
"""
FW_DERIVATIVE_SETTER_TENSOR = """\
if (${out_arg}_new_fw_grad_opt.has_value() && ${out_arg}_new_fw_grad_opt.value().defined() && ${out_arg}.defined()) {
  // The hardcoded 0 here will need to be updated once we support multiple levels.
  ${out_arg}._set_fw_grad(${out_arg}_new_fw_grad_opt.value(), /* level */ 0, /* is_inplace_op */ ${is_inplace});
}
"""
FW_DERIVATIVE_SETTER_MULTI_OUTPUT = """\
if (${all_res}_new_fw_grad_opt.has_value() && std::get<${idx}>(${all_res}_new_fw_grad_opt.value()).defined()
    && ${out_arg}.defined()) {
  ${out_arg}._set_fw_grad(std::get<${idx}>(${all_res}_new_fw_grad_opt.value()), /* level */ 0, /* is_inplace_op */ false);
}
"""
FW_DERIVATIVE_SETTER_TENSOR_LIST = """\
if (${out_arg}_new_fw_grad_opt.has_value()) {
  auto ${out_arg}_new_fw_grad = ${out_arg}_new_fw_grad_opt.value();
  TORCH_INTERNAL_ASSERT(${out_arg}.size() == ${out_arg}_new_fw_grad.size());
  for (const auto i : c10::irange(${out_arg}.size())) {
    if (${out_arg}_new_fw_grad[i].defined() && ${out_arg}[i].defined()) {
      // The hardcoded 0 here will need to be updated once we support multiple levels.
      ${out_arg}[i]._set_fw_grad(${out_arg}_new_fw_grad[i], /* level */ 0, /* is_inplace_op */ ${is_inplace});
    }
  }
}
"""
FW_DERIVATIVE_TEMPLATE = """\
${fw_grad_opt_definition}
if (${requires_fw_grad}) {
    ${unpacked_arguments}
    ${out_arg}_new_fw_grad_opt = ${formula};
}
"""
FW_DERIVATIVE_SETTER_TENSOR_FOREACH = """\
for (const auto& i : c10::irange(${out_arg}_new_fw_grad_opts.size())) {
  auto& ${out_arg}_new_fw_grad_opt = ${out_arg}_new_fw_grad_opts[i];
  if (${out_arg}_new_fw_grad_opt.has_value() && ${out_arg}_new_fw_grad_opt.value().defined() && ${out_arg}[i].defined()) {
    // The hardcoded 0 here will need to be updated once we support multiple levels.
    ${out_arg}[i]._set_fw_grad(${out_arg}_new_fw_grad_opt.value(), /* level */ 0, /* is_inplace_op */ ${is_inplace});
  }
}
"""
FW_DERIVATIVE_FOREACH_TEMPLATE = """\
${fw_grad_opt_definition}
for (const auto& i : c10::irange(${vector_of_optional_tensor}.size())) {
  if (${any_has_forward_grad_for_current_index}) {
      ${unpacked_arguments}
      ${vector_of_optional_tensor}[i] = ${formula};
  }
}
"""


def _t(pattern: str, **env: object) -> str:
    from derivls.codegen.templates import CodeTemplate

    return CodeTemplate(pattern).substitute(env)


def _is_tensor_like_base(t: Any) -> bool:
    return type(t).__name__ == "BaseType" and t.is_tensor_like()


def _is_tensor_like_list(t: Any) -> bool:
    return type(t).__name__ == "ListType" and t.is_tensor_like()


_ORIGINAL_SELF = re.compile(IDENT_REGEX.format("original_self_[pt]"))


def _unpacked_input(
    name: str, inp: str, zeros_fn: str, required_fw_grad: Sequence[str], required_primals: Sequence[str] | None
) -> str:
    """torchgen's unpacking of one differentiable input (the C++ expression `inp`) for a forward formula:
    `<name>_t` when the formula needs its tangent (zeros where it is undefined; a wrapped number keeps
    its flag unless zeros_symint makes them), `<name>_p` when it needs its primal."""
    text = ""
    if name in required_fw_grad:
        text += _t(FW_DERIVATIVE_DEFINED_GRAD_TEMPLATE, inp_name=name, inp=inp, zeros_fn=zeros_fn)
        if zeros_fn == "_efficientzerotensor_symint":
            text += _t(FW_DERIVATIVE_UPDATE_WRAPPED_NUM_TEMPLATE, inp_name=name)
    if name in (required_primals or ()):
        text += _t(FW_DERIVATIVE_DEFINED_PRIMAL_TEMPLATE, inp_name=name, inp=inp)
    return text


def forward_blocks(info: Any, differentiable_inputs: Sequence[str]) -> tuple[str, list[tuple[int, int, str]]] | None:
    """emit_fw_derivatives for a non-foreach function: its blocks, as torchgen writes them (unindented),
    and (forward-derivative index, offset of its formula in the text, the formula). None: not modelled."""
    f = info.func
    inplace = bool(f.func.name.name.inplace)
    content: list[str] = []
    setters: list[str] = []
    formula_at: list[tuple[int, str, str]] = []  # (index, the line that holds the formula, the formula)
    for index, derivative in enumerate(info.forward_derivatives):
        # torchgen's match_differentiability_info names an in-place function's output `self`
        var_names = ("self",) if inplace else tuple(derivative.var_names)
        res = var_names
        if derivative.required_inputs_fw_grad is None:
            return None
        formula = derivative.formula
        required_primals = derivative.required_inputs_primal
        if inplace:
            # torchgen's match_differentiability_info, for an in-place function's own formula:
            # its output is `self`, so `result` becomes `self_p`
            formula = re.sub(IDENT_REGEX.format("result"), lambda m: f"{m.group(1)}self_p{m.group(2)}", formula)
            if re.search(IDENT_REGEX.format("self_p"), formula):
                required_primals = required_primals + ("self",) if required_primals else ("self",)
        unpacked = ""
        zeros_fn = "_efficientzerotensor_symint"
        for name in differentiable_inputs:
            zeros_fn = "zeros_symint" if inplace and name == "self" else "_efficientzerotensor_symint"
            unpacked += _unpacked_input(name, name, zeros_fn, derivative.required_inputs_fw_grad, required_primals)
        if derivative.required_original_self_value or re.search(_ORIGINAL_SELF, formula):
            unpacked += _t(
                FW_DERIVATIVE_DEFINED_GRAD_TEMPLATE, inp_name="original_self", inp="original_self", zeros_fn=zeros_fn
            )
            unpacked += _t(FW_DERIVATIVE_DEFINED_PRIMAL_TEMPLATE, inp_name="original_self", inp="original_self")
        elif inplace and derivative.is_reusing_outplace_formula:
            unpacked += "self_t = GradMode::is_enabled() ? self_t.clone() : self_t;"
        is_inplace = "true" if inplace else "false"
        requires_fw_grad = "_any_has_forward_grad_" + "_".join(var_names)
        types = derivative.var_types
        if all(_is_tensor_like_base(t) for t in types):
            if len(types) == 1:
                opt_type = "::std::optional<at::Tensor>"
                setters.append(_t(FW_DERIVATIVE_SETTER_TENSOR, out_arg=res[0], is_inplace=is_inplace))
                requires_fw_grad += f" && ({var_names[0]}.defined())"
            else:
                opt_type = "::std::optional<::std::tuple<" + ",".join(["at::Tensor"] * len(types)) + ">>"
                for idx, single in enumerate(res):
                    setters.append(
                        _t(FW_DERIVATIVE_SETTER_MULTI_OUTPUT, idx=idx, all_res="_".join(res), out_arg=single)
                    )
        elif len(types) == 1 and _is_tensor_like_list(types[0]):
            opt_type = "::std::optional<::std::vector<at::Tensor>>"
            setters.append(_t(FW_DERIVATIVE_SETTER_TENSOR_LIST, out_arg=res[0], is_inplace=is_inplace))
        else:
            return None
        out_arg = "_".join(res)
        content.append(
            _t(
                FW_DERIVATIVE_TEMPLATE,
                fw_grad_opt_definition=f"{opt_type} {out_arg}_new_fw_grad_opt = ::std::nullopt;",
                requires_fw_grad=requires_fw_grad,
                formula=formula,
                out_arg=out_arg,
                unpacked_arguments=unpacked,
            )
        )
        formula_at.append((index, f"{out_arg}_new_fw_grad_opt = {formula};", formula))
    content.append("\n".join(setters))
    return _placed("".join(content), formula_at)


def foreach_forward_blocks(
    info: Any, differentiable_inputs: Sequence[tuple[str, bool]]
) -> tuple[str, list[tuple[int, int, str]]] | None:
    """emit_fw_derivatives for an out-of-place foreach function (in-place ones get no forward AD):
    each formula inside a loop over the lists (FW_DERIVATIVE_FOREACH_TEMPLATE), the list inputs read
    at `[i]` (`differentiable_inputs`: (name, whether it is a Tensor list)), and `result` in a formula
    that does not index it read as `result[i]`. Same value as forward_blocks; None: not modelled."""
    content: list[str] = []
    setters: list[str] = []
    formula_at: list[tuple[int, str, str]] = []
    any_index = " || ".join("_any_has_forward_grad_" + "_".join(d.var_names) + "[i]" for d in info.forward_derivatives)
    for index, derivative in enumerate(info.forward_derivatives):
        res = tuple(derivative.var_names)
        types = derivative.var_types
        if derivative.required_inputs_fw_grad is None or derivative.required_original_self_value:
            return None
        single_tensor = len(types) == 1 and _is_tensor_like_base(types[0])
        if not (single_tensor or (len(types) == 1 and _is_tensor_like_list(types[0]))):
            return None  # (several outputs: torchgen's setters would name what the loop does not declare)
        unpacked = ""
        for name, is_list in differentiable_inputs:
            inp = name + ("[i]" if is_list else "")
            zeros_fn = "_efficientzerotensor_symint"
            unpacked += _unpacked_input(
                name, inp, zeros_fn, derivative.required_inputs_fw_grad, derivative.required_inputs_primal
            )
        setters.append(_t(FW_DERIVATIVE_SETTER_TENSOR_FOREACH, out_arg=res[0], is_inplace="false"))
        formula = derivative.formula
        if "result" in formula and "result[i]" not in formula:
            formula = formula.replace("result", "result[i]")  # (torchgen's own plain replacement)
        vector = "_".join(res) + "_new_fw_grad_opts"
        content.append(
            _t(
                FW_DERIVATIVE_FOREACH_TEMPLATE,
                fw_grad_opt_definition=f"std::vector<::std::optional<at::Tensor>> {vector}(self.size(), ::std::nullopt);",
                vector_of_optional_tensor=vector,
                any_has_forward_grad_for_current_index=any_index,
                formula=formula,
                unpacked_arguments=unpacked,
            )
        )
        formula_at.append((index, f"{vector}[i] = {formula};", formula))
    content.append("\n".join(setters))
    return _placed("".join(content), formula_at)


def _placed(text: str, formula_at: list[tuple[int, str, str]]) -> tuple[str, list[tuple[int, int, str]]]:
    """`text` and, for each (index, the line that holds the formula, the formula), the formula's offset."""
    placed: list[tuple[int, int, str]] = []
    at = 0
    for index, line, formula in formula_at:
        found = text.find(line, at)
        if found >= 0:
            placed.append((index, found + line.index("= ") + 2, formula))
            at = found + len(line)
    return text, placed


def forward_kernel(unit: Unit) -> tuple[str, list[tuple[int, int, str]]] | None:
    """A kernel holding the forward-derivative blocks of one function; (text, [(index, offset, formula)]).

    Its parameters are the function's (faithful, SymInt) C++ arguments, its locals the outputs
    and what the blocks read (`_any_has_forward_grad_*`, `original_self`), as in VariableType (for a
    foreach function the flags are one per list element). None for what has no forward-mode code (an
    in-place foreach function) or is not modelled.
    """
    from derivls.aten import cpp

    info = unit.info
    f = info.func
    inplace = bool(f.func.name.name.inplace)
    foreach = info.name.startswith("_foreach")
    if not info.forward_derivatives or (foreach and inplace):
        return None
    bindings = _kernel_bindings(f)
    non_differentiable = set(info.non_differentiable_arg_names)
    differentiable_inputs = [
        (b.name, b.argument.type.is_list_like() is not None)
        for b in bindings
        if hasattr(b.argument, "type") and b.argument.type.is_tensor_like() and b.name not in non_differentiable
    ]
    if foreach:
        blocks = foreach_forward_blocks(info, differentiable_inputs)
    else:
        blocks = forward_blocks(info, [name for name, _ in differentiable_inputs])
    if blocks is None or not blocks[1]:
        return None
    body, placed = blocks
    head_lines: list[str] = []
    declared = {b.name for b in bindings}
    for name, ret in zip(cpp.return_names(f), f.func.returns):
        if name in declared:
            continue
        ctype = cpp.return_type(ret, symint=True).remove_const_ref().cpp_type()
        head_lines.append(f"  {ctype} {name};\n")
        declared.add(name)
    if inplace:
        head_lines.append("  ::std::optional<at::Tensor> original_self;\n")
    for derivative in info.forward_derivatives:
        names = ("self",) if inplace else tuple(derivative.var_names)
        flag_type = "::std::vector<bool>" if foreach else "bool"
        flag_value = "" if foreach else " = true"
        head_lines.append(f"  [[maybe_unused]] {flag_type} _any_has_forward_grad_{'_'.join(names)}{flag_value};\n")
    name = re.sub(r"\W", "_", unit.name)
    params = ", ".join(f"{b.type} {b.name}" for b in bindings)
    head = f"[[maybe_unused]] void {name}_forward_ad({params}) {{\n" + "".join(dict.fromkeys(head_lines))
    # torchgen's method body is indented by two spaces
    indented = _indent(body, 2)
    shift = _indent_shift(body, 2)
    return head + indented + "\n}\n", [(i, len(head) + shift(offset), formula) for i, offset, formula in placed]


def _indent(text: str, spaces: int) -> str:
    pad = " " * spaces
    return "".join(pad + line if line.strip() else line for line in text.splitlines(keepends=True))


def _indent_shift(text: str, spaces: int) -> Any:
    """Offset in `text` -> offset in `_indent(text, spaces)`."""
    starts = [0]
    for line in text.splitlines(keepends=True):
        starts.append(starts[-1] + len(line))
    padded = [bool(line.strip()) for line in text.splitlines(keepends=True)]

    def shift(offset: int) -> int:
        import bisect

        i = bisect.bisect_right(starts, offset) - 1
        return offset + spaces * sum(padded[: i + 1])

    return shift


def forward_source(units: Sequence[Unit]) -> SourceMap:
    """One VariableType-like translation unit for these units' forward formulas."""
    source = SourceMap()
    source.append(f'#include "{PCH_NAME}"\n')
    source.append(
        "using namespace at;\n"
        "using namespace torch::autograd::generated;\n"
        "using namespace torch::autograd::generated::details;\n\n"
        "namespace torch::autograd {\nnamespace VariableType {\nnamespace {\n"
    )
    for unit in units:
        kernel = forward_kernel(unit)
        if kernel is None:
            continue
        text, placed = kernel
        start = source.append(text)
        for index, offset, formula in placed:
            origin = unit.forward[index]
            if origin is not None:
                source.add_formula(start + offset, dataclasses.replace(origin, rewritten=formula))
        source.add_unit(start, start + len(text), unit.name + " (forward)", unit.name_span, unit.entry_line)
    source.append("}\n}\n} // namespace torch::autograd\n")
    return source
