"""codegen-view-function: a view function given a differentiable output its ADInplaceOrView kernel cannot replay
(gen_inplace_or_view_type.py emit_view_body / emit_view_func): an argument of a type the view-replay lambda
does not capture, or several differentiable outputs."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.aten.schema import SchemaKind
from derivls.aten.schema_types import BaseTy, BaseType, ListType, OptionalType
from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_VIEW_FUNCTION
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext

# torchgen/packaged/autograd/gen_inplace_or_view_type.py RETURNS_VIEWS_OF_INPUT (2.13; VIEW_FUNCTIONS' keys among
# them), copied: derivls never imports torchgen at run time. get_view_info is not None for these base names.
RETURNS_VIEWS_OF_INPUT = frozenset(
    "_conj _indices _neg_view _nested_get_values _nested_view_from_buffer _nested_view_from_jagged _reshape_alias "
    "_test_autograd_multiple_dispatch_view _values adjoint alias as_strided ccol_indices chunk col_indices "
    "contiguous crow_indices detach diagonal expand expand_as flatten imag indices mH mT matrix_H movedim narrow "
    "numpy_T permute real reshape reshape_as row_indices select slice slice_inverse "
    "sparse_coo_tensor_with_dims_and_tensors split split_with_sizes squeeze swapaxes swapdims t tensor_split "
    "transpose unbind unfold unsqueeze values view view_as view_as_complex view_as_real".split()
)
_INTS = (BaseTy.int, BaseTy.SymInt)


def _replayable(a: object) -> bool:
    """emit_view_func's known_view_arg_simple_types, by schema type: int64_t, SymInt, their optionals, bool,
    IntArrayRef, SymIntArrayRef, const Tensor&, const std::optional<Tensor>&."""
    t = a.type  # type: ignore[attr-defined]
    if isinstance(t, BaseType):
        if t.name == BaseTy.Tensor:
            return not getattr(a.annotation, "is_write", False)  # type: ignore[attr-defined]  # (a Tensor&)
        return t.name in (*_INTS, BaseTy.bool)
    if isinstance(t, OptionalType) and isinstance(t.elem, BaseType):
        return t.elem.name in (*_INTS, BaseTy.Tensor)
    return isinstance(t, ListType) and isinstance(t.elem, BaseType) and t.elem.name in _INTS


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    f = o.f
    if f.func.name.name.base not in RETURNS_VIEWS_OF_INPUT or f.func.kind() in (SchemaKind.inplace, SchemaKind.out):
        return
    outputs = o.outputs
    if len(outputs) > 1:
        yield error(
            o.at.backward_span,
            CODEGEN_VIEW_FUNCTION,
            f"{o.label} is a view function, and these formulas give it {len(outputs)} differentiable outputs "
            f"({', '.join(outputs)}): gen_inplace_or_view_type supports one. Mark the others non-differentiable.",
        )
        return
    if len(outputs) != 1:
        return
    for a in f.func.schema_order_arguments():
        if a.name != "self" and not _replayable(a):
            yield error(
                o.at.backward_span,
                CODEGEN_VIEW_FUNCTION,
                f"{o.label} is a view function, and these formulas make its output differentiable: "
                f"gen_inplace_or_view_type then writes a lambda that replays the view, which cannot capture "
                f"'{a.name}' ({a.type}) and raises a TypeError. Mark the output non-differentiable "
                "(`output_differentiability: [False]`).",
            )
            return
