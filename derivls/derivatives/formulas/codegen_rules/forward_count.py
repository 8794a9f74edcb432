"""codegen-forward-count: the forward formulas cover ≠ the differentiable outputs (gen_variable_type.py
emit_body). A finding ends the overload's checks."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_FORWARD_COUNT
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    count = 1 if o.inplace else sum(len(k.var_names) for k in o.at.forward)
    outputs = o.outputs
    if count != len(outputs):
        yield error(
            o.at.forward_span,
            CODEGEN_FORWARD_COUNT,
            f"The forward formulas cover {count} output(s), but {o.label} has {len(outputs)} differentiable "
            f"output(s) ({', '.join(outputs) or 'none'}): give one forward formula per differentiable output, "
            "or none.",
        )
