"""Which functions torchgen gives an entry's infos to (the overloads every codegen-stage check runs on).

match_differentiability_info pairs an entry with its own function and, when that is functional, every
in-place and out= function with the same signature (strip_default=True) that is not a generated out=
variant; when it is not, the generated (autogen) functional variant of that signature; load_derivatives gives
a view op's `{view}_copy` function its formulas; gen_foreach_derivativeinfo gives in-place `_foreach_` functions their reference's info.
"""

from __future__ import annotations

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.schema import SchemaKind

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
    group = _overload_group(canonical, index) + generated_variants_of(canonical, index)
    group += view_copy_of(canonical, index) + inplace_foreach_of(canonical, index)
    if len(_group_cache) > 20_000:
        _group_cache.clear()
    _group_cache[id(canonical)] = (canonical, index, group)
    return group


def remembered_group(canonical: NativeFunction, index: NativeIndex) -> list[NativeFunction] | None:
    """What overload_group computed for `canonical` against `index`, if it did (nothing computed here)."""
    hit = _group_cache.get(id(canonical))
    return hit[2] if hit is not None and hit[0] is canonical and hit[1] is index else None


def remember_group(canonical: NativeFunction, index: NativeIndex, group: list[NativeFunction]) -> None:
    """Seed overload_group's memo: `group` is its answer for `canonical` against `index` (the entry cache
    keeps it with an entry's record: a group depends on the function and the index only, both in the key)."""
    if len(_group_cache) > 20_000:
        _group_cache.clear()
    _group_cache[id(canonical)] = (canonical, index, group)


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


def generated_variants_of(canonical: NativeFunction, index: NativeIndex) -> list[NativeFunction]:
    """The generated (autogen) functions that take a mutable entry's infos: match_differentiability_info's third
    case gives a generated function with no info of its own the info of the non-functional entry of its signature
    (`resize_as` takes `resize_as_`'s); a generated out= function takes none."""
    if canonical.func.kind() == SchemaKind.functional:
        return []
    stripped = canonical.func.signature(strip_default=True)
    return [
        f
        for f in _by_base_name(index).get(canonical.func.name.name.base, [])
        if f is not canonical
        and "generated" in f.tags
        and f.func.kind() != SchemaKind.out
        and f.func.signature(strip_default=True) == stripped
    ]


_view_copies: dict[int, tuple[NativeIndex, dict[object, NativeFunction]]] = {}


def view_copy_of(canonical: NativeFunction, index: NativeIndex) -> list[NativeFunction]:
    """The `{view}_copy` function load_derivatives gives a view op's formulas (add_view_copy_derivatives:
    `_fw_primal_copy` takes `_fw_primal`'s), unless it has an entry of its own (see applied_overloads)."""
    hit = _view_copies.get(id(index))
    if hit is None or hit[0] is not index:
        table: dict[object, NativeFunction] = {
            g.view.func.name: g.view_copy for g in index.view_groups if g.view_copy is not None
        }
        hit = (index, table)
        _view_copies.clear()
        _view_copies[id(index)] = hit
    copy = hit[1].get(canonical.func.name)
    return [copy] if copy is not None else []


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
