"""codegen-strides-inplace: `.sym_strides()` in the `self` formula while an in-place overload uses it
(api/autograd.py match_differentiability_info)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_STRIDES_INPLACE
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if not o.inplace:
        return
    for k in o.at.backward:
        d = k.derivative
        if d is not None and "self" in d.var_names and any("strides_or_error" in s.expr for s in d.saved_inputs):
            yield error(
                k.item.value.locate("sym_strides()"),
                CODEGEN_STRIDES_INPLACE,
                f"'.sym_strides()' in the 'self' formula is not supported for an in-place function, and these "
                f"formulas also apply to {o.label} (torchgen's autograd codegen rejects it).",
            )
