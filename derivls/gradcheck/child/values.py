"""A call's arguments as positional values (one per schema argument), the real op called on them, the tensors a
check can vary (leaf_slots), and the tests of trees of tensors every part uses (strided, finite, size, equal)."""


def written_cloned(torch, overload, values):
    """values with every argument the op writes (an in-place op's self) cloned: the op writes the clone."""
    out = list(values)
    for i, a in enumerate(overload._schema.arguments):
        if i < len(out) and a.alias_info is not None and a.alias_info.is_write and isinstance(out[i], torch.Tensor):
            out[i] = out[i].clone()
    return out


def same(torch, a, b):
    """Two results of the op on the same input are equal (nan where nan)."""
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    with torch.no_grad():
        return len(a) == len(b) and all(
            x.shape == y.shape and bool(torch.isclose(x, y, rtol=0, atol=0, equal_nan=True).all()) for x, y in zip(a, b)
        )


def all_strided(torch, tree):
    if isinstance(tree, torch.Tensor):
        return tree.layout == torch.strided and not tree.is_nested
    if isinstance(tree, (list, tuple)):
        return all(all_strided(torch, x) for x in tree)
    if isinstance(tree, dict):
        return all(all_strided(torch, x) for x in tree.values())
    return True


def all_finite(torch, tree):
    if isinstance(tree, torch.Tensor):
        if tree.layout != torch.strided:  # (sparse, nested: isfinite is not defined for every layout)
            return False
        return not (tree.is_floating_point() or tree.is_complex()) or bool(torch.isfinite(tree).all())
    if isinstance(tree, (list, tuple)):
        return all(all_finite(torch, x) for x in tree)
    if isinstance(tree, dict):
        return all(all_finite(torch, x) for x in tree.values())
    return True


def largest_tensor(torch, tree):
    if isinstance(tree, torch.Tensor):
        return tree.numel()
    if isinstance(tree, (list, tuple)):
        return max((largest_tensor(torch, x) for x in tree), default=0)
    if isinstance(tree, dict):
        return max((largest_tensor(torch, x) for x in tree.values()), default=0)
    return 0


def describe(torch, args, kwargs):
    def one(x):
        if isinstance(x, torch.Tensor) and x.is_nested:  # (no single shape: its components')
            sizes = ", ".join(str(list(c.shape)) for c in x.unbind())
            return f"NestedTensor({sizes}) {str(x.dtype).replace('torch.', '')}"
        if isinstance(x, torch.Tensor):
            return f"Tensor{list(x.shape)} {str(x.dtype).replace('torch.', '')}"
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(one(y) for y in x) + "]"
        return repr(x)

    text = ", ".join(one(a) for a in args)
    if kwargs:
        text += ", " + ", ".join(f"{k}={one(v)}" for k, v in kwargs.items())
    return text


def without_kernel(torch, overload, keys):
    """The overload's qualified name (`aten::sum`, `aten::select.int`) when the dispatcher has a kernel for none of
    `keys`; None when it has one, or cannot say."""
    name = str(overload._schema.name)
    if overload._overloadname != "default":
        name += "." + overload._overloadname
    try:
        if any(torch._C._dispatch_has_kernel_for_dispatch_key(name, key) for key in keys):
            return None
    except Exception:
        return None
    return name


def values_dtype(torch, values):
    """The dtype a sample is checked in: its complex tensors', else its floating tensors' (float32 for a kernel that
    refuses float64), else float64."""
    tensors = [t for v in values for t in (v if isinstance(v, (list, tuple)) else (v,)) if isinstance(t, torch.Tensor)]
    return next(
        (t.dtype for t in tensors if t.is_complex()),
        next((t.dtype for t in tensors if t.is_floating_point()), torch.float64),
    )


def positional(overload, args, kwargs):
    out = []
    for i, a in enumerate(overload._schema.arguments):
        if i < len(args):
            out.append(args[i])
        elif a.name in kwargs:
            out.append(kwargs[a.name])
        elif a.has_default_value():
            out.append(a.default_value)
        else:
            out.append(None)
    return out


def call_overload(torch, overload, values):
    """The real op on positional values (one per schema argument): keyword-only ones by name, a random op with
    the same seed at every call."""
    values = written_cloned(torch, overload, values)
    arguments = overload._schema.arguments
    args = [v for v, a in zip(values, arguments) if not a.kwarg_only]
    kwargs = {a.name: v for v, a in zip(values, arguments) if a.kwarg_only}
    with torch.random.fork_rng(devices=[]):
        # (the CPU generator only: torch.manual_seed also queues a lazy CUDA seeding, a stack trace per call)
        torch.random.default_generator.manual_seed(0)
        return overload(*args, **kwargs)


def flat_output(torch, overload, values, outputs=None):
    """The op's floating outputs as one complex vector, or None when the op raises; `outputs`: only those (indices
    in the op's returns: the ones with a formula, not _ctc_loss's log_alpha, -inf where no path reaches)."""
    try:
        with torch.no_grad():
            out = call_overload(torch, overload, values)
    except Exception:
        return None
    out = out if isinstance(out, (tuple, list)) else (out,)
    if outputs is not None and len(out) > 1:
        out = [o for i, o in enumerate(out) if i in outputs]
    outs = [o for o in out if isinstance(o, torch.Tensor)]
    # (a sparse or mkldnn output, of to_sparse or to_mkldnn: its dense values; a nested one: none)
    outs = [o.to_dense() if o.layout != torch.strided and not o.is_nested else o for o in outs]
    if not all_strided(torch, outs):
        return None
    parts = [o.detach().reshape(-1).to(torch.complex128) for o in outs if o.is_floating_point() or o.is_complex()]
    return torch.cat(parts) if parts else None


def leaf_slots(torch, unit, values):
    """The differentiable tensors a check can vary: one per tensor (list element) with a formula."""
    names = [a for a in unit["args"]]
    bit = 0
    slots = []
    for name, is_list in unit["wrt"]:
        if name not in names:
            continue
        value = values[names.index(name)]
        items = list(value) if is_list and isinstance(value, (list, tuple)) else [value]
        for j, item in enumerate(items):
            if isinstance(item, torch.Tensor) and (item.is_floating_point() or item.is_complex()) and item.numel() > 0:
                slots.append(
                    {
                        "name": name,
                        "arg": names.index(name),
                        "item": j if is_list else None,
                        "in_list": is_list,
                        "bw_bit": bit,
                        "fw_index": unit["fw_inputs"].index(name) if name in unit.get("fw_inputs", []) else None,
                    }
                )
            bit += 1
    return slots
