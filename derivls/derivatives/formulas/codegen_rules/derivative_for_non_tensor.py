"""codegen-derivative-for-non-tensor: a backward formula for an argument that is not a differentiable Tensor
input (gen_variable_type.py emit_body/find_args_with_derivatives). A finding ends the overload's checks."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_DERIVATIVE_FOR_NON_TENSOR
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if not o.info.has_derivatives:
        return
    input_names = {n for n, _ in o.inputs}
    for k in o.at.backward:
        for n in k.var_names:
            if n not in input_names:
                yield error(
                    k.item.key.locate(n),
                    CODEGEN_DERIVATIVE_FOR_NON_TENSOR,
                    f"'{n}' is not a differentiable Tensor input of {o.label}; only Tensor inputs not marked "
                    "non_differentiable can have a backward formula.",
                )
