"""codegen-forward-no-tangent and codegen-forward-output-type, formula by formula (one site: each forward
formula): it reads no tangent of an input that has a backward formula (gen_variable_type.py
emit_body/get_any_has_fw_grad_cond); it is for an output that is not a Tensor or a single Tensor list
(emit_fw_derivatives)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.aten.schema import BaseType, ListType, SchemaKind
from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_FORWARD_NO_TANGENT, CODEGEN_FORWARD_OUTPUT_TYPE
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext, is_tensor_like


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    inputs = o.inputs
    for k in o.at.forward:
        fw = k.forward
        assert fw is not None
        if not fw.required_inputs_fw_grad and not (
            len(inputs) == 1 and isinstance(inputs[0][1], ListType) and is_tensor_like(inputs[0][1])
        ):
            yield error(
                k.item.value.span,
                CODEGEN_FORWARD_NO_TANGENT,
                f"This forward formula reads no tangent (<input>_t) of an input with a backward formula; for "
                f"{o.label} that is only supported when the single differentiable input is a Tensor list.",
            )
        if o.f.func.kind() == SchemaKind.out:
            continue
        types = fw.var_types
        if not all(isinstance(t, BaseType) and is_tensor_like(t) for t in types) and not (
            len(types) == 1 and isinstance(types[0], ListType) and is_tensor_like(types[0])
        ):
            yield error(
                k.item.key.span,
                CODEGEN_FORWARD_OUTPUT_TYPE,
                f"A forward formula can only be for Tensor outputs (or a single Tensor list) of {o.label}; "
                f"{', '.join(k.var_names)} is {', '.join(str(t) for t in types)}.",
            )
