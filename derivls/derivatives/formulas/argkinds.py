"""Argument kinds the loader and the codegen take as differentiable, but whose generated code does not compile.

A `Tensor?[]` argument (`index.Tensor(Tensor self, Tensor?[] indices)`) is tensor-like to torchgen: a backward
formula for it passes load_derivatives and gen_variable_type, and the node compiles. But the forward-mode code
gen_variable_type writes for an entry with forward formulas (an explicit one or `auto_linear`) treats each
input with a derivative as a `Tensor?`: `isFwGradDefined(indices)` and `toNonOptFwGrad(indices)` take a
`const std::optional<at::Tensor>&`, which a `c10::List<std::optional<at::Tensor>>` is not, and VariableType.cpp
does not compile (g++: invalid initialization of reference of type 'const std::optional<at::Tensor>&' from
expression of type 'const c10::List<std::optional<at::Tensor> >').

  codegen-forward-optional-tensor-list   a backward formula for a `Tensor?[]` argument in an entry with forward
                                         formulas (on the argument's key)

The verdicts of the whole chain for every argument kind of the 15 releases, in each place a formula can give it
one, are tests/formulas/argkind_verdicts.py's (tests/formulas/argkinds.py runs the chain).
"""

from __future__ import annotations

from collections.abc import Iterator

from derivls.aten.schema_types import BaseTy, BaseType, ListType, OptionalType
from derivls.diagnostics import Diagnostic, error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import EntryResult, SectionResult

CODE = "codegen-forward-optional-tensor-list"


def argument_kind_checks(result: EntryResult, section: SectionResult) -> Iterator[Diagnostic]:
    """The section's formulas for arguments whose kind the generated code cannot differentiate (see the doc)."""
    canonical = result.canonical
    forward = [k for k in section.keys if k.kind == "forward" and k.forward is not None]
    if canonical is None or not forward:
        return
    kinds = {a.name: a.type for a in canonical.func.arguments.flat_all}
    for key in section.keys:
        if key.kind != "backward":
            continue
        for name in key.var_names:
            if _is_optional_tensor_list(kinds.get(name)):
                formula = forward[0].item.key.value
                yield error(
                    key.item.key.span,
                    CODE,
                    f"'{name}' is a Tensor?[] (a c10::List<std::optional<Tensor>>): the forward-mode code that "
                    f"VariableType.cpp generates for this entry's forward formula ('{formula}') reads every input with "
                    "a derivative as a Tensor? (isFwGradDefined, toNonOptFwGrad), and does not compile. Mark "
                    f"'{name}' non_differentiable, or give the entry no forward formula.",
                )


def _is_optional_tensor_list(t: object) -> bool:
    return (
        isinstance(t, ListType)
        and isinstance(t.elem, OptionalType)
        and isinstance(t.elem.elem, BaseType)
        and t.elem.elem.name == BaseTy.Tensor
    )
