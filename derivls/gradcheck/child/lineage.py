"""Forward intermediates: a *_backward function's arguments that its forward made (log_sigmoid's buffer, batch
norm's save_mean / save_invstd, nll_loss's total_weight), computed again from the varied inputs at every call."""

from .values import call_overload, positional, same


def has_fixed_float(torch, unit, values):
    """A floating-point tensor argument the entry has no formula for (held fixed while an input varies)."""
    wrt = {name for name, _ in unit["wrt"]}
    for name, value in zip(unit["args"], values):
        if name not in wrt and isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
            return True
    return False


def tensor_key(torch, value):
    """What tells one tensor from another at the dispatcher (its memory and layout); None: not a non-empty tensor."""
    if not isinstance(value, torch.Tensor) or value.numel() == 0 or value.layout != torch.strided:
        return None
    try:
        return (value.data_ptr(), tuple(value.shape), tuple(value.stride()), value.dtype)
    except Exception:  # (a tensor without storage)
        return None


def lineage_call(torch, record, func, args, kwargs, wanted):
    """Run one dispatched call and note it in record.lineage: its positional values (cloned before a write), the
    keys of its tensor arguments and outputs, and for a wanted call its index in record.calls."""
    values = positional(func, args, kwargs)
    keys = [tensor_key(torch, v) for v in values]
    snapshot = [v.detach().clone() if isinstance(v, torch.Tensor) else v for v in values]
    out = func(*args, **kwargs)
    outs = out if isinstance(out, (tuple, list)) else (out,)
    record.lineage.append(
        {
            "func": func,
            "values": snapshot,
            "keys": keys,
            "outs": [tensor_key(torch, o) for o in outs],
            "call": len(record.calls) - 1 if wanted else None,
        }
    )
    return out


def backward_lineage(torch, record, index, func, args, kwargs, sample, forward_calls):
    """For a call a backward made (index >= forward_calls): {"lineage": {argument index: how to have it}} for each of
    its floating tensor arguments a recorded call made from others of its arguments ("intermediate": that call, run
    again on the varied inputs) or that is one of the sample's own inputs ("independent": held fixed); an argument
    neither is left out (check_unit then skips the sample as before). {} when there is nothing to say."""
    if index < forward_calls or not record.lineage:
        return {}
    entry = next((e for e in record.lineage if e["call"] == index), None)
    if entry is None:
        return {}
    keys = entry["keys"]
    at = {k: i for i, k in enumerate(keys) if k is not None}
    leaves = set()
    for value in [sample.input, *sample.args, *sample.kwargs.values()]:
        for t in value if isinstance(value, (tuple, list)) else (value,):
            key = tensor_key(torch, t)
            if key is not None:
                leaves.add(key)
    values = positional(func, args, kwargs)
    lineage = {}
    for i, (key, value) in enumerate(zip(keys, values)):
        if key is None or not (value.is_floating_point() or value.is_complex()):
            continue
        made = producer(torch, record.lineage[: record.lineage.index(entry)], key, at, leaves, i)
        if made is not None:
            lineage[i] = made
        elif key in leaves:
            lineage[i] = {"kind": "independent"}
    return {"lineage": lineage}


def producer(torch, calls, key, at, leaves, own):
    """The last call before the backward's that returned the tensor `key`, when it can be run again on the backward
    call's arguments: deterministic, taking at least one other argument of the backward call, its other floating
    tensors the sample's own inputs, and giving the same value again. None: no such call."""
    for entry in reversed(calls):
        if key not in entry["outs"]:
            continue
        func = entry["func"]
        if torch.Tag.nondeterministic_seeded in getattr(func, "tags", ()):
            return None
        mapping = {p: at[k] for p, k in enumerate(entry["keys"]) if k is not None and k in at and at[k] != own}
        if not mapping:
            return None  # (made from none of the backward call's arguments: varying them leaves it as it is)
        for p, (k, v) in enumerate(zip(entry["keys"], entry["values"])):
            floating = isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())
            if floating and p not in mapping and k not in leaves:
                return None  # made from a tensor neither an argument nor an input: what it depends on is unknown
        spec = {
            "kind": "intermediate",
            "func": func,
            "values": entry["values"],
            "map": mapping,
            "out": entry["outs"].index(key),
        }
        return spec
    return None


def recomputed(torch, values, lineage):
    """values with every forward intermediate made again from them (the producer run on the current arguments)."""
    out = list(values)
    for i, spec in lineage.items():
        if spec["kind"] != "intermediate":
            continue
        made = list(spec["values"])
        for p, b in spec["map"].items():
            made[p] = values[b]
        result = call_overload(torch, spec["func"], made)
        result = result if isinstance(result, (tuple, list)) else (result,)
        out[i] = result[spec["out"]]
    return out


def backward_slots(torch, unit, values, slots, sample):
    """A sample a backward made: (the slots to vary, whether an argument would be stale). With its lineage known,
    its forward intermediates are not varied (they follow the inputs) and every fixed floating argument is an
    intermediate or one of the sample's inputs; without it, any floating argument without a formula is stale."""
    lineage = sample.get("lineage")
    if lineage is None:
        return slots, has_fixed_float(torch, unit, values)
    made = {i for i, spec in lineage.items() if spec["kind"] == "intermediate"}
    if made:
        try:
            again = recomputed(torch, values, lineage)
        except Exception:
            return slots, True
        if not all(same(torch, again[i], values[i]) for i in made):
            return slots, True  # (it is not made again as it was: not a function of the arguments alone)
    wrt = {name for name, _ in unit["wrt"]}
    for i, (name, value) in enumerate(zip(unit["args"], values)):
        floating = isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex())
        if floating and name not in wrt and i not in lineage:
            return slots, True
    return [s for s in slots if s["arg"] not in made], False
