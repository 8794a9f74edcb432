"""codegen-forward-optional-tensor-list: argument kinds the loader and the codegen take as differentiable, but
whose generated code does not compile.

A `Tensor?[]` argument (`index.Tensor(Tensor self, Tensor?[] indices)`) is tensor-like to torchgen: a backward
formula for it passes load_derivatives and gen_variable_type, and the node compiles. But the forward-mode code
gen_variable_type writes for an entry with forward formulas (an explicit one or `auto_linear`) treats each
input with a derivative as a `Tensor?`: `isFwGradDefined(indices)` and `toNonOptFwGrad(indices)` take a
`const std::optional<at::Tensor>&`, which a `c10::List<std::optional<at::Tensor>>` is not, and VariableType.cpp
does not compile (g++: invalid initialization of reference of type 'const std::optional<at::Tensor>&' from
expression of type 'const c10::List<std::optional<at::Tensor> >').

  codegen-forward-optional-tensor-list   a backward formula for a `Tensor?[]` or `Tensor[]` argument (not in a
                                         `_foreach_` entry) whose tangent or primal a forward formula reads
                                         (`indices_t`; auto_linear and auto_element_wise read every one), on the
                                         argument's key. (An explicit `offsets_t` of a Tensor[] is refused by the
                                         codegen first: codegen-forward-… checks say so.)

The verdicts of the whole chain for every argument kind of the 15 releases, in each place a formula can give it
one, are tests/formulas/argkind_verdicts.py's (tests/formulas/argkinds.py runs the chain).
"""

from __future__ import annotations

import re
from collections.abc import Iterator

from derivls.aten import cpp
from derivls.aten.schema_types import BaseTy, BaseType, ListType, OptionalType
from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_FORWARD_OPTIONAL_TENSOR_LIST
from derivls.derivatives.formulas.codegen_rules.context import MANUAL_AUTOGRAD, SectionContext

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import EntryResult, SectionResult

CODE = CODEGEN_FORWARD_OPTIONAL_TENSOR_LIST


def check(s: SectionContext) -> Iterator[Diagnostic]:
    """A section rule: it runs once per section, after the overload rules."""
    return argument_kind_checks(s.result, s.section)


def argument_kind_checks(result: EntryResult, section: SectionResult) -> Iterator[Diagnostic]:
    """The section's formulas for list arguments whose tangent a forward formula reads (see the doc)."""
    canonical = result.canonical
    forward = [k for k in section.keys if k.kind == "forward" and k.forward is not None]
    if canonical is None or not forward or canonical.func.name.name.base.startswith("_foreach_"):
        return  # (a foreach kernel unpacks its lists element by element)
    if cpp.name(canonical.func) in MANUAL_AUTOGRAD:
        return  # (its VariableType kernel is written by hand: gen_variable_type writes no forward-mode code)
    kinds = {a.name: a.type for a in canonical.func.arguments.flat_all}
    for key in section.keys:
        if key.kind != "backward":
            continue
        for name in key.var_names:
            kind = _tensor_list(kinds.get(name))
            if kind is None:
                continue
            reader = next((k for k in forward if _reads(k.forward.formula, name)), None)  # type: ignore[union-attr]
            if reader is None:
                continue
            yield error(
                key.item.key.span,
                CODE,
                f"'{name}' is a {kind}: the forward-mode code VariableType.cpp generates for the forward formula "
                f"('{reader.item.value.value}'), which reads its tangent, unpacks every input with a derivative as a "
                "Tensor? (isFwGradDefined, toNonOptFwGrad), and does not compile. Mark "
                f"'{name}' non_differentiable, or read no tangent of it in the forward formula.",
            )


def _reads(formula: str, name: str) -> bool:
    return re.search(rf"(?<![\w.]){re.escape(name)}_[tp](?!\w)", formula) is not None


def _tensor_list(t: object) -> str | None:
    """ "Tensor?[]" or "Tensor[]" for a list of (optional) Tensors, else None."""
    if not isinstance(t, ListType):
        return None
    if isinstance(t.elem, BaseType) and t.elem.name == BaseTy.Tensor:
        return "Tensor[] (an at::TensorList)"
    return "Tensor?[] (a c10::List<std::optional<Tensor>>)" if _is_optional_tensor_list(t) else None


def _is_optional_tensor_list(t: object) -> bool:
    return (
        isinstance(t, ListType)
        and isinstance(t.elem, OptionalType)
        and isinstance(t.elem.elem, BaseType)
        and t.elem.elem.name == BaseTy.Tensor
    )
