"""The driver of the checks torchgen's autograd codegen makes after load_derivatives that an entry can fail.

Each is a located error with a stable code; each runs on every overload the entry's formulas apply
to, as torchgen's match_differentiability_info pairs them: the entry's own function, and when that
is functional, every in-place and out= function with the same signature (strip_default=True) that is
not a generated out= variant; when it is not, the generated functional variant of its signature. Past
match_differentiability_info, only on an overload gen_variable_type writes a kernel for (not
MANUAL_AUTOGRAD: VariableTypeManual.cpp's). What fires where (torchgen 2.13 file and check):

  codegen-strides-inplace        api/autograd.py match_differentiability_info: `.sym_strides()` in the
                                 `self` formula, and an in-place overload uses it
  codegen-inplace-forward-count  same: an in-place overload, and the entry has several forward formulas
  codegen-inplace-uses-self-p    same: the entry is for the in-place function and its forward formula
                                 reads self_p (the value being overwritten)
  codegen-output-differentiability-length
                                 api/autograd.py gen_differentiable_outputs: its length ≠ the overload's outputs
  codegen-output-differentiability-inplace
                                 same: a False in it, and an in-place overload
  codegen-foreach-argument-type  gen_variable_type.py emit_body: an in-place foreach function's argument
                                 (a list by its element) ≠ its info's function's (its own entry's: Tensor[])
  codegen-derivative-for-non-tensor
                                 gen_variable_type.py emit_body/find_args_with_derivatives: a backward
                                 formula for an argument that is not a differentiable Tensor input
  codegen-derivative-ignored     emit_body: backward formulas, but no differentiable output (or input)
  codegen-forward-count          emit_body: forward formulas cover ≠ the differentiable outputs
  codegen-forward-no-tangent     emit_body/get_any_has_fw_grad_cond: a forward formula reads no
                                 tangent of an input that has a backward formula
  codegen-forward-output-type    emit_fw_derivatives: a forward formula for an output that is not a
                                 Tensor (or a single Tensor list)
  codegen-forward-result-named-output
                                 emit_fw_derivatives: a forward formula keyed `result` of a function whose
                                 kernel declares its one output by its name (g++ rejects VariableType.cpp)
  codegen-view-function          gen_inplace_or_view_type.py emit_view_body: a view function with a
                                 differentiable output and an argument its replay lambda cannot capture
                                 (a ScalarType…), or several differentiable outputs
  codegen-not-abstract           gen_variable_type_func: formulas for a function without a dispatch
                                 section (CompositeImplicitAutograd) in native_functions.yaml
Not checked (they depend on native_functions.yaml only, or on no edit a derivatives.yaml can make):
MANUAL_BACKEND and RESET_GRAD_ACCUMULATOR consistency, the foreach reference-arity asserts (they
concern generated foreach infos), view/trace/python-binding asserts (gen_inplace_or_view_type,
gen_view_funcs, gen_trace_type, gen_python_functions).

Each check is a module of codegen_rules/ (how to add one: its __init__'s docstring); this runs them in
torchgen's order; overloads.py says which functions an entry's infos apply to.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Iterator

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.base.diagnostics import Diagnostic
from derivls.derivatives.formulas.codegen_rules import (
    argument_kinds,
    derivative_for_non_tensor,
    derivative_ignored,
    foreach_argument_type,
    forward_count,
    forward_formulas,
    forward_result_name,
    inplace_forward_count,
    inplace_uses_self_p,
    not_abstract,
    output_differentiability,
    strides_inplace,
    view_function,
)
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext, SectionContext
from derivls.derivatives.formulas.overloads import applied_overloads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import EntryResult

OverloadRule = Callable[[OverloadContext], Iterable[Diagnostic]]
ENDS, GOES_ON = True, False  # a finding of the rule ends the overload's checks (torchgen raises there), or not

# (gate, rules) in torchgen's order: a stage runs on an overload only if its gate holds (and no earlier
# rule marked ENDS found something on it).
OVERLOAD_RULES: tuple[tuple[Callable[[OverloadContext], bool], tuple[tuple[OverloadRule, bool], ...]], ...] = (
    (  # match_differentiability_info
        lambda o: True,
        (
            (strides_inplace.check, GOES_ON),
            (inplace_forward_count.check, GOES_ON),
            (inplace_uses_self_p.check, GOES_ON),
        ),
    ),
    (  # gen_variable_type: only the overloads it looks at (use_derived)
        lambda o: o.use_derived,
        (
            (not_abstract.check, GOES_ON),
            (foreach_argument_type.check, ENDS),
            (output_differentiability.check, ENDS),
            (derivative_for_non_tensor.check, ENDS),
            (derivative_ignored.check, ENDS),
            (view_function.check, GOES_ON),  # (gen_inplace_or_view_type, on the same overloads)
        ),
    ),
    (  # emit_body's forward derivatives
        lambda o: o.checks_forward,
        (
            (forward_count.check, ENDS),
            (forward_formulas.check, GOES_ON),
            (forward_result_name.check, GOES_ON),
        ),
    ),
)
SECTION_RULES: tuple[Callable[[SectionContext], Iterable[Diagnostic]], ...] = (argument_kinds.check,)


def codegen_checks(result: EntryResult, index: NativeIndex, owned: frozenset[object] = frozenset()) -> list[Diagnostic]:
    if result.canonical is None or index is None:
        return []
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int]] = set()
    overloads = applied_overloads(result.canonical, index, owned)
    for section in result.sections:
        if section.info is None:
            continue
        at = SectionContext(result, section, index)
        for d in _section_checks(at, overloads):
            k = (d.code, d.span.line, d.span.column)
            if k not in seen:  # one diagnostic per place, even if several overloads trip it
                seen.add(k)
                out.append(d)
    return out


def _section_checks(at: SectionContext, overloads: Iterable[tuple[NativeFunction, bool]]) -> Iterator[Diagnostic]:
    for f, exact in overloads:
        yield from _overload_checks(OverloadContext(at, f, exact))
    for rule in SECTION_RULES:
        yield from rule(at)


def _overload_checks(o: OverloadContext) -> Iterator[Diagnostic]:
    for gate, rules in OVERLOAD_RULES:
        if not gate(o):
            return
        for check, ends in rules:
            found = False
            for d in check(o):
                found = True
                yield d
            if found and ends:
                return
