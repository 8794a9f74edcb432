"""codegen-output-differentiability-length and codegen-output-differentiability-inplace: the RuntimeErrors
api/autograd.py gen_differentiable_outputs raises (its length ≠ the overload's outputs; a False in it, and
an in-place overload). A finding ends the overload's checks."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_OUTPUT_DIFFERENTIABILITY_INPLACE, CODEGEN_OUTPUT_DIFFERENTIABILITY_LENGTH
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if o.output_problem == "length":
        yield error(
            o.at.od_span,
            CODEGEN_OUTPUT_DIFFERENTIABILITY_LENGTH,
            f"output_differentiability has {len(o.info.output_differentiability or ())} item(s), but {o.label} has "
            f"{len(o.f.func.returns)} output(s).",
        )
    elif o.output_problem == "inplace":
        yield error(
            o.at.od_span,
            CODEGEN_OUTPUT_DIFFERENTIABILITY_INPLACE,
            f"output_differentiability has a False, but these formulas also apply to {o.label}, which is in-place "
            "(its version counter would not be updated).",
        )
