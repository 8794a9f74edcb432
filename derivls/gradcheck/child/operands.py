"""Operands OpInfo's samples do not give, found by the releases checking each other (issue 52): a floating tensor
argument given as integers (ldexp's `other`: torch 2.13 computed `pow(2, other)` in integers, so 2**-1 was 0), and a
NaN that the op ignores (fmax's: torch 2.14 gave the gradient to the NaN input too)."""

from .values import all_strided, call_overload, flat_output, leaf_slots, positional
from .variants import VARIANT_BASES, VARIANT_NUMEL, unchecked_arguments, variant


def operand_variants(torch, overload, unit, found):
    """From the first float64 samples (VARIANT_BASES) of a public op: each differentiable input in turn as an int64
    tensor (rounded; every other element negative), where another input is left to vary and the op promotes it
    (its output stays floating and finite); and a NaN in each differentiable input, where the op's output stays
    finite (the op ignores NaN: fmax, nansum). Never for an in-place unit, an internal op or a backward function."""
    if unit.get("inplace") or unchecked_arguments(overload):
        return []
    made = []
    bases = 0
    for sample in found:
        if bases >= VARIANT_BASES:
            break
        if sample["dtype"] != torch.float64:
            continue
        if sample.get("from_backward") or sample.get("transforms") or sample.get("variant") or sample.get("reference"):
            continue
        values = positional(overload, sample["args"], sample["kwargs"])
        slots = [s for s in leaf_slots(torch, unit, values) if s["item"] is None]
        if not slots or not all_strided(torch, values) or any(values[s["arg"]].numel() > VARIANT_NUMEL for s in slots):
            continue
        base = flat_output(torch, overload, values)
        if base is None or not bool(torch.isfinite(base).all()):
            continue
        bases += 1
        names = unit["args"]
        if len(slots) > 1:
            for slot in slots:
                integers = as_integers(torch, values[slot["arg"]])
                if integers is not None:
                    changed = list(values)
                    changed[slot["arg"]] = integers
                    if kept(torch, overload, changed):
                        made.append(variant(sample, changed, f"{names[slot['arg']]} as integers", False))
        for slot in slots:
            changed = list(values)
            changed[slot["arg"]] = with_nan(torch, values[slot["arg"]])
            if kept(torch, overload, changed):
                made.append(variant(sample, changed, f"a NaN in {names[slot['arg']]}", False))
    return made


def as_integers(torch, tensor):
    """An int64 tensor of the rounded values, every other element negative (None: a complex tensor)."""
    if tensor.is_complex():
        return None
    integers = tensor.detach().round().to(torch.int64).abs().reshape(-1)
    integers[::2] = -integers[::2] - 1  # (never 0 there: 2**-1, 1/-2...)
    return integers.reshape(tensor.shape)


def with_nan(torch, tensor):
    """A copy with its first element NaN (NaN + NaN j for a complex tensor)."""
    changed = tensor.detach().clone(memory_format=torch.contiguous_format)  # (view(-1) of any sample's strides)
    changed.view(-1)[0] = complex(float("nan"), float("nan")) if changed.is_complex() else float("nan")
    return changed


def kept(torch, overload, values):
    """The op takes the values, its outputs are floating and finite, and torch's own autograd runs on them (backward
    and forward mode): where torch's own backward raises on a mixed call (addr's or huber_loss's with an integer
    operand), a formula raising there is no news. Its values are not asked to be right: the formula's are checked."""
    out = flat_output(torch, overload, values)
    if out is None or out.numel() == 0 or not bool(torch.isfinite(out).all()):
        return False
    return own_autograd_runs(torch, overload, values)


def own_autograd_runs(torch, overload, values):
    import torch.autograd.forward_ad as fwAD

    def floating(v):
        return isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())

    def outputs(out):
        return [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if floating(o)]

    try:
        leaves = [v.detach().clone().requires_grad_() if floating(v) else v for v in values]
        outs = [o for o in outputs(call_overload(torch, overload, leaves)) if o.requires_grad]
        inputs = [v for v in leaves if floating(v)]
        if outs:
            torch.autograd.grad(outs, inputs, [torch.ones_like(o) for o in outs], allow_unused=True)
        with fwAD.dual_level():
            duals = [fwAD.make_dual(v.detach(), torch.ones_like(v)) if floating(v) else v for v in values]
            for o in outputs(call_overload(torch, overload, duals)):
                fwAD.unpack_dual(o)
    except Exception:
        return False
    return True
