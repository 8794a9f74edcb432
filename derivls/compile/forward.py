"""The forward-mode part of the compiled code: one VariableType-like translation unit.

For each function with forward formulas, a kernel with the function's dispatcher arguments and its
outputs, holding the blocks torchgen's gen_variable_type.py (`emit_fw_derivatives`, torch 2.13)
writes for them (FW_DERIVATIVE_TEMPLATE and its unpacking templates), inside the VariableType.cpp
template's namespaces and using-directives. Written into a SourceMap as it is generated.
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Sequence

from derivls.aten.schema import Argument, BaseType, ListType
from derivls.compile.file_templates import PCH_NAME
from derivls.compile.kernel import kernel_bindings, output_locals
from derivls.compile.sourcemap import SourceMap
from derivls.compile.units import Unit
from derivls.derivatives.saved import IDENT_REGEX

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.aten.schema import Type
    from derivls.derivatives.model import DifferentiabilityInfo

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


def _is_tensor_like_base(t: Type) -> bool:
    return isinstance(t, BaseType) and t.is_tensor_like()


def _is_tensor_like_list(t: Type) -> bool:
    return isinstance(t, ListType) and t.is_tensor_like()


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


def forward_blocks(
    info: DifferentiabilityInfo, differentiable_inputs: Sequence[str]
) -> tuple[str, list[tuple[int, int, str]]] | None:
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
    info: DifferentiabilityInfo, differentiable_inputs: Sequence[tuple[str, bool]]
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
    info = unit.info
    f = info.func
    inplace = bool(f.func.name.name.inplace)
    foreach = info.name.startswith("_foreach")
    if not info.forward_derivatives or (foreach and inplace):
        return None
    bindings = kernel_bindings(f)
    non_differentiable = set(info.non_differentiable_arg_names)
    differentiable_inputs = [
        (b.name, b.argument.type.is_list_like() is not None)
        for b in bindings
        if isinstance(b.argument, Argument) and b.argument.type.is_tensor_like() and b.name not in non_differentiable
    ]
    if foreach:
        blocks = foreach_forward_blocks(info, differentiable_inputs)
    else:
        blocks = forward_blocks(info, [name for name, _ in differentiable_inputs])
    if blocks is None or not blocks[1]:
        return None
    body, placed = blocks
    head_lines: list[str] = []
    head_lines += [f"  {ctype} {name};\n" for ctype, name in output_locals(f, bindings)]
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


def _indent_shift(text: str, spaces: int) -> Callable[[int], int]:
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


def forward_source(units: Sequence[Unit], helpers: tuple[str, str] | None = None) -> SourceMap:
    """One VariableType-like translation unit for these units' forward formulas. `helpers`: as backward_source's."""
    source = SourceMap()
    source.append(f'#include "{PCH_NAME}"\n')
    if helpers is not None:
        source.append(helpers[0])
    source.append(
        "using namespace at;\n"
        "using namespace torch::autograd::generated;\n"
        "using namespace torch::autograd::generated::details;\n\n"
        "namespace torch::autograd {\nnamespace VariableType {\nnamespace {\n"
    )
    if helpers is not None:
        source.append(helpers[1])
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
