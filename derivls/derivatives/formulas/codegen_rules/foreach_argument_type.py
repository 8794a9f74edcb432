"""codegen-foreach-argument-type: an in-place `_foreach_` function given an info whose function's arguments are
not its own, element by element (gen_variable_type.py emit_body, `foreach_arg_type != ref_arg.type`). A finding
ends the overload's checks."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.aten.schema_types import ListType
from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_FOREACH_ARGUMENT_TYPE
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if not o.is_inplace_foreach:
        return
    reference = o.info.func
    # (emit_body's arity assert comes first; it concerns generated infos only: an unequal count is left to it)
    for arg, ref in zip(o.f.func.arguments.flat_non_out, reference.func.arguments.flat_non_out):
        element = arg.type.elem if isinstance(arg.type, ListType) else arg.type
        if element != ref.type:
            whose = "its own entry" if reference is o.f else f"the formulas of {reference.func.name}"
            yield error(
                o.at.backward_span,
                CODEGEN_FOREACH_ARGUMENT_TYPE,
                f"{o.label} is an in-place foreach function, and torchgen reads {whose} element by element: its "
                f"argument `{arg.name}` ({arg.type}, element {element}) is paired with `{ref.name}` ({ref.type}), "
                f"and gen_variable_type asserts they are of one type. "
                + (
                    "Remove this entry: torchgen gives an in-place foreach function the formulas of its reference "
                    f"(the `{o.f.func.name.name.base.removeprefix('_foreach_').rstrip('_')}` overload of its "
                    "arguments' elements)."
                    if reference is o.f
                    else ""
                ),
            )
            return
