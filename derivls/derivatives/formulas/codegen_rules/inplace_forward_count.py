"""codegen-inplace-forward-count: an in-place overload, and the entry has several forward formulas
(api/autograd.py match_differentiability_info)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_INPLACE_FORWARD_COUNT
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    count = len(o.info.forward_derivatives)
    if o.inplace and o.info.forward_derivatives and count != 1:
        yield error(
            o.at.forward_span,
            CODEGEN_INPLACE_FORWARD_COUNT,
            f"These formulas also apply to {o.label}, which is in-place: it takes exactly one forward "
            f"formula, not {count}.",
        )
