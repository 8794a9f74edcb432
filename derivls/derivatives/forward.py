"""torchgen 2.x's `postprocess_forward_derivatives`: forward formulas checked, `auto_element_wise` and
`auto_linear` expanded, and the tangents and primals each formula needs."""

from __future__ import annotations

from collections.abc import Sequence

from derivls.aten.cpp_types import Binding
from derivls.aten.native import NativeFunction, Variant
from derivls.aten.schema import SchemaKind
from derivls.codes.loader import (
    AUTO_ELEMENT_WISE_INPLACE,
    AUTO_ELEMENT_WISE_MISUSE,
    AUTO_LINEAR_MISUSE,
    FORWARD_USES_BASE_NAME,
)
from derivls.derivatives.document import FormulaItem
from derivls.derivatives.loader_checks import first_ident
from derivls.derivatives.model import Derivative, ForwardDerivative
from derivls.derivatives.saved import ident_pattern, uses_ident

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from derivls.derivatives.sections import SectionContext


def postprocess_forward(
    f: NativeFunction,
    defn_name: str,
    all_arg_names: list[str],
    derivatives: Sequence[Derivative],
    forward: Sequence[tuple[ForwardDerivative, FormulaItem]],
    args_with_derivatives: Sequence[Binding],
    context: SectionContext,
) -> list[ForwardDerivative]:
    is_foreach = f.func.name.name.base.startswith("_foreach_")

    def required_inputs(formula: str, postfix: str, item: FormulaItem) -> tuple[str, ...]:
        required = set()
        for arg in args_with_derivatives:
            if arg.type in ("at::TensorList", "const at::ITensorListRef &") and not is_foreach:
                continue  # TensorList functions handle their tangents internally
            if uses_ident(formula, arg.name):
                context.error(
                    first_ident(item.value, arg.name),
                    FORWARD_USES_BASE_NAME,
                    f"The forward formula for {defn_name} uses the base name of the argument '{arg.name}', "
                    f"which is ambiguous: write {arg.name}_p for the primal value or {arg.name}_t for the tangent.",
                )
                continue
            if uses_ident(formula, arg.name + postfix):
                required.add(arg.name)
        return tuple(required)

    single_output = len(forward) == 1 and len(forward[0][0].var_names) == 1
    updated = []
    for defn, item in forward:
        formula = defn.formula
        required_tangents = required_inputs(formula, "_t", item)
        if formula == "auto_element_wise":
            expanded = _auto_element_wise(
                f, defn_name, derivatives, single_output, args_with_derivatives, item, context
            )
            if expanded is None:
                continue
            formula, required_tangents = expanded, tuple(all_arg_names)
        elif formula == "auto_linear":
            diff_arg_names = [arg.name for arg in args_with_derivatives]
            expanded = _auto_linear(f, defn_name, all_arg_names, diff_arg_names, single_output, item, context)
            if expanded is None:
                continue
            formula, required_tangents = expanded, tuple(diff_arg_names)
        required_primals = required_inputs(formula, "_p", item)
        updated.append(
            ForwardDerivative(
                formula=formula,
                var_names=defn.var_names,
                var_types=defn.var_types,
                required_inputs_fw_grad=required_tangents,
                required_inputs_primal=required_primals,
                required_original_self_value=False,
                is_reusing_outplace_formula=False,
            )
        )
    return updated


def _auto_element_wise(
    f: NativeFunction,
    defn_name: str,
    derivatives: Sequence[Derivative],
    single_output: bool,
    args_with_derivatives: Sequence[Binding],
    item: FormulaItem,
    context: SectionContext,
) -> str | None:
    """The expanded formula, or None with a diagnostic when auto_element_wise does not apply."""
    if f.func.kind() == SchemaKind.inplace:
        context.error(
            item.value.span,
            AUTO_ELEMENT_WISE_INPLACE,
            f"Cannot use auto_element_wise with {f.func.name} because it is an in-place variant.",
        )
        return None
    if len(args_with_derivatives) != 1 or not single_output:
        context.error(
            item.value.span,
            AUTO_ELEMENT_WISE_MISUSE,
            f"{defn_name} defines its forward derivative as auto_element_wise, but that only works for "
            "functions with a single differentiable input and a single differentiable output.",
        )
        return None
    if len(derivatives) != 1:
        context.error(
            item.value.span,
            AUTO_ELEMENT_WISE_MISUSE,
            f"{defn_name} defines its forward derivative as auto_element_wise, but does not define the "
            "backward formula of its input, which it is derived from.",
        )
        return None
    return expand_auto_element_wise(derivatives[0].original_formula, args_with_derivatives)


def _auto_linear(
    f: NativeFunction,
    defn_name: str,
    all_arg_names: Sequence[str],
    diff_arg_names: Sequence[str],
    single_output: bool,
    item: FormulaItem,
    context: SectionContext,
) -> str | None:
    """The expanded formula, or None with a diagnostic when auto_linear does not apply."""
    if not single_output:
        context.error(
            item.value.span,
            AUTO_LINEAR_MISUSE,
            f"{defn_name} defines its forward derivative as auto_linear, but that only works for "
            "functions with a single differentiable output.",
        )
        return None
    if not diff_arg_names:
        context.error(
            item.value.span,
            AUTO_LINEAR_MISUSE,
            f"{defn_name} defines its forward derivative as auto_linear, but has no differentiable "
            "argument: give at least one argument a backward formula.",
        )
        return None
    expanded = expand_auto_linear(f, defn_name, all_arg_names, diff_arg_names)
    if expanded is None:
        context.error(
            item.value.span,
            AUTO_LINEAR_MISUSE,
            f"auto_linear calls {defn_name} again, but it is neither a function nor a method variant.",
        )
    return expanded


def expand_auto_element_wise(backward_formula: str, args_with_derivatives: Sequence[Binding]) -> str:
    """J·v for an element-wise function: the backward formula with grad → tangent, inputs → primals."""
    input_name = args_with_derivatives[0].name
    formula = ident_pattern("grad").sub(lambda m: f"{m.group(1)}{input_name}_t.conj(){m.group(2)}", backward_formula)
    for arg in args_with_derivatives:
        formula = ident_pattern(arg.name).sub(rf"\g<1>{arg.name}_p\g<2>", formula)  # names are word characters
    return f"({formula}).conj()"


def expand_auto_linear(
    f: NativeFunction, defn_name: str, all_arg_names: Sequence[str], diff_arg_names: Sequence[str]
) -> str | None:
    """J·v for a linear function: the function itself applied to the tangents."""
    new_args = [name + "_t" if name in diff_arg_names else name for name in all_arg_names]
    if f.func.has_symint():
        defn_name += "_symint"
    if Variant.function in f.variants:
        return f"at::{defn_name}({', '.join(new_args)})"
    if Variant.method not in f.variants:
        return None
    return f"{new_args[0]}.{defn_name}({', '.join(new_args[1:])})"
