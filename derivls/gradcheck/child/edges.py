"""Inputs at the edges of an op's domain, where OpInfo's samples do not go (issue 52): exact ties (within an input,
between two inputs, at a Scalar argument), constant inputs (a zero spread), Scalar arguments at 0, negative,
infinite and past their usual range, a dim list empty / full / None, one operand complex and the other real, and
indices repeated or equal to padding_idx / ignore_index.

Most of these points are kinks of the op, where finite differences take the mean of the two sides and a formula
picks a side by convention. Each sample is kept only where the installed torch's own gradient agrees with finite
differences there (torch_agrees: its backward, else the sample is dropped; its forward AD and double backward, else
those checks are skipped for it): a point where even the shipped formulas disagree is never evidence."""

from .limits import time_limit
from .schema import survives
from .values import all_strided, call_overload, flat_output, leaf_slots, positional
from .variants import (
    DIM_NAMES,
    SCALAR_TYPES,
    STABLE_ATOL,
    STABLE_RTOL,
    STEP,
    VARIANT_NUMEL,
    unchecked_arguments,
    variant,
)

EDGE_BASES = 1  # the first samples of each dtype that get edge samples
AGREE_SECONDS = 20  # torch's own gradcheck of one edge sample, at most
SPECIAL_INDEX_NAMES = ("padding_idx", "ignore_index")  # an int argument naming an index value the op treats apart


def edge_variants(torch, overload, unit, found, double=False):
    """Edge samples made from the first EDGE_BASES samples of each dtype (their origin says which edge), each
    kept where the op takes it and torch's own gradient agrees with finite differences there."""
    made = []
    bases = {}
    for sample in sorted(found, key=lambda s: base_order(torch, s)):
        if sample.get("transforms") or sample.get("variant"):  # (reference inputs too: often of a higher rank)
            continue
        if sample.get("from_backward") and any(
            s.get("kind") != "independent" for s in (sample.get("lineage") or {}).values()
        ):
            continue  # (its forward intermediates follow its inputs: torch's own check would not)
        values = positional(overload, sample["args"], sample["kwargs"])
        if not all_strided(torch, values):
            continue
        slots = [s for s in leaf_slots(torch, unit, values) if s["item"] is None]
        if not slots or any(values[s["arg"]].numel() > VARIANT_NUMEL for s in slots):
            continue
        key = (sample["dtype"], bool(sample.get("from_backward")))
        if bases.get(key, 0) >= EDGE_BASES:
            continue
        bases[key] = bases.get(key, 0) + 1
        widened = False
        if all(values[s["arg"]].dim() == 0 for s in slots):  # (OpInfo's first samples of amax are all 0-dim)
            wide = widen(torch, values)
            if accepted(torch, overload, wide):
                values, widened = wide, True
        if flat_output(torch, overload, values) is None:
            continue
        try:  # (an edge the harness cannot make costs the unit that edge, never its other samples)
            made += edges_of(torch, overload, unit, sample, values, slots, widened, double)
        except Exception:
            continue
    return made


def edges_of(torch, overload, unit, sample, values, slots, widened, double):
    """The edge samples of one base sample (values: its arguments, widened or not), each kept where torch agrees."""
    made = []
    # (a sample reached through a backward, whose tensors are another op's: its numbers and indices only)
    candidates = scalar_edge_candidates(torch, overload, values) + index_candidates(torch, overload, values)
    if not sample.get("from_backward"):
        candidates += (
            tie_candidates(torch, overload, values, slots)
            + constant_candidates(torch, overload, values, slots)
            + dim_candidates(torch, overload, values)
            + mixed_candidates(torch, overload, values, slots)
        )
    for what, changed, kink in candidates:
        if kink is not None and not kinked(torch, overload, changed, *kink):
            continue  # (the op is smooth there: nothing a formula could pick)
        skip = torch_agrees(torch, overload, unit, changed, double)
        if skip is None:
            continue
        what = f"edge: {what}" + (f", every 0-dim input made {WIDE}" if widened else "")
        edge = variant(sample, changed, what, False)
        edge["skip"] = {**sample.get("skip", {}), **skip}
        made.append(edge)
    return made


def base_order(torch, sample):
    """Samples whose floating inputs all have one shape first (two inputs can tie everywhere), then those of the
    highest rank (a 0-dim one has no ties, no spread, no dims; it is widened when it is all there is)."""
    shapes = [
        v.shape for v in sample["args"] if isinstance(v, torch.Tensor) and (v.is_floating_point() or v.is_complex())
    ]
    return (len(set(shapes)) > 1, -max((len(shape) for shape in shapes), default=0))


WIDE = (4, 4)  # the shape a 0-dim floating input is widened to (seeded values)


def widen(torch, values):
    """values with every 0-dim floating tensor made a WIDE one (seeded normal values, its dtype)."""
    generator = torch.Generator().manual_seed(2)
    out = list(values)
    for i, v in enumerate(values):
        if isinstance(v, torch.Tensor) and v.dim() == 0 and (v.is_floating_point() or v.is_complex()):
            out[i] = torch.randn(WIDE, generator=generator, dtype=v.dtype)
    return out


def accepted(torch, overload, values):
    """The op takes values: its output is finite (tried in a forked copy first for an internal op)."""
    if unchecked_arguments(overload) and not survives(torch, overload, values):
        return False
    out = flat_output(torch, overload, values)
    return out is not None and bool(torch.isfinite(out).all())


def kinked(torch, overload, values, arg, mask):
    """The op has a kink at values along a seeded direction moving values[arg]'s elements at `mask`: its one-sided
    difference quotients disagree (a tie, a bound, a zero spread)."""
    base = values[arg]
    direction = torch.randn(base.shape, generator=torch.Generator().manual_seed(1), dtype=torch.float64)
    direction = direction.to(base.dtype) * mask.to(base.dtype)
    f0 = flat_output(torch, overload, values)
    sides = []
    for sign in (1, -1):
        moved = list(values)
        moved[arg] = base.detach() + sign * 10 * STEP * direction
        f = flat_output(torch, overload, moved)
        if f0 is None or f is None or f.shape != f0.shape or not bool(torch.isfinite(f).all()):
            return False
        sides.append((f - f0) / (sign * 10 * STEP))
    ahead, behind = sides
    return not bool(((ahead - behind).abs() <= STABLE_ATOL + STABLE_RTOL * ahead.abs()).all())


def torch_agrees(torch, overload, unit, values, double=False):
    """{mode: why it is skipped} when the installed torch's own backward agrees with finite differences at values
    (gradcheck of the op, every differentiable input at once): its forward AD or double backward may not (those
    checks are skipped there); None when its backward does not (or it raises, or takes too long)."""
    slots = [s for s in leaf_slots(torch, unit, values) if s["item"] is None]
    if not slots:
        return None
    leaves = tuple(values[s["arg"]].detach().clone().requires_grad_(True) for s in slots)

    def outputs(*xs):
        args = list(values)
        for s, x in zip(slots, xs):
            args[s["arg"]] = x
        out = call_overload(torch, overload, args)  # (a random op: the same draw at every call, as the check's)
        return out if isinstance(out, (tuple, list)) else (out,)

    try:  # (the outputs autograd differentiates, found once: under forward AD none requires grad)
        with time_limit(AGREE_SECONDS):
            wanted = [k for k, o in enumerate(outputs(*leaves)) if isinstance(o, torch.Tensor) and o.requires_grad]
    except Exception:
        return None

    def fn(*xs):
        outs = outputs(*xs)
        return tuple(outs[k] for k in wanted)

    def passes(check, **kwargs):
        try:
            with time_limit(AGREE_SECONDS):
                if not fn(*leaves):
                    return False
                return bool(check(fn, leaves, raise_exception=False, **kwargs))
        except Exception:
            return False

    common = {"check_undefined_grad": False, "check_batched_grad": False, "fast_mode": True}  # (a random projection)
    if not passes(torch.autograd.gradcheck, check_backward_ad=True, **common):
        return None
    skip = {}
    if not passes(torch.autograd.gradcheck, check_backward_ad=False, check_forward_ad=True, **common):
        skip["forward"] = "torch's own forward AD disagrees with finite differences at this edge sample"
    if not double:
        skip["double-backward"] = "an edge sample: torch's own double backward was not compared there"
    elif not passes(torch.autograd.gradgradcheck, check_undefined_grad=False):
        skip["double-backward"] = "torch's own double backward disagrees with finite differences at this edge sample"
    return skip


# --- ties and constant inputs (values equal by construction)


def paired(torch, tensor, dim):
    """tensor with its odd positions along dim equal to the even ones before them (every value twice: a tie at
    each selection, of exactly two elements, where central differences split the gradient evenly); the mask of
    the changed elements. None when dim has fewer than 2 elements."""
    n = tensor.shape[dim]
    if n < 2:
        return None
    index = torch.arange(n)
    index[1::2] = index[0::2][: n // 2]
    out = tensor.detach().index_select(dim, index).clone()
    mask = torch.zeros(n, dtype=torch.bool)
    mask[1::2] = True
    shape = [1] * tensor.dim()
    shape[dim] = n
    return out, mask.reshape(shape).expand(tensor.shape)


def sample_dims(values, rank):
    """The dims the sample's own dim arguments name (wrapped), else the last and the first."""
    dims = []
    for v in values:
        for d in v if isinstance(v, (list, tuple)) else [v]:
            if isinstance(d, int) and not isinstance(d, bool) and -rank <= d < rank:
                dims.append(d % rank)
    return list(dict.fromkeys(dims[:1] + [rank - 1, 0]))


def tie_candidates(torch, overload, values, slots):
    """(what, values, (arg, mask)) with exact ties: each input's values in pairs along a dim; half of an input's
    elements equal to another input's; elements equal to a real Scalar argument (a bound, a threshold) and to
    its negation."""
    made = []
    arguments = overload._schema.arguments
    for slot in slots:
        i = slot["arg"]
        x = values[i]
        name = arguments[i].name
        for d in sample_dims(values, x.dim()) if x.dim() else []:
            pair = paired(torch, x, d)
            if pair is not None:
                made.append((f"ties in {name} (pairs along dim {d})", with_value(values, i, pair[0]), (i, pair[1])))
        flat_mask = torch.zeros(x.numel(), dtype=torch.bool)
        flat_mask[::2] = True
        mask = flat_mask.reshape(x.shape)
        for j, other in enumerate(values):
            if j == i or not isinstance(other, torch.Tensor) or other.dtype != x.dtype or other.numel() == 0:
                continue
            try:
                spread = other.detach().expand(x.shape)
            except RuntimeError:
                continue
            tied = x.detach().clone()
            tied[mask] = spread[mask]
            made.append((f"ties between {name} and {arguments[j].name}", with_value(values, i, tied), (i, mask)))
        if x.is_complex():
            continue
        for j, a in enumerate(arguments):
            v = values[j] if j < len(values) else None
            if str(a.type) not in SCALAR_TYPES or isinstance(v, bool) or not isinstance(v, (int, float)):
                continue
            if v != v or abs(v) == float("inf"):
                continue
            for c in dict.fromkeys((float(v), -float(v))):
                tied = x.detach().clone()
                tied[mask] = c
                made.append((f"{name} tied with {a.name}={c!r}", with_value(values, i, tied), (i, mask)))
    return made


def constant_candidates(torch, overload, values, slots):
    """(what, values, (arg, mask)) with an input constant (a zero spread: std, var, norms), along a dim and whole."""
    made = []
    arguments = overload._schema.arguments
    for slot in slots:
        i = slot["arg"]
        x = values[i].detach()
        if x.numel() < 2:
            continue
        everywhere = torch.ones(x.shape, dtype=torch.bool)
        name = arguments[i].name
        for d in sample_dims(values, x.dim())[:1] if x.dim() > 1 else []:
            if x.shape[d] > 1:
                flat = x.narrow(d, 0, 1).expand(x.shape).clone()
                made.append((f"{name} constant along dim {d}", with_value(values, i, flat), (i, everywhere)))
        made.append(
            (f"{name} constant", with_value(values, i, torch.full_like(x, x.reshape(-1)[0].item())), (i, everywhere))
        )
        made.append((f"{name} zero", with_value(values, i, torch.zeros_like(x)), (i, everywhere)))
    return made


def with_value(values, i, value):
    out = list(values)
    out[i] = value
    return out


# --- Scalar arguments at the edges, dims, mixed complex and real, special indices


def edge_numbers(v):
    """Values of a real number argument beyond OpInfo's: 0, negative, past the usual range (a slope above 1, a
    larger magnitude), the infinities."""
    m = abs(float(v))
    out = [0.0, -m if m else -1.0, 2 * m + 1, float("inf"), float("-inf")]
    return [c for c in dict.fromkeys(out) if c != v]


def scalar_edge_candidates(torch, overload, values):
    """(what, values, None) with each real Scalar / float argument at an edge value (edge_numbers): pow.Scalar's
    self at 0, a negative alpha, p = -inf. Where the op's output is not finite at 0 (0 to a negative power), tried again
    with every floating input at |x| + 0.5."""
    made = []
    for j, a in enumerate(overload._schema.arguments):
        v = values[j] if j < len(values) else None
        if str(a.type) not in SCALAR_TYPES or isinstance(v, bool) or not isinstance(v, (int, float)):
            continue
        for c in edge_numbers(v):
            changed = with_value(values, j, c)
            if accepted(torch, overload, changed):
                made.append((f"{a.name}={c!r}", changed, None))
                continue
            if c != 0:
                continue
            positive = [
                (x.detach().abs() + 0.5) if isinstance(x, torch.Tensor) and x.is_floating_point() else x
                for x in changed
            ]
            if accepted(torch, overload, positive):
                made.append((f"{a.name}={c!r}, positive inputs", positive, None))
    return made


def dim_candidates(torch, overload, values):
    """(what, values, None) with a list dim argument (int[]) empty (every dim, for a reduction), full, full and
    negative, or None; each with keepdim both ways."""
    made = []
    arguments = overload._schema.arguments
    rank = next((v.dim() for v in values if isinstance(v, torch.Tensor)), None)
    if rank is None:
        return made
    keepdim = next((k for k, a in enumerate(arguments) if a.name == "keepdim" and str(a.type) == "bool"), None)
    for j, a in enumerate(arguments):
        t = str(a.type)
        if a.name not in DIM_NAMES or "List" not in t or j >= len(values):
            continue
        options = [[], list(range(rank)), list(range(-rank, 0))] + ([None] if "Optional" in t else [])
        for dims in options:
            if values[j] == dims or (rank == 0 and dims):
                continue
            changed = with_value(values, j, dims)
            for flip in [False, True] if keepdim is not None and keepdim < len(values) else [False]:
                tried = with_value(changed, keepdim, not changed[keepdim]) if flip else changed
                if accepted(torch, overload, tried):
                    what = f"{a.name}={dims!r}" + (f", keepdim={tried[keepdim]}" if keepdim is not None else "")
                    made.append((what, tried, None))
    return made


def mixed_candidates(torch, overload, values, slots):
    """(what, values, None) with one of two complex inputs made real (its real part), each in turn: the op
    promotes, and the real input's gradient must be real (handle_r_to_c) and its conjugates right."""
    made = []
    arguments = overload._schema.arguments
    complex_slots = [s for s in slots if values[s["arg"]].is_complex()]
    if len(complex_slots) < 2:
        return made
    for slot in complex_slots:
        i = slot["arg"]
        changed = with_value(values, i, values[i].detach().real.clone())
        if accepted(torch, overload, changed):
            made.append((f"{arguments[i].name} real, the others complex", changed, None))
    return made


def index_candidates(torch, overload, values):
    """(what, values, None) with the first index tensor's elements repeated in pairs, and with a padding_idx /
    ignore_index argument equal to an index the tensor holds."""
    made = []
    arguments = overload._schema.arguments
    index_at = next(
        (
            j
            for j, v in enumerate(values)
            if isinstance(v, torch.Tensor)
            and v.numel() > 1
            and not (v.is_floating_point() or v.is_complex() or v.dtype in (torch.bool, torch.uint8))
        ),
        None,
    )
    if index_at is None:
        return made
    index = values[index_at]
    repeated = index.clone(memory_format=torch.contiguous_format)
    flat = repeated.view(-1)
    flat[1::2] = flat[0::2][: flat[1::2].numel()].clone()
    if not torch.equal(repeated, index) and accepted(torch, overload, with_value(values, index_at, repeated)):
        made.append((f"repeated indices in {arguments[index_at].name}", with_value(values, index_at, repeated), None))
    held = list(dict.fromkeys(int(k) for k in index.reshape(-1).tolist() if int(k) >= 0))
    for j, a in enumerate(arguments):
        if a.name not in SPECIAL_INDEX_NAMES or j >= len(values) or not held or values[j] in held:
            continue
        for k in held:
            changed = with_value(values, j, k)
            if bool((index == k).all()):  # (every index special: a mean over none; half of them another index)
                other = index.clone(memory_format=torch.contiguous_format)
                other.view(-1)[1::2] = 0 if k else 1
                changed[index_at] = other
            if accepted(torch, overload, changed):
                made.append((f"{a.name}={k} (an index {arguments[index_at].name} holds)", changed, None))
                break
    return made
