"""The shared context of the codegen-stage rules: one entry section's keys and spans (`SectionContext`), and
one overload torchgen gives its infos to, with what gen_variable_type derives for it (`OverloadContext`:
its differentiable inputs and outputs, whether it requires a derivative)."""

from __future__ import annotations

from functools import cached_property

from derivls.aten import cpp
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.schema import SchemaKind
from derivls.derivatives.model import DifferentiabilityInfo
from derivls.derivatives.saved import uses_ident

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.base.diagnostics import Span
    from derivls.derivatives.results import EntryResult, KeyResult, SectionResult

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


# torchgen/packaged/autograd/gen_trace_type.py MANUAL_AUTOGRAD (2.13: MANUAL_BACKEND | MANUAL_AUTOGRAD_AND_TRACER),
# copied: their VariableType kernels are written by hand (VariableTypeManual.cpp), and gen_variable_type skips them.
MANUAL_AUTOGRAD = frozenset(
    "options data set_data is_leaf output_nr _version retain_grad _backward requires_grad_ "
    "resize_ resize_as_ detach detach_ copy_ _fw_primal _make_dual".split()
)


def is_tensor_like(t: object) -> bool:
    return t.is_tensor_like()  # type: ignore[attr-defined]


def differentiable_inputs(f: NativeFunction, info: DifferentiabilityInfo) -> list[tuple[str, object]]:
    args = f.func.arguments.flat_non_out  # emit_body's gen_differentiable_inputs: non_out only
    return [
        (a.name, a.type) for a in args if is_tensor_like(a.type) and a.name not in info.non_differentiable_arg_names
    ]


def differentiable_outputs(f: NativeFunction, info: DifferentiabilityInfo) -> tuple[list[str], str | None]:
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
        if is_tensor_like(r.type) and n not in info.non_differentiable_arg_names
    ]
    if any(uses_ident(d.formula, "grad") for d in info.derivatives):
        return candidates[:1], None
    return candidates, None


def label(f: NativeFunction, exact: bool) -> str:
    if exact:
        return f"{f.func.name}"
    if "view_copy" in f.tags:
        return f"its view_copy variant {f.func.name}"
    kind = {SchemaKind.inplace: "in-place", SchemaKind.out: "out="}.get(f.func.kind(), "generated functional")
    return f"its {kind} overload {f.func.name}"


def has_dispatch_sections(index: NativeIndex) -> bool:
    """False for a native_functions.yaml excerpt without any dispatch section (every function then reads as
    CompositeImplicitAutograd): codegen-not-abstract is only judged against a file that has them."""
    hit = _abstract.get(id(index))
    if hit is None or hit[0] is not index:
        hit = (index, any(f.is_abstract for f in index))
        _abstract.clear()
        _abstract[id(index)] = hit
    return hit[1]


_abstract: dict[int, tuple[NativeIndex, bool]] = {}


class SectionContext:
    """One section of an entry (its info and keys) and the spans its codegen-stage diagnostics go on."""

    def __init__(self, result: EntryResult, section: SectionResult, index: NativeIndex) -> None:
        info = section.info
        assert info is not None
        entry = result.entry
        self.result = result
        self.section = section
        self.info: DifferentiabilityInfo = info
        self.index = index
        self.entry = entry
        self.name_span: Span = entry.name.span if entry.name is not None else entry.span
        self.od_span: Span = (
            entry.output_differentiability.span if entry.output_differentiability is not None else self.name_span
        )
        self.backward: list[KeyResult] = [k for k in section.keys if k.kind == "backward"]
        self.forward: list[KeyResult] = [k for k in section.keys if k.kind == "forward" and k.forward is not None]
        self.backward_span: Span = self.backward[0].item.key.span if self.backward else self.name_span
        self.forward_span: Span = self.forward[0].item.key.span if self.forward else self.name_span


class OverloadContext:
    """One overload the section's infos apply to (`exact`: the entry's own function), and what gen_variable_type
    derives for it; computed on first use, as the checks that read it run."""

    def __init__(self, at: SectionContext, f: NativeFunction, exact: bool) -> None:
        self.at = at
        self.info = at.info
        self.f = f
        self.exact = exact
        self.label = label(f, exact)
        self.inplace = f.func.kind() == SchemaKind.inplace

    @property
    def use_derived(self) -> bool:
        """gen_variable_type looks at this overload (otherwise the checks past match_differentiability_info
        do not run): gen_inplace_or_view_type.use_derived, not a function whose kernel is written by hand."""
        return (self.info.has_derivatives or self.f.is_abstract) and cpp.name(self.f.func) not in MANUAL_AUTOGRAD

    @cached_property
    def _outputs(self) -> tuple[list[str], str | None]:
        return differentiable_outputs(self.f, self.info)

    @property
    def outputs(self) -> list[str]:
        return self._outputs[0]

    @property
    def output_problem(self) -> str | None:
        """The RuntimeError gen_differentiable_outputs raises: "length", "inplace" or None."""
        return self._outputs[1]

    @cached_property
    def is_inplace_foreach(self) -> bool:
        return self.f.func.name.name.base.startswith("_foreach_") and self.inplace

    @cached_property
    def inputs(self) -> list[tuple[str, object]]:
        # an in-place foreach function's inputs are read as its reference's (inplace_foreacharg2refarg)
        return differentiable_inputs(self.info.func if self.is_inplace_foreach else self.f, self.info)

    @cached_property
    def undifferentiable(self) -> bool:
        f = self.f
        return f.func.name.name.base in DONT_REQUIRE_DERIVATIVE or cpp.name(f.func) in DONT_REQUIRE_DERIVATIVE

    @cached_property
    def requires_derivative(self) -> bool:
        return not self.undifferentiable and bool(self.inputs) and (bool(self.outputs) or self.is_inplace_foreach)

    @property
    def checks_forward(self) -> bool:
        """emit_body goes on to the forward formulas of this overload."""
        return self.requires_derivative and bool(self.at.forward) and not self.is_inplace_foreach
