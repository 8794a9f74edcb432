"""context.py's findings for one formula of a section (the glue hook.py calls: one line there)."""

from __future__ import annotations

from derivls.derivatives.formulas import context
from derivls.derivatives.formulas.resolve import Finding
from derivls.derivatives.formulas.scope import Scope
from derivls.derivatives.formulas.tokens import matching_brackets, tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import SectionResult


def in_context(formula: str, scope: Scope, section: SectionResult) -> list[Finding]:
    """formula-context findings: what the places the generated code puts `formula` cannot hold (none where its
    brackets or literals are unbalanced: formula-unbalanced / formula-unterminated say that)."""
    tokens, problems = tokenize(formula)
    if problems:
        return []
    element_wise = scope.backward and any(
        k.kind == "forward" and k.item.value.value == "auto_element_wise" for k in section.keys
    )
    where = context.places(scope, formula, element_wise)
    return [
        Finding(context.CODE, s.severity, s.start, s.end, s.message)
        for s in context.context_slips(formula, tokens, matching_brackets(tokens), where, context.tensor_local(scope))
    ]
