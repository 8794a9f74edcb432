"""The checks torchgen's autograd codegen makes after load_derivatives that an entry can fail.

Each is a located error with a stable code; each runs on every overload the entry's formulas apply
to, as torchgen's match_differentiability_info pairs them: the entry's own function, and when that
is functional, every in-place and out= function with the same signature (strip_default=True) that is
not a generated out= variant. What fires where (torchgen 2.13 file and check):

  codegen-strides-inplace        api/autograd.py match_differentiability_info: `.sym_strides()` in the
                                 `self` formula, and an in-place overload uses it
  codegen-inplace-forward-count  same: an in-place overload, and the entry has several forward formulas
  codegen-inplace-uses-self-p    same: the entry is for the in-place function and its forward formula
                                 reads self_p (the value being overwritten)
  codegen-output-differentiability-length
                                 api/autograd.py gen_differentiable_outputs: its length ≠ the overload's outputs
  codegen-output-differentiability-inplace
                                 same: a False in it, and an in-place overload
  codegen-derivative-for-non-tensor
                                 gen_variable_type.py emit_body/find_args_with_derivatives: a backward
                                 formula for an argument that is not a differentiable Tensor input
  codegen-derivative-ignored     emit_body: backward formulas, but no differentiable output (or input)
  codegen-forward-count          emit_body: forward formulas cover ≠ the differentiable outputs
  codegen-forward-no-tangent     emit_body/get_any_has_fw_grad_cond: a forward formula reads no
                                 tangent of an input that has a backward formula
  codegen-forward-output-type    emit_fw_derivatives: a forward formula for an output that is not a
                                 Tensor (or a single Tensor list)
  codegen-not-abstract           gen_variable_type_func: formulas for a function without a dispatch
                                 section (CompositeImplicitAutograd) in native_functions.yaml
Not checked (they depend on native_functions.yaml only, or on no edit a derivatives.yaml can make):
MANUAL_BACKEND and RESET_GRAD_ACCUMULATOR consistency, the foreach reference-arity asserts (they
concern generated foreach infos), view/trace/python-binding asserts (gen_inplace_or_view_type,
gen_view_funcs, gen_trace_type, gen_python_functions).
"""

from __future__ import annotations

from collections.abc import Iterable
from itertools import chain

from derivls.aten import cpp
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.schema import BaseType, ListType, SchemaKind
from derivls.codes.codegen import (
    CODEGEN_DERIVATIVE_FOR_NON_TENSOR,
    CODEGEN_DERIVATIVE_IGNORED,
    CODEGEN_FORWARD_COUNT,
    CODEGEN_FORWARD_NO_TANGENT,
    CODEGEN_FORWARD_OUTPUT_TYPE,
    CODEGEN_INPLACE_FORWARD_COUNT,
    CODEGEN_INPLACE_USES_SELF_P,
    CODEGEN_NOT_ABSTRACT,
    CODEGEN_OUTPUT_DIFFERENTIABILITY_INPLACE,
    CODEGEN_OUTPUT_DIFFERENTIABILITY_LENGTH,
    CODEGEN_STRIDES_INPLACE,
)
from derivls.derivatives.formulas.argkinds import argument_kind_checks
from derivls.derivatives.model import DifferentiabilityInfo
from derivls.derivatives.saved import ident_pattern, uses_ident
from derivls.diagnostics import Diagnostic, error

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import EntryResult, SectionResult

# torchgen/packaged/autograd/gen_variable_type.py DONT_REQUIRE_DERIVATIVE (2.13), copied: derivls never
# imports torchgen at run time.
DONT_REQUIRE_DERIVATIVE = frozenset(
    "__and__ __iand__ __ilshift__ __ior__ __irshift__ __ixor__ __lshift__ __or__ __rshift__ __xor__ _coalesced_ "
    "_nested_tensor_size _nested_tensor_storage_offsets _nested_tensor_strides _sobol_engine_draw _sobol_engine_ff "
    "_sobol_engine_initialize_state_ _sobol_engine_scramble_ allclose argmax argmin argsort bucketize empty_like "
    "full_like isin isinf isnan isneginf isposinf logical_and logical_not logical_or logical_xor new_empty "
    "new_empty_strided new_full new_ones new_zeros ones_like quantize_per_channel quantize_per_tensor rand_like "
    "randn_like record_stream searchsorted signbit zeros_like".split()
)

_groups: dict[int, tuple[NativeIndex, dict[str, list[NativeFunction]]]] = {}


def _by_base_name(index: NativeIndex) -> dict[str, list[NativeFunction]]:
    """Functions by base name (`add` for add.Tensor, add_.Tensor, add.out): in-place and out= variants share
    their functional's base name, so signatures are compared only within one of these small lists."""
    hit = _groups.get(id(index))
    if hit is not None and hit[0] is index:
        return hit[1]
    table: dict[str, list[NativeFunction]] = {}
    for f in index:
        table.setdefault(f.func.name.name.base, []).append(f)
    _groups.clear()
    _groups[id(index)] = (index, table)
    return table


_group_cache: dict[int, tuple[NativeFunction, NativeIndex, list[NativeFunction]]] = {}


def overload_group(canonical: NativeFunction, index: NativeIndex) -> list[NativeFunction]:
    """The functions that would share this entry's infos if they had no entry of their own (cached):
    in-place and out= variants of the same signature, then in-place foreach functions it is a reference of."""
    hit = _group_cache.get(id(canonical))
    if hit is not None and hit[0] is canonical and hit[1] is index:
        return hit[2]
    group = _overload_group(canonical, index) + inplace_foreach_of(canonical, index)
    if len(_group_cache) > 20_000:
        _group_cache.clear()
    _group_cache[id(canonical)] = (canonical, index, group)
    return group


def _overload_group(canonical: NativeFunction, index: NativeIndex) -> list[NativeFunction]:
    if canonical.func.kind() != SchemaKind.functional:
        return []
    candidates = [
        f
        for f in _by_base_name(index).get(canonical.func.name.name.base, [])
        if f is not canonical and f.func.kind() != SchemaKind.functional
    ]
    if not candidates:
        return []
    arity = len(canonical.func.arguments.flat_non_out)
    plain = canonical.func.signature()  # cached on the schema; equal plain signatures are equal stripped
    stripped = None
    group = []
    for f in candidates:
        if len(f.func.arguments.flat_non_out) != arity:
            continue
        if f.func.signature() == plain:
            group.append(f)
            continue
        stripped = stripped or canonical.func.signature(strip_default=True)
        if f.func.signature(strip_default=True) == stripped:
            group.append(f)
    return group


def applied_overloads(
    canonical: NativeFunction, index: NativeIndex, owned: frozenset[object] = frozenset()
) -> list[tuple[NativeFunction, bool]]:
    """(function, exact match) for every function torchgen gives this entry's infos; `owned`: the
    schemas that have an entry of their own (torchgen matches those exactly, not through this one)."""
    out = [(canonical, True)]
    for f in overload_group(canonical, index):
        if f.func in owned:
            continue
        if "generated" in f.tags and f.func.kind() == SchemaKind.out:
            continue
        if f.func.name.name.base.startswith("_foreach_") and f.func.name.name.base != canonical.func.name.name.base:
            out.append((f, False))  # an in-place foreach function taking this entry as its reference
            continue
        if f.func.name.name.base.startswith("_foreach_"):
            continue  # match_differentiability_info does not give a foreach function its variant's info
        out.append((f, False))
    return out


_FOREACH_WITH_INPLACE_REF = frozenset({"_foreach_zero_"})  # torchgen.api.autograd._foreach_with_inplace_ref


def inplace_foreach_of(reference: NativeFunction, index: NativeIndex) -> list[NativeFunction]:
    """The in-place `_foreach_<name>_` functions torchgen gives this entry's info as their reference
    (api/autograd.py is_reference_for_foreach / gen_foreach_derivativeinfo: in-place foreach functions
    use the reference info itself). When several entries could be the reference torchgen takes the first
    in the file; derivls treats each as one."""
    schema = reference.func
    if schema.kind() != SchemaKind.functional and str(schema.name) not in _FOREACH_WITH_INPLACE_REF:
        return []
    out = []
    for f in _foreach_by_base(index).get(schema.name.name.base, []):
        if f.func.kind() != SchemaKind.inplace:
            continue
        if schema.name.name.inplace and str(f.func.name) not in _FOREACH_WITH_INPLACE_REF:
            continue
        args, ref_args = f.func.arguments.flat_non_out, schema.arguments.flat_non_out
        if len(args) != len(ref_args):
            continue  # (torchgen skips this test for a few listed overloads; none is in-place)
        if all(r.type == a.type or r.type == getattr(a.type, "elem", None) for a, r in zip(args, ref_args)):
            out.append(f)
    return out


_foreach: dict[int, tuple[NativeIndex, dict[str, list[NativeFunction]]]] = {}


def _foreach_by_base(index: NativeIndex) -> dict[str, list[NativeFunction]]:
    hit = _foreach.get(id(index))
    if hit is None or hit[0] is not index:
        table: dict[str, list[NativeFunction]] = {}
        for f in index:
            base = f.func.name.name.base
            if base.startswith("_foreach_"):
                table.setdefault(base.removeprefix("_foreach_"), []).append(f)
        hit = (index, table)
        _foreach.clear()
        _foreach[id(index)] = hit
    return hit[1]


def _is_tensor_like(t: object) -> bool:
    return t.is_tensor_like()  # type: ignore[attr-defined]


def _differentiable_inputs(f: NativeFunction, info: DifferentiabilityInfo) -> list[tuple[str, object]]:
    args = f.func.arguments.flat_non_out  # emit_body's gen_differentiable_inputs: non_out only
    return [
        (a.name, a.type) for a in args if _is_tensor_like(a.type) and a.name not in info.non_differentiable_arg_names
    ]


def _differentiable_outputs(f: NativeFunction, info: DifferentiabilityInfo) -> tuple[list[str], str | None]:
    """(names, problem): gen_differentiable_outputs, with the RuntimeError it would raise as `problem`."""
    names = list(cpp.return_names(f))
    od = info.output_differentiability
    if od is not None:
        if len(od) != len(names):
            return [], "length"
        if False in od and f.func.kind() == SchemaKind.inplace:
            return [], "inplace"
        return [n for n, d in zip(names, od) if d], None
    candidates = [
        n
        for n, r in zip(names, f.func.returns)
        if _is_tensor_like(r.type) and n not in info.non_differentiable_arg_names
    ]
    if any(uses_ident(d.formula, "grad") for d in info.derivatives):
        return candidates[:1], None
    return candidates, None


def _label(f: NativeFunction, exact: bool) -> str:
    if exact:
        return f"{f.func.name}"
    kind = {SchemaKind.inplace: "in-place", SchemaKind.out: "out="}.get(f.func.kind(), "")
    return f"its {kind} overload {f.func.name}"


def codegen_checks(result: EntryResult, index: NativeIndex, owned: frozenset[object] = frozenset()) -> list[Diagnostic]:
    if result.canonical is None or index is None:
        return []
    out: list[Diagnostic] = []
    seen: set[tuple[str, int, int]] = set()
    overloads = applied_overloads(result.canonical, index, owned)
    for section in result.sections:
        if section.info is None:
            continue
        for d in chain(_section_checks(result, section, overloads, index), argument_kind_checks(result, section)):
            k = (d.code, d.span.line, d.span.column)
            if k not in seen:  # one diagnostic per place, even if several overloads trip it
                seen.add(k)
                out.append(d)
    return out


def _has_dispatch_sections(index: NativeIndex) -> bool:
    """False for a native_functions.yaml excerpt without any dispatch section (every function then reads as
    CompositeImplicitAutograd): codegen-not-abstract is only judged against a file that has them."""
    hit = _abstract.get(id(index))
    if hit is None or hit[0] is not index:
        hit = (index, any(f.is_abstract for f in index))
        _abstract.clear()
        _abstract[id(index)] = hit
    return hit[1]


_abstract: dict[int, tuple[NativeIndex, bool]] = {}


def _section_checks(
    result: EntryResult,
    section: SectionResult,
    overloads: Iterable[tuple[NativeFunction, bool]],
    index: NativeIndex,
) -> Iterable[Diagnostic]:
    info = section.info
    assert info is not None
    entry = result.entry
    name_span = entry.name.span if entry.name is not None else entry.span
    od_span = entry.output_differentiability.span if entry.output_differentiability is not None else name_span
    backward = [k for k in section.keys if k.kind == "backward"]
    forward = [k for k in section.keys if k.kind == "forward" and k.forward is not None]
    backward_span = backward[0].item.key.span if backward else name_span
    forward_span = forward[0].item.key.span if forward else name_span
    for f, exact in overloads:
        label = _label(f, exact)
        inplace = f.func.kind() == SchemaKind.inplace
        # match_differentiability_info
        if inplace:
            for k in backward:
                d = k.derivative
                if (
                    d is not None
                    and "self" in d.var_names
                    and any("strides_or_error" in s.expr for s in d.saved_inputs)
                ):
                    yield error(
                        k.item.value.locate("sym_strides()"),
                        CODEGEN_STRIDES_INPLACE,
                        f"'.sym_strides()' in the 'self' formula is not supported for an in-place function, and these "
                        f"formulas also apply to {label} (torchgen's autograd codegen rejects it).",
                    )
            if info.forward_derivatives and len(info.forward_derivatives) != 1:
                yield error(
                    forward_span,
                    CODEGEN_INPLACE_FORWARD_COUNT,
                    f"These formulas also apply to {label}, which is in-place: it takes exactly one forward "
                    f"formula, not {len(info.forward_derivatives)}.",
                )
            if exact:
                for k in forward:
                    if ident_pattern("self_p").search(str(k.item.value.value)):
                        yield error(
                            k.item.value.locate("self_p"),
                            CODEGEN_INPLACE_USES_SELF_P,
                            f"The forward formula of the in-place {label} reads self_p, the value it overwrites; "
                            "use 'result' (torchgen's autograd codegen rejects self_p here).",
                        )
        if not info.has_derivatives and not f.is_abstract:
            continue  # not use_derived: gen_variable_type never looks at this overload
        if info.has_derivatives and not f.is_abstract and _has_dispatch_sections(index):
            yield error(
                name_span,
                CODEGEN_NOT_ABSTRACT,
                f"There are backward formulas for {label}, which has no dispatch section in native_functions.yaml "
                "(it is CompositeImplicitAutograd); give it explicit backends (e.g. CompositeExplicitAutograd) "
                "or remove the formulas.",
            )
        outputs, problem = _differentiable_outputs(f, info)
        if problem == "length":
            yield error(
                od_span,
                CODEGEN_OUTPUT_DIFFERENTIABILITY_LENGTH,
                f"output_differentiability has {len(info.output_differentiability or ())} item(s), but {label} has "
                f"{len(f.func.returns)} output(s).",
            )
            continue
        if problem == "inplace":
            yield error(
                od_span,
                CODEGEN_OUTPUT_DIFFERENTIABILITY_INPLACE,
                f"output_differentiability has a False, but these formulas also apply to {label}, which is in-place "
                "(its version counter would not be updated).",
            )
            continue
        base = f.func.name.name.base
        is_inplace_foreach = base.startswith("_foreach_") and inplace
        # an in-place foreach function's inputs are read as its reference's (inplace_foreacharg2refarg)
        inputs = _differentiable_inputs(info.func if is_inplace_foreach else f, info)
        input_names = {n for n, _ in inputs}
        if info.has_derivatives:
            missing = False
            for k in backward:
                for n in k.var_names:
                    if n not in input_names:
                        missing = True
                        yield error(
                            k.item.key.locate(n),
                            CODEGEN_DERIVATIVE_FOR_NON_TENSOR,
                            f"'{n}' is not a differentiable Tensor input of {label}; only Tensor inputs not marked "
                            "non_differentiable can have a backward formula.",
                        )
            if missing:
                continue
        undifferentiable = base in DONT_REQUIRE_DERIVATIVE or cpp.name(f.func) in DONT_REQUIRE_DERIVATIVE
        requires_derivative = not undifferentiable and bool(inputs) and (bool(outputs) or is_inplace_foreach)
        if info.has_derivatives and not requires_derivative and f.func.returns:
            why = (
                "it is in torchgen's DONT_REQUIRE_DERIVATIVE list"
                if undifferentiable
                else (
                    "output_differentiability leaves no differentiable output"
                    if not outputs
                    else "no input is a Tensor"
                )
            )
            yield error(
                od_span if not outputs and entry.output_differentiability is not None else backward_span,
                CODEGEN_DERIVATIVE_IGNORED,
                f"These backward formulas would be ignored for {label}: {why}.",
            )
            continue
        if not requires_derivative or not forward or is_inplace_foreach:
            continue
        count = 1 if inplace else sum(len(k.var_names) for k in forward)
        if count != len(outputs):
            yield error(
                forward_span,
                CODEGEN_FORWARD_COUNT,
                f"The forward formulas cover {count} output(s), but {label} has {len(outputs)} differentiable "
                f"output(s) ({', '.join(outputs) or 'none'}): give one forward formula per differentiable output, "
                "or none.",
            )
            continue
        for k in forward:
            fw = k.forward
            assert fw is not None
            if not fw.required_inputs_fw_grad and not (
                len(inputs) == 1 and isinstance(inputs[0][1], ListType) and _is_tensor_like(inputs[0][1])
            ):
                yield error(
                    k.item.value.span,
                    CODEGEN_FORWARD_NO_TANGENT,
                    f"This forward formula reads no tangent (<input>_t) of an input with a backward formula; for "
                    f"{label} that is only supported when the single differentiable input is a Tensor list.",
                )
            if f.func.kind() == SchemaKind.out:
                continue
            types = fw.var_types
            if not all(isinstance(t, BaseType) and _is_tensor_like(t) for t in types) and not (
                len(types) == 1 and isinstance(types[0], ListType) and _is_tensor_like(types[0])
            ):
                yield error(
                    k.item.key.span,
                    CODEGEN_FORWARD_OUTPUT_TYPE,
                    f"A forward formula can only be for Tensor outputs (or a single Tensor list) of {label}; "
                    f"{', '.join(k.var_names)} is {', '.join(str(t) for t in types)}.",
                )
