"""codegen-inplace-uses-self-p: the entry is for the in-place function and its forward formula reads self_p,
the value being overwritten (api/autograd.py match_differentiability_info)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_INPLACE_USES_SELF_P
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext
from derivls.derivatives.saved import ident_pattern


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if not (o.inplace and o.exact):
        return
    for k in o.at.forward:
        if ident_pattern("self_p").search(str(k.item.value.value)):
            yield error(
                k.item.value.locate("self_p"),
                CODEGEN_INPLACE_USES_SELF_P,
                f"The forward formula of the in-place {o.label} reads self_p, the value it overwrites; "
                "use 'result' (torchgen's autograd codegen rejects self_p here).",
            )
