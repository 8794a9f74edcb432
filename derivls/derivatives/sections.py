"""One dispatch section of an entry by torchgen 2.x's rules (its `set_up_derivatives`): backward and
forward formulas, what they save, and the checks on how they use gradients."""

from __future__ import annotations

import re
from collections.abc import Sequence

from derivls.aten import cpp
from derivls.aten.native import NativeFunction
from derivls.base.diagnostics import Code, Diagnostic, Span, error
from derivls.base.safeyaml import short_repr
from derivls.codes.loader import (
    ARG_AND_RETURN,
    FORMULA_NOT_STRING,
    GRADS_OUT_OF_BOUNDS,
    KEY_NOT_STRING,
    OVERLAP,
    RESULT_INDEX_OUT_OF_BOUNDS,
    RESULT_MULTI_OUTPUT,
    UNKNOWN_NAME,
)
from derivls.derivatives.document import FormulaItem, Section
from derivls.derivatives.facts import FunctionFacts
from derivls.derivatives.forward import postprocess_forward
from derivls.derivatives.loader_checks import (
    dedup_saved,
    grad_usage_checks,
    name_fixes,
    saved_variable_diagnostic,
)
from derivls.derivatives.model import Derivative, DifferentiabilityInfo, ForwardDerivative
from derivls.derivatives.results import KeyResult, SectionResult, used_gradient_indices
from derivls.derivatives.saved import (
    STRING_VIEW_CAST,
    TORCHGEN_REPLACEMENTS,
    Replacement,
    SavedVariableError,
    saved_variables,
    uses_ident,
)

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

_RESULT_N = re.compile(r"^result(\d+)$")


class SectionContext:
    """Mutable scratch state while one dispatch section is analysed.

    (A plain class: a stdlib dataclass costs ~0.8 ms to define on the CLI's path.)"""

    __slots__ = ("diagnostics", "loader_rules")

    def __init__(
        self,
        diagnostics: list[Diagnostic] | None = None,
        # the release's saved-variable substitutions and optional-string cast (derivls.derivatives.releases)
        loader_rules: tuple[Sequence[Replacement], str] = (TORCHGEN_REPLACEMENTS, STRING_VIEW_CAST),
    ) -> None:
        self.diagnostics: list[Diagnostic] = [] if diagnostics is None else diagnostics
        self.loader_rules = loader_rules

    def error(self, span: Span, code: Code, message: str, **extra: Any) -> None:
        self.diagnostics.append(error(span, code, message, **extra))


class _Items:
    """A section's items sorted out, as torchgen's set_up_derivatives collects them."""

    __slots__ = ("results", "derivatives", "forward", "non_differentiable", "differentiable_names")

    def __init__(self) -> None:
        self.results: list[KeyResult] = []
        self.derivatives: list[tuple[Derivative, FormulaItem]] = []
        self.forward: list[tuple[ForwardDerivative, FormulaItem]] = []
        self.non_differentiable: list[tuple[str, FormulaItem]] = []
        self.differentiable_names: dict[str, FormulaItem] = {}


_NONE: frozenset[str] = frozenset()  # one empty set for the thousands of entries without named gradients


def analyse_section(
    f: NativeFunction,
    facts: FunctionFacts,
    defn_name: str,
    section: Section,
    output_differentiability: tuple[bool, ...] | None,
    conditions: tuple[str, ...] | None,
    context: SectionContext,
) -> SectionResult:
    returns = f.func.returns
    differentiability = output_differentiability or (True,) * len(returns)
    available_named_gradients = tuple(
        f"grad_{ret.name}"
        for ret, differentiable in zip(returns, differentiability)
        if differentiable and ret.name is not None and ret.type.is_tensor_like()
    )
    items = _sort_items(f, facts, defn_name, section, available_named_gradients, context)
    for n, item in items.non_differentiable:
        if n in items.differentiable_names:
            context.error(
                item.key.locate(n),
                OVERLAP,
                f"'{n}' is marked non_differentiable here but also has a derivative formula "
                f"(line {items.differentiable_names[n].key.span.line + 1} of this entry); keep one.",
            )
    args_with_derivatives = tuple(b for b in facts.bindings if b.name in items.differentiable_names)
    backward = [d for d, _ in items.derivatives]
    forward_derivatives = postprocess_forward(
        f, defn_name, facts.arg_names, backward, items.forward, args_with_derivatives, context
    )
    check_grad_usage(defn_name, items.derivatives, context)
    info = DifferentiabilityInfo(
        name=defn_name,
        func=f,
        op=None,
        derivatives=tuple(backward),
        forward_derivatives=tuple(forward_derivatives),
        all_saved_inputs=dedup_saved(v for d in backward for v in d.saved_inputs),
        all_saved_outputs=dedup_saved(v for d in backward for v in d.saved_outputs),
        available_named_gradients=available_named_gradients,
        used_named_gradients=frozenset().union(*(d.named_gradients for d in backward)) or _NONE,
        args_with_derivatives=args_with_derivatives,
        non_differentiable_arg_names=tuple(n for n, _ in items.non_differentiable),
        output_differentiability=output_differentiability,
        output_differentiability_conditions=conditions,
    )
    # Forward results were rewritten by postprocessing; point the key results at the final ones.
    final_forward = {id(item): fw for (_, item), fw in zip(items.forward, forward_derivatives)}
    results = [
        KeyResult(
            r.item,
            section.key.value,
            r.var_names,
            r.kind,
            r.derivative,
            final_forward.get(id(r.item), r.forward),
            backward_intended=r.kind == "invalid" and _is_backward_key(r, facts.arg_names),
        )
        for r in items.results
    ]
    return SectionResult(section.key.value, section.key, info, tuple(results))


def _sort_items(
    f: NativeFunction,
    facts: FunctionFacts,
    defn_name: str,
    section: Section,
    available_named_gradients: tuple[str, ...],
    context: SectionContext,
) -> _Items:
    """Each item analysed (in torchgen's order: sorted by key) and filed by what it became."""
    all_ret_names = [r.name for r in f.func.returns]
    items = _Items()
    keyed: list[tuple[str, FormulaItem]] = []
    for item in section.items:
        if isinstance(item.key.value, str):
            keyed.append((item.key.value, item))
        else:
            context.error(
                item.key.span, KEY_NOT_STRING, f"Expected argument or output names, not {short_repr(item.key.value)}."
            )
            items.results.append(KeyResult(item, section.key.value, (), "invalid"))
    for raw_names, item in sorted(keyed, key=lambda pair: pair[0]):
        names = tuple(x.strip() for x in raw_names.split(","))
        result = backward_item(
            f, facts, defn_name, item, names, facts.arg_names, all_ret_names, available_named_gradients, context
        )
        items.results.append(result)
        if result.derivative is not None:
            items.derivatives.append((result.derivative, item))
            for n in names:
                items.differentiable_names.setdefault(n, item)
        elif result.forward is not None:
            items.forward.append((result.forward, item))
        elif result.kind == "non_differentiable":
            items.non_differentiable.extend((n, item) for n in names)
    return items


def backward_item(
    f: NativeFunction,
    facts: FunctionFacts,
    defn_name: str,
    item: FormulaItem,
    names: tuple[str, ...],
    all_arg_names: list[str],
    all_ret_names: list[str | None],
    available_named_gradients: tuple[str, ...],
    context: SectionContext,
) -> KeyResult:
    section_key = "Default"
    invalid = KeyResult(item, section_key, names, "invalid")
    for n in names:
        if n in all_arg_names and n in all_ret_names:
            context.error(
                item.key.locate(n),
                ARG_AND_RETURN,
                f"'{n}' is both an input argument and a named return of {f.func.name}; rename the return "
                "in native_functions.yaml.",
            )
            return invalid
    formula = item.value.value
    if not isinstance(formula, str):
        context.error(
            item.value.span,
            FORMULA_NOT_STRING,
            f"The formula for '{item.key.value}' must be a string (a C++ expression or 'non_differentiable'), "
            f"not {type(formula).__name__} {short_repr(formula)}; quote it.",
        )
        return invalid

    if names[0] not in all_arg_names:
        return forward_item(f, item, names, formula, all_arg_names, context)

    unknown = [n for n in names if n not in all_arg_names]
    for n in unknown:
        context.error(
            item.key.locate(n),
            UNKNOWN_NAME,
            f"'{n}' is not an argument of {f.func.name}; arguments: {', '.join(all_arg_names)}.",
            fixes=name_fixes(item.key, n, all_arg_names),
        )
    if unknown:
        return invalid

    if formula.lower().strip() == "non_differentiable":
        return KeyResult(item, section_key, names, "non_differentiable")

    try:
        rules = context.loader_rules
        formula_in, saved_inputs = saved_variables(formula, facts.arg_nctypes, names, *rules)
        formula_out, saved_outputs = saved_variables(formula_in, facts.named_returns, names, *rules)
    except SavedVariableError as e:
        context.diagnostics.append(saved_variable_diagnostic(item, e))
        return invalid

    used_named_gradients = (
        frozenset(name for name in available_named_gradients if uses_ident(formula_out, name)) or _NONE
    )
    for i in used_gradient_indices(formula_out):
        if i >= len(f.func.returns):
            context.error(
                item.value.locate(f"grads[{i}]"),
                GRADS_OUT_OF_BOUNDS,
                f"Out of bounds grads access: the formula uses grads[{i}], but {cpp.name(f.func)} only returns "
                f"{len(f.func.returns)} output{'s' if len(f.func.returns) != 1 else ''}.",
            )
            return invalid
    derivative = Derivative(
        formula=formula_out,
        original_formula=formula,
        var_names=names,
        saved_inputs=saved_inputs,
        saved_outputs=saved_outputs,
        named_gradients=used_named_gradients,
    )
    return KeyResult(item, section_key, names, "backward", derivative=derivative)


def forward_item(
    f: NativeFunction,
    item: FormulaItem,
    names: tuple[str, ...],
    formula: str,
    all_arg_names: list[str],
    context: SectionContext,
) -> KeyResult:
    invalid = KeyResult(item, "Default", names, "invalid")
    returns = f.func.returns
    var_types = tuple(r.type for r in returns if r.name in names)
    matched = {r.name for r in returns if r.name in names}
    if not var_types:
        if names == ("result",):
            if len(returns) != 1:
                context.error(
                    item.key.span,
                    RESULT_MULTI_OUTPUT,
                    f"'result' names the only output, but {f.func.name} has {len(returns)} outputs; use "
                    + ", ".join(_output_names(f))
                    + ".",
                )
                return invalid
            var_types = (returns[0].type,)
            matched = {"result"}
        else:
            types = []
            for n in names:
                m = _RESULT_N.match(n)
                if m:
                    index = int(m.group(1))
                    if index >= len(returns):
                        context.error(
                            item.key.locate(n),
                            RESULT_INDEX_OUT_OF_BOUNDS,
                            f"'{n}' is out of bounds: {f.func.name} has {len(returns)} output"
                            f"{'s' if len(returns) != 1 else ''}.",
                        )
                        return invalid
                    types.append(returns[index].type)
                    matched.add(n)
            var_types = tuple(types)
    unmatched = [n for n in names if n not in matched]
    if not var_types or unmatched:
        for n in unmatched or list(names):
            context.error(
                item.key.locate(n),
                UNKNOWN_NAME,
                f"'{n}' is neither an argument nor an output of {f.func.name}. "
                f"Arguments: {', '.join(all_arg_names) or '(none)'}; outputs: {', '.join(_output_names(f))}.",
                fixes=name_fixes(item.key, n, [*all_arg_names, *_output_names(f)]),
            )
        return invalid
    forward = ForwardDerivative(
        formula=formula,
        var_names=names,
        var_types=var_types,
        required_inputs_fw_grad=None,
        required_inputs_primal=None,
        required_original_self_value=False,
        is_reusing_outplace_formula=False,
    )
    return KeyResult(item, "Default", names, "forward", forward=forward)


# -- torchgen's postprocess_forward_derivatives ---------------------------------------------


def check_grad_usage(
    defn_name: str, derivatives: Sequence[tuple[Derivative, FormulaItem]], context: SectionContext
) -> None:
    context.diagnostics.extend(grad_usage_checks(defn_name, derivatives))


def _is_backward_key(result: KeyResult, arg_names: Sequence[str]) -> bool:
    formula = result.item.value.value
    non_differentiable = isinstance(formula, str) and formula.lower().strip() == "non_differentiable"
    return bool(result.var_names) and result.var_names[0] in arg_names and not non_differentiable


def _output_names(f: NativeFunction) -> list[str]:
    if len(f.func.returns) == 1 and f.func.returns[0].name is None:
        return ["result"]
    return [r.name if r.name is not None else f"result{i}" for i, r in enumerate(f.func.returns)]
