"""codegen-derivative-ignored: backward formulas, but no differentiable output (or input), or a function in
DONT_REQUIRE_DERIVATIVE (gen_variable_type.py emit_body). A finding ends the overload's checks."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_DERIVATIVE_IGNORED
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if not (o.info.has_derivatives and not o.requires_derivative and o.f.func.returns):
        return
    why = (
        "it is in torchgen's DONT_REQUIRE_DERIVATIVE list"
        if o.undifferentiable
        else ("output_differentiability leaves no differentiable output" if not o.outputs else "no input is a Tensor")
    )
    yield error(
        o.at.od_span if not o.outputs and o.at.entry.output_differentiability is not None else o.at.backward_span,
        CODEGEN_DERIVATIVE_IGNORED,
        f"These backward formulas would be ignored for {o.label}: {why}.",
    )
