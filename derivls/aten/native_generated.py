"""torchgen.native_function_generation and view grouping: the functions torchgen generates (out= and
functional variants, `autogen:`) and the NativeFunctionsViewGroups."""

from __future__ import annotations

import string
from collections import defaultdict
from collections.abc import Sequence

from derivls.aten import cpp
from derivls.aten.native_model import (
    COMPOSITE_EXPLICIT,
    NativeFunction,
    NativeFunctionsViewGroup,
    NativeIndexError,
    Variant,
    ViewSchemaKind,
    shared,
)
from derivls.aten.schema import (
    Annotation,
    Argument,
    BaseOperatorName,
    BaseTy,
    BaseType,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaKind,
)

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any


# --------------------------------------------------------------------------------------
# torchgen.native_function_generation
# --------------------------------------------------------------------------------------

# See torchgen Note: [Out ops with functional variants that don't get grouped properly]
OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY = [
    "adaptive_avg_pool3d_backward.grad_input",
    "_slow_conv2d_backward.grad_input",
]
# Note: [Mutable ops that cannot get an out variant]
MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = ["_cummax_helper", "_cummin_helper"]
# operators without tensor-like returns
FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = [
    "_assert_async",
    "_assert_async.msg",
    "_assert_tensor_metadata",
    "_cslt_sparse_mm_search",
    "_assert_scalar",
    "_dimI",
    "_dimV",
    "_has_same_storage_numel",
    "_linalg_check_errors",
    "_local_scalar_dense",
    "_nested_tensor_from_mask_left_aligned",
    "_nnz",
    "_use_cudnn_ctc_loss",
    "_use_cudnn_ctc_loss.Tensor",
    "_use_miopen_ctc_loss",
    "_use_miopen_ctc_loss.Tensor",
    "_validate_compressed_sparse_indices",
    "allclose",
    "dense_dim",
    "equal",
    "is_coalesced",
    "is_pinned",
    "is_same_size",
    "is_set_to",
    "q_per_channel_axis",
    "q_scale",
    "q_zero_point",
    "qscheme",
    "record_stream",
    "sparse_dim",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "_nested_tensor_storage_offsets",
    "_chunk_grad_outputs_efficient_attention",
    "_fused_sdp_choice",
    "_print",
    "_sink_tokens",
    "_nested_get_ragged_idx",
]
INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY = ["polygamma_"]


def pre_group_native_functions(
    native_functions: Sequence[NativeFunction],
) -> dict[FunctionSchema, dict[SchemaKind, NativeFunction]]:
    """Group the variants of one op (add.Tensor, add_.Tensor, add.out) by signature()."""
    pre: dict[FunctionSchema, dict[SchemaKind, NativeFunction]] = defaultdict(dict)
    for f in native_functions:
        d = pre[f.func.signature()]
        kind = f.func.kind()
        if kind in d:
            raise NativeIndexError(
                f"duplicate schema kind {kind.name} for {f.func} (same signature as "
                f"{d[kind].func}, line {d[kind].source_line})",
                path=f.path,
                line=f.source_line,
            )
        d[kind] = f
    return pre


def get_expected_out_variant_overload_name(overload_name: str | None) -> str:
    return "out" if not overload_name else f"{overload_name}_out"


def self_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    """inplace schema -> out= schema (self's annotation moves to a new `out` argument)."""
    assert func.arguments.self_arg is not None
    return FunctionSchema(
        name=func.name.remove_inplace().with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.remove_self_annotation().with_out_args(
            [
                Argument(
                    name="out",
                    type=func.arguments.self_arg.argument.type,
                    default=None,
                    annotation=func.arguments.self_arg.argument.annotation,
                )
            ]
        ),
        returns=func.returns,
    )


def functional_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    new_returns, new_out_args = generate_out_args_from_schema(func)
    return FunctionSchema(
        name=func.name.with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.signature().with_out_args(new_out_args),
        returns=tuple(new_returns),
    )


def generate_out_args_from_schema(func: FunctionSchema) -> tuple[list[Return], list[Argument]]:
    if any(r.annotation is not None and r.annotation.is_write for r in func.returns):
        raise ValueError("mutable schema kinds should not return mutable arguments")
    tensorlike_rets = [r for r in func.returns if r.type.is_tensor_like()]
    if len(tensorlike_rets) == 0:
        raise ValueError("expected at least one tensor-like return")
    used_annotations = [x for a in func.arguments.flat_all if a.annotation is not None for x in a.annotation.alias_set]
    valid_annotations = [x for x in string.ascii_lowercase if x not in used_annotations]
    all_rets_are_tensors = all(r.type == BaseType(BaseTy.Tensor) for r in func.returns)
    new_out_args: list[Argument] = []
    new_returns: list[Return] = []
    for i, r in enumerate(func.returns):
        if r.type.is_tensor_like():
            new_out = Argument(
                name="out" if len(func.returns) == 1 else f"out{i}",
                type=r.type,
                default=None,
                annotation=Annotation.parse(f"{valid_annotations[i]}!"),
            )
            new_out_args.append(new_out)
            if all_rets_are_tensors:
                # out= schemas return their out arguments only when all are plain Tensors
                new_returns.append(Return(name=None, type=new_out.type, annotation=new_out.annotation))
        else:
            new_returns.append(r)
    return new_returns, new_out_args


def mutable_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    new_returns, new_out_args = generate_out_args_from_schema(func)
    return FunctionSchema(
        name=func.name.remove_inplace().with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.with_out_args(new_out_args),
        returns=tuple(new_returns),
    )


def generate_function(f: NativeFunction, k: SchemaKind) -> NativeFunction:
    """A functional or out= variant of f, as torchgen generates it."""
    if k == SchemaKind.functional:
        # mutable arguments become returns; `_functional` base name if f is "mutable"
        func = f.func.signature(keep_return_names=True).with_name(
            OperatorName(
                name=BaseOperatorName(
                    base=f.func.name.name.base,
                    inplace=False,
                    dunder_method=f.func.name.name.dunder_method,
                    functional_overload=f.func.kind() == SchemaKind.mutable,
                ),
                overload_name=f.func.name.overload_name,
            )
        )
    elif k == SchemaKind.out:
        fk = f.func.kind()
        if fk == SchemaKind.inplace:
            func = self_to_out_signature(f.func)
        elif fk == SchemaKind.mutable:
            func = mutable_to_out_signature(f.func)
        elif fk == SchemaKind.functional:
            func = functional_to_out_signature(f.func)
        else:
            raise ValueError("out= functions are only generated from inplace, mutable or functional ones")
    else:
        raise ValueError("only functional or out= functions are generated")

    kernel_name = func.name.unambiguous_name() if func.kind() == SchemaKind.out else cpp.name(func)
    if f.func.has_symint():
        kernel_name += "_symint"
    tags = {"generated"} | set(f.tags & {"nondeterministic_seeded", "view_copy", "pt2_compliant_tag"})
    if func.is_out_fn():
        tags.add("out")
    if func.name.name.inplace:
        tags.add("inplace")
    return NativeFunction(
        namespace=f.namespace,
        func=func,
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        device_guard=False,
        device_check="NoCheck",
        python_module=None,
        category_override=None,
        variants=shared(frozenset({Variant.function})),  # generated functions are not methods
        manual_kernel_registration=False,
        manual_cpp_binding=False,
        autogen=(),
        structured=False,
        structured_delegate=None,
        structured_inherits=None,
        cpp_no_default_args=shared(frozenset()),
        is_abstract=f.is_abstract,
        has_composite_implicit_autograd_kernel=False,
        has_composite_implicit_autograd_nested_tensor_kernel=False,
        has_composite_explicit_autograd_kernel=True,
        has_composite_explicit_autograd_non_functional_kernel=False,
        tags=shared(frozenset(tags)),
        dispatch={COMPOSITE_EXPLICIT: kernel_name},
        line=None,
        path=f.path,
        generated_from=f,
    )


def add_generated_native_functions(rs: list[NativeFunction]) -> None:
    """torchgen.native_function_generation.add_generated_native_functions (appends to rs)."""
    for d in pre_group_native_functions(rs).values():
        if len(d) == 1 and SchemaKind.functional in d:
            # The usual group, a lone functional op: torchgen generates nothing for it unless
            # `autogen:` asks, and (below) only complains if it has no tensor-like return.
            f = d[SchemaKind.functional]
            if not f.autogen and any(r.type.is_tensor_like() for r in f.func.returns):
                continue
        has_functional = SchemaKind.functional in d
        has_inplace = SchemaKind.inplace in d
        has_mutable = SchemaKind.mutable in d
        has_out = SchemaKind.out in d
        if not (has_mutable or has_inplace or has_out or has_functional):
            continue
        # (one pass over the variants for torchgen's four any/all tests)
        is_core = has_view_ops = False
        are_manual = are_composite_implicit = True
        for variant in d.values():
            is_core = is_core or "core" in variant.tags
            are_manual = are_manual and variant.manual_cpp_binding
            # set_ is an inplace_view but treated as a normal inplace op here
            has_view_ops = has_view_ops or (variant.is_view_op and str(variant.func.name.name) != "set_")
            are_composite_implicit = are_composite_implicit and variant.has_composite_implicit_autograd_kernel
        if are_manual or has_view_ops or (are_composite_implicit and not is_core):
            continue
        if has_out and len(d) == 1:
            out_f = d[SchemaKind.out]
            if str(out_f.func.name) not in OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
                raise NativeIndexError(
                    f"found an out= operator that we could not find any other variants of: {out_f.func}",
                    path=out_f.path,
                    line=out_f.source_line,
                )
            continue
        if has_inplace and str(d[SchemaKind.inplace].func.name) in INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
            continue

        base_fn = (
            d[SchemaKind.mutable]
            if has_mutable
            else d[SchemaKind.inplace]
            if has_inplace
            else d[SchemaKind.out]
            if has_out
            else d[SchemaKind.functional]
        )
        base_fn_valid = base_fn.func.kind() == SchemaKind.inplace or any(
            r.type.is_tensor_like() for r in base_fn.func.returns
        )
        # torchgen: only generate out= when an `autogen:` entry asks for it
        needs_out = any("out" in str(op_name) for op_name in base_fn.autogen)
        gets_out_variant = not has_out and base_fn_valid and needs_out
        if not has_out and not base_fn_valid:
            if (
                str(base_fn.func.name) not in MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
                and str(base_fn.func.name) not in FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
            ):
                raise NativeIndexError(
                    f"found an operator that we could not generate an out= variant for: {base_fn.func}. "
                    "Operators without tensor-like returns can't get a proper out= variant; "
                    "torchgen keeps a list of the known ones (FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT)",
                    path=base_fn.path,
                    line=base_fn.source_line,
                )
        try:
            if gets_out_variant:
                fn = generate_function(base_fn, SchemaKind.out)
                d[SchemaKind.out] = fn
                rs.append(fn)
            if not has_functional and (has_out or gets_out_variant):
                fn = generate_function(base_fn, SchemaKind.functional)
                d[SchemaKind.functional] = fn
                rs.append(fn)
        except ValueError as ex:
            if isinstance(ex, NativeIndexError):
                raise
            raise NativeIndexError(
                f"cannot generate variants of {base_fn.func}: {ex}", path=base_fn.path, line=base_fn.source_line
            ) from None


def get_grouped_by_view_native_functions(
    native_functions: Sequence[NativeFunction],
) -> list[NativeFunction | NativeFunctionsViewGroup]:
    """torchgen.gen.get_grouped_by_view_native_functions."""
    grouped: dict[FunctionSchema, dict[Any, NativeFunction]] = defaultdict(dict)
    for f in native_functions:
        schema = f.func.view_signature()
        view_kind = f.view_schema_kind
        d = grouped[schema]
        key: Any = f.func.kind() if view_kind == ViewSchemaKind.non_aliasing else view_kind
        if key in d:
            raise NativeIndexError(
                f"{f.func} and {d[key].func} (line {d[key].source_line}) have the same view "
                f"signature and kind ({key.name})",
                path=f.path,
                line=f.source_line,
            )
        d[key] = f

    out: list[NativeFunction | NativeFunctionsViewGroup] = []
    for d in grouped.values():
        if ViewSchemaKind.aliasing in d:
            d = dict(d)
            g = NativeFunctionsViewGroup(
                view=d.pop(ViewSchemaKind.aliasing),
                view_copy=d.pop(SchemaKind.functional, None),
                view_inplace=d.pop(ViewSchemaKind.aliasing_inplace, None),
            )
            g.check()
            out.append(g)
        out.extend(d.values())
    return out
