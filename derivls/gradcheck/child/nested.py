"""Samples for a formula of AutogradNestedTensor (sum.dim_IntList's `_nested_sum_backward`, select's, unbind's...):
the Default unit's samples with their differentiable tensor made a strided nested tensor of two components, and the
check's view of it (gradcheck varies dense tensors: the components' values as one flat tensor)."""

from .values import call_overload, positional, without_kernel

NESTED_SAMPLES = 4  # the nested samples a unit keeps
# what a dim argument becomes, tried in order: moved past the batch dim (the components' dim), as given (the batch
# dim: unbind's 0), the last (the only dim some nested kernels take: chunk's)
DIMS = ("moved", "as given", "the last")
NESTED_KEYS = ("NestedTensorCPU", "CompositeImplicitAutograd", "CompositeImplicitAutogradNestedTensor")


def no_nested_kernel(torch, overload):
    """'no CPU kernel: ...' when the op runs on no nested CPU tensor (aten::sum has kernels for dense and jagged ones
    only): then its AutogradNestedTensor formula is not reached on CPU, a fact about the op; None otherwise."""
    name = without_kernel(torch, overload, NESTED_KEYS)
    return (
        None
        if name is None
        else f"no CPU kernel: {name} has no kernel for nested CPU tensors (the layout its formula is for)"
    )


def to_flat(torch, value):
    """A nested tensor's components' values as one flat dense tensor (in order); a sparse or mkldnn one (an output of
    to_sparse, to_mkldnn) as its dense values; any other value as it is."""
    if isinstance(value, torch.Tensor) and value.is_nested:
        return torch.cat([c.reshape(-1) for c in value.unbind()])
    if isinstance(value, torch.Tensor) and value.layout != torch.strided:
        return value.to_dense()
    return value


def structure(torch, value):
    """The components' shapes of a nested tensor, None for any other value."""
    if isinstance(value, torch.Tensor) and value.is_nested:
        return [tuple(c.shape) for c in value.unbind()]
    return None


def from_flat(torch, flat, shapes):
    """The nested tensor of components `shapes` whose values are `flat`, in order (to_flat's inverse); flat as it is
    when shapes is None or flat is None (an undefined grad)."""
    if shapes is None or flat is None:
        return flat
    sizes = [int(torch.Size(s).numel()) for s in shapes]
    pieces = flat.reshape(-1).split(sizes)
    return nested_tensor(torch, [p.reshape(s) for p, s in zip(pieces, shapes)])


def nested_tensor(torch, components):
    """A strided nested tensor of copies of `components` (the layout AutogradNestedTensor formulas of the strided
    kernels are for; torch's warning that the layout is a prototype is not the user's business)."""
    import warnings

    with warnings.catch_warnings():
        warnings.simplefilter("ignore", UserWarning)
        return torch.nested.nested_tensor([c.detach() for c in components], layout=torch.strided)


def nested_samples(torch, overload, unit, found):
    """The first NESTED_SAMPLES of `found` (float64) that the op takes with their first differentiable tensor made
    nested (nested_forms), as samples of their own."""
    out = []
    generator = torch.Generator().manual_seed(0)
    for sample in found:
        if sample["dtype"] != torch.float64:
            continue
        values = positional(overload, sample["args"], sample["kwargs"])
        for what, made in nested_forms(torch, overload, unit, values, generator):
            if takes(torch, overload, made):
                out.append(
                    {
                        "dtype": torch.float64,
                        "args": tuple(made),
                        "kwargs": {},
                        "origin": f"{sample['origin']}, as a nested tensor ({what})",
                        "skip": dict(sample.get("skip") or {}),
                        "transforms": {},
                        "nested": True,
                    }
                )
                break
        if len(out) >= NESTED_SAMPLES:
            break
    return out


def nested_forms(torch, overload, unit, values, generator):
    """(what, values) with the first differentiable tensor argument made a nested tensor: of the sample's tensor
    and one a row shorter (ragged), then of two tensors of its shape (regular); a dim argument >= 0 moved past the
    nested tensor's batch dim, then as given, then the last (DIMS); a size argument given the batch dim first
    (regular only)."""
    names = [a.name for a in overload._schema.arguments]
    wrt = [name for name, is_list in unit["wrt"] if not is_list and name in names]
    if not wrt:
        return
    arg = names.index(wrt[0])
    base = values[arg]
    if not isinstance(base, torch.Tensor) or base.is_nested or base.dim() == 0 or not base.is_floating_point():
        return
    other = torch.rand(base.shape, dtype=base.dtype, generator=generator) * 0.7 + 0.2
    forms = []
    if base.shape[0] > 1:
        forms.append(("ragged", [base, other[:-1]]))
    forms.append(("regular", [base, other]))
    for (what, components), dims in [(form, dims) for form in forms for dims in DIMS]:
        made = list(values)
        made[arg] = nested_tensor(torch, components)
        for i, a in enumerate(overload._schema.arguments):
            if i == arg or i >= len(made):
                continue
            if dims != "as given" and a.name in ("dim", "dims", "dim0", "dim1"):
                made[i] = _moved_dim(made[i]) if dims == "moved" else _last_dim(made[i])
            elif a.name in ("size", "shape") and isinstance(made[i], (list, tuple)):
                if what != "regular":
                    made = None
                    break
                made[i] = [len(components), *made[i]]
        if made is not None:
            yield (what if dims == "moved" else f"{what}, dims {dims}"), made


def _last_dim(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return -1
    if isinstance(value, (list, tuple)) and len(value) == 1:
        return [-1]
    return value


def _moved_dim(value):
    if isinstance(value, int) and not isinstance(value, bool):
        return value + 1 if value >= 0 else value
    if isinstance(value, (list, tuple)):
        return [v + 1 if isinstance(v, int) and v >= 0 else v for v in value]
    return value


def takes(torch, overload, values):
    """The op runs on the nested values and gives finite outputs (a nested kernel refuses much that a dense one
    takes: a reduction over the batch dim, keepdim=False)."""
    try:
        with torch.no_grad():
            out = call_overload(torch, overload, values)
    except Exception:
        return False
    outs = out if isinstance(out, (list, tuple)) else [out]
    try:
        flats = [to_flat(torch, o) for o in outs if isinstance(o, torch.Tensor)]
        return bool(flats) and all(bool(torch.isfinite(f).all()) for f in flats if f.is_floating_point())
    except Exception:
        return False
