"""codegen-not-abstract: formulas for a function without a dispatch section (CompositeImplicitAutograd) in
native_functions.yaml (gen_variable_type.py gen_variable_type_func)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_NOT_ABSTRACT
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext, has_dispatch_sections


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if o.info.has_derivatives and not o.f.is_abstract and has_dispatch_sections(o.at.index):
        yield error(
            o.at.name_span,
            CODEGEN_NOT_ABSTRACT,
            f"There are backward formulas for {o.label}, which has no dispatch section in native_functions.yaml "
            "(it is CompositeImplicitAutograd); give it explicit backends (e.g. CompositeExplicitAutograd) "
            "or remove the formulas.",
        )
