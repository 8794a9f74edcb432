"""Inputs where mistakes live: variants of OpInfo's first samples (made from them: the same at every run), special
values and complex quadrants put into their inputs, number arguments at other values, and the call's structure
(dims, keepdim, flags, indices)."""

from .schema import survives
from .values import all_strided, flat_output, leaf_slots, positional


def inplace_fit(torch, overload, unit, made):
    """Of the samples made for an in-place unit, those whose number arguments keep their defaults' signs: an
    in-place op may refuse another sign by design (leaky_relu_'s backward with a negative slope raises)."""
    if not unit.get("inplace"):
        return made
    arguments = overload._schema.arguments

    def fits(sample):
        for a, v in zip(arguments, sample["args"]):
            d = a.default_value if a.has_default_value() else None
            if isinstance(d, (int, float)) and isinstance(v, (int, float)) and not isinstance(v, bool):
                if (d > 0 and v < 0) or (d < 0 and v > 0):
                    return False
        return True

    return [s for s in made if fits(s)]


# --- special values, complex quadrants, number arguments at other values

# put into floating inputs: zero, units, negatives, points near the edges of common domains ([-1, 1], x > 0)
SPECIAL_REAL = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-3, -1e-3, 0.999, -0.999, 3.0, -3.0)
SPECIAL_COMPLEX = (0j, 1 + 0j, -1 + 0j, 1j, -1j, -1.5 + 0.5j, -0.5 - 1.5j, 0.5 - 0.5j)
VARIANT_BASES = 2  # the first samples of each dtype that get variants
VARIANT_NUMEL = 256  # every differentiable input of a variant has at most this many elements
STEP = 1e-6  # gradcheck's eps
# a point is stable when the one-sided difference quotients agree to gradcheck's own tolerances
STABLE_ATOL, STABLE_RTOL = 1e-5, 1e-3
SCALAR_TYPES = ("Scalar", "float", "complex", "number", "Optional[Scalar]", "Optional[float]", "Scalar?", "float?")


def unstable_elements(torch, overload, values, arg, indices, outputs=None):
    """The elements (flat indices) of the tensor values[arg] at which central differences are not reliable: the
    op's output there or a step either side is not finite, or the one-sided quotients disagree (a kink, a jump, a
    branch cut, a pole close by). Complex elements are stepped along both axes. `outputs`: only those of the op's
    outputs are looked at (the ones gradcheck sees: flat_output)."""
    base = values[arg]
    f0 = flat_output(torch, overload, values, outputs)
    if f0 is None or not bool(torch.isfinite(f0).all()):
        return set(indices)
    steps = (STEP, STEP * 1j) if base.is_complex() else (STEP,)
    bad = set()
    for i in indices:
        for step in steps:
            quotients = []
            for sign in (1, -1):
                moved = base.detach().clone(memory_format=torch.contiguous_format)
                moved.view(-1)[i] += sign * step
                shifted = list(values)
                shifted[arg] = moved
                f = flat_output(torch, overload, shifted, outputs)
                if f is None or f.shape != f0.shape or not bool(torch.isfinite(f).all()):
                    quotients = None
                    break
                quotients.append((f - f0) / (sign * abs(step)))
            if quotients is None:
                bad.add(i)
                break
            ahead, behind = quotients
            central = (ahead + behind) / 2
            if not bool(((ahead - behind).abs() <= STABLE_ATOL + STABLE_RTOL * central.abs()).all()):
                bad.add(i)
                break
            # a jump symmetric about the point (frexp's mantissa at 0) passes the one-sided test: the central
            # quotient of a jump grows as the step shrinks, a derivative's does not
            wide = []
            for sign in (1, -1):
                moved = base.detach().clone(memory_format=torch.contiguous_format)
                moved.view(-1)[i] += sign * 2 * step
                shifted = list(values)
                shifted[arg] = moved
                wide.append(flat_output(torch, overload, shifted, outputs))
            if any(w is None or w.shape != f0.shape or not bool(torch.isfinite(w).all()) for w in wide):
                bad.add(i)
                break
            central_wide = (wide[0] - wide[1]) / (4 * abs(step))
            if not bool(((central - central_wide).abs() <= STABLE_ATOL + STABLE_RTOL * central.abs()).all()):
                bad.add(i)
                break
    return bad


NUDGES = (1e-2, 1e-1)  # how far (relative to 1 + |value|) nudged moves an element, tried in turn


def nudged(torch, overload, values, arg, bad, outputs=None):
    """values[arg], a copy, with its elements at `bad` moved a little (NUDGES, a seeded direction each) so that
    finite differences are reliable at every element; None when no nudge makes them so, or when most elements
    are unreliable (a float32 output's rounding: no point is better than another)."""
    base = values[arg]
    if not (base.is_floating_point() or base.is_complex()) or 2 * len(bad) > base.numel():
        return None
    directions = torch.rand(len(bad), generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    for scale in NUDGES:
        moved = base.detach().clone(memory_format=torch.contiguous_format)
        flat = moved.view(-1)
        with torch.no_grad():
            for i, d in zip(sorted(bad), directions.tolist()):
                flat[i] += (1.0 if d < 0.5 else -1.0) * scale * (1.0 + float(flat[i].abs()))
        trial = list(values)
        trial[arg] = moved
        if not unstable_elements(torch, overload, trial, arg, range(moved.numel()), outputs):
            return moved
    return None


def with_points(torch, overload, values, arg, points):
    """values with values[arg]'s elements set to {flat index: value}, less the points where finite differences
    are not reliable (put back); (values, points kept, points dropped) or None when none is kept."""
    original = values[arg].detach().reshape(-1)
    dropped = 0
    alone = {}
    for i, v in points.items():  # each point alone first: one where the op's output is not finite spoils the rest
        moved = values[arg].detach().clone(memory_format=torch.contiguous_format)
        moved.view(-1)[i] = v
        out = flat_output(torch, overload, [*values[:arg], moved, *values[arg + 1 :]])
        if out is not None and bool(torch.isfinite(out).all()):
            alone[i] = v
        else:
            dropped += 1
    points = alone
    moved = values[arg].detach().clone(memory_format=torch.contiguous_format)
    flat = moved.view(-1)
    for i, v in points.items():
        flat[i] = v
    out = list(values)
    out[arg] = moved
    for _ in range(2):  # once, then again after putting back (the other points may depend on them)
        bad = unstable_elements(torch, overload, out, arg, [i for i in points if bool(flat[i] != original[i])])
        if not bad:
            break
        for i in bad:
            flat[i] = original[i]
        dropped += len(bad)
    else:
        if unstable_elements(torch, overload, out, arg, list(points)):
            return None
    kept = int((flat != original).sum())
    return (out, kept, dropped) if kept else None


def spread(n, m):
    """m flat indices spread over n elements."""
    return [k * n // m for k in range(min(n, m))]


def quadrant(z, k):
    """z in the k-th quadrant: z, -conj(z), -z, conj(z)."""
    return (z, -z.conjugate(), -z, z.conjugate())[k % 4]


def non_default(value, is_complex):
    """A value other than an argument's default (alpha = 1 -> 1.4): complex for complex samples."""
    if isinstance(value, bool) or not isinstance(value, (int, float, complex)):
        return None
    new = value * 1.7 - 0.3 if value != 0 else -0.3
    if isinstance(value, complex):
        return new
    return complex(new) * (1 + 0.5j) if is_complex else float(new)


def variants(torch, overload, unit, found):
    """Samples made from OpInfo's first samples of each dtype (VARIANT_BASES), where mistakes live: special values
    put into each floating input and complex values in all four quadrants (only where finite differences are
    reliable: the other points are put back and counted in UNSTABLE; inputs of at most VARIANT_NUMEL elements),
    each number argument with a default at another value."""
    made = []
    bases = {}
    scalar_bases = {}
    for sample in found:
        if sample.get("from_backward") or sample.get("transforms") or sample.get("variant") or sample.get("reference"):
            continue
        values = positional(overload, sample["args"], sample["kwargs"])
        slots = [s for s in leaf_slots(torch, unit, values) if s["item"] is None]
        if not slots:
            continue
        dtype = sample["dtype"]
        if scalar_bases.get(dtype, 0) < VARIANT_BASES:
            scalar_bases[dtype] = scalar_bases.get(dtype, 0) + 1
            made += scalar_variants(torch, overload, sample, values)
        small = all(values[s["arg"]].numel() <= VARIANT_NUMEL for s in slots)
        if bases.get(dtype, 0) < VARIANT_BASES and small and all_strided(torch, values):
            bases[dtype] = bases.get(dtype, 0) + 1
            made += point_variants(torch, overload, unit, sample, values, slots)
    from .edges import edge_variants  # (edges.py builds on this module's variant())

    return made + structure_of_samples(torch, overload, unit, found) + edge_variants(torch, overload, unit, found)


def variant(sample, values, what, points):
    """A sample made from `sample`: its values (one per schema argument), what was changed; points: special
    points were put in (a check of it needs finite differences reliable at every element of the varied input)."""
    return {
        **sample,
        "args": tuple(values),
        "kwargs": {},
        "origin": f"{sample['origin']}, {what}",
        "variant": what,
        "points": points,
    }


def point_variants(torch, overload, unit, sample, values, slots):
    """Special values put into each floating input in turn (complex ones into a complex input); every complex
    input with its elements moved into all four quadrants (negative real parts: branch cuts)."""
    made = []
    unstable = 0
    names = unit["args"]
    # a point at one of the op's own number arguments (softshrink's lambd = 0 at 0) is where its formula picks a
    # side by convention: a kink of the op for every other value of the argument
    numbers = {
        abs(v)
        for v, a in zip(values, overload._schema.arguments)
        if str(a.type) in SCALAR_TYPES and isinstance(v, (int, float, complex)) and not isinstance(v, bool)
    }
    for slot in slots:
        tensor = values[slot["arg"]]
        specials = [v for v in (SPECIAL_COMPLEX if tensor.is_complex() else SPECIAL_REAL) if abs(v) not in numbers]
        points = dict(zip(spread(tensor.numel(), len(specials)), specials))
        kept = with_points(torch, overload, values, slot["arg"], points)
        if kept is None:
            unstable += len(points)
            continue
        made.append(variant(sample, kept[0], f"special values in {names[slot['arg']]}", True))
        unstable += kept[2]
    quadrants = list(values)
    moved = 0
    for n, slot in enumerate(s for s in slots if values[s["arg"]].is_complex()):
        tensor = values[slot["arg"]].reshape(-1)
        points = {i: quadrant(complex(tensor[i].item()), i + n) for i in range(tensor.numel())}
        kept = with_points(torch, overload, quadrants, slot["arg"], points)
        if kept is None:
            continue
        quadrants, moved, unstable = kept[0], moved + kept[1], unstable + kept[2]
    if moved:
        made.append(variant(sample, quadrants, "complex values in all four quadrants", True))
    if unstable:
        UNSTABLE[unit["id"]] = UNSTABLE.get(unit["id"], 0) + unstable
    return made


def scalar_variants(torch, overload, sample, values):
    """Each number argument the sample leaves at its default (alpha = 1) at another value, one at a time: complex
    for a complex sample when the op takes it, else real."""
    made = []
    is_complex = sample["dtype"].is_complex
    for i, a in enumerate(overload._schema.arguments):
        if str(a.type) not in SCALAR_TYPES or not a.has_default_value() or i >= len(values):
            continue
        if a.default_value is None or values[i] != a.default_value:
            continue
        for candidate in (non_default(a.default_value, is_complex), non_default(a.default_value, False)):
            if candidate is None:
                continue
            changed = list(values)
            changed[i] = candidate
            out = flat_output(torch, overload, changed)
            if out is not None and bool(torch.isfinite(out).all()):
                made.append(variant(sample, changed, f"{a.name}={candidate!r}", False))
                break
    return made


UNSTABLE: "dict[str, int]" = {}  # unit id -> special points put back (finite differences unreliable there)

# --- the call's structure (dims, keepdim, flags, indices)

DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2", "dimension", "start_dim", "end_dim")
REDUCTIONS = (0, 1, 2)  # an int `reduction` (at::Reduction): None, Mean, Sum
OTHER_STRINGS = {"approximate": ("tanh", "none")}  # a str argument's values, where they are known
OPTIONAL_NUMBER = 0.25  # a Scalar? / float? argument left None (var's correction, logit's eps) gets this value
OPTIONAL_NUMBER_TYPES = ("Optional[number]", "Optional[float]")
# arguments whose other values change the gradient by design (test_ops leaves them out of gradient samples too):
# embedding's padding_idx and scale_grad_by_freq, a sparse gradient, a half-precision result
NOT_MOVED = (
    # the gradient changes by design
    "padding_idx",
    "scale_grad_by_freq",
    "sparse",
    "sparse_grad",
    "half_to_float",
    # a promise about the input (hermitian: only one triangle is read) or a switch that leaves outputs out
    # (compute_uv, unpack_*: the formula needs them): the sample was not made for the other value
    "hermitian",
    "compute_uv",
    "unpack_data",
    "unpack_pivots",
    # a scale that must agree with the output size given beside it (the upsampling ops)
    "scales",
    "scales_d",
    "scales_h",
    "scales_w",
)


def structure_of_samples(torch, overload, unit, found):
    """structure_variants of VARIANT_BASES samples of each dtype, those of the highest rank first (in OpInfo's order
    among equals): a 0-dim or one-element sample hides what a dim, keepdim or reduction changes."""
    made = []
    candidates = []
    for n, sample in enumerate(found):
        if sample.get("from_backward") or sample.get("transforms") or sample.get("variant") or sample.get("reference"):
            continue
        values = positional(overload, sample["args"], sample["kwargs"])
        slots = [s for s in leaf_slots(torch, unit, values) if s["item"] is None]
        if slots:
            rank = max(values[s["arg"]].dim() for s in slots)
            candidates.append((-rank, n, sample, values))
    bases = {}
    for _, _, sample, values in sorted(candidates, key=lambda c: c[:2]):
        if bases.get(sample["dtype"], 0) < VARIANT_BASES:
            bases[sample["dtype"]] = bases.get(sample["dtype"], 0) + 1
            made += structure_variants(torch, overload, sample, values)
    return made


def structure_variants(torch, overload, sample, values):
    """The call's structure where OpInfo's samples leave it at one value, one change at a time, kept only where the
    op accepts it (its output finite; a rejected variant is dropped, never reported):
    - a dim argument >= 0 made negative (the op's output must not change), an optional dim left None at -1;
    - keepdim flipped; another bool argument left at its default flipped;
    - an int argument left at a default >= 0 at another value (offset 0 -> -1; `reduction`: the other two);
    - never an argument that changes the gradient by design, promises something of the input or must agree with
      another argument (NOT_MOVED: padding_idx, hermitian, compute_uv, scales_h, ...);
    - a Scalar? / float? left None at OPTIONAL_NUMBER; a str argument at another known value (approximate);
    - an integer tensor argument (an index) with every other element negative, counted from the end of a
      dimension of the input or of its elements: kept only where the op's output does not change (it wraps them)."""
    made = []
    base = flat_output(torch, overload, values)
    if base is None:
        return made
    rank = next((v.dim() for v in values if isinstance(v, torch.Tensor)), None)

    def accept(index, value, what, same=False):
        changed = list(values)
        changed[index] = value
        if unchecked_arguments(overload) and not survives(torch, overload, changed):
            return False  # (tried in a forked copy first: see unchecked_arguments)
        out = flat_output(torch, overload, changed)
        if out is None or not bool(torch.isfinite(out).all()):
            return False
        if same and (out.shape != base.shape or not bool(torch.equal(out, base))):
            return False
        made.append(variant(sample, changed, what, False))
        return True

    for i, a in enumerate(overload._schema.arguments):
        if i >= len(values):
            break
        v, t, name = values[i], str(a.type), a.name
        default = a.default_value if a.has_default_value() else ()
        if name in NOT_MOVED:
            continue
        if name in DIM_NAMES and rank is not None and ("int" in t or "SymInt" in t):
            if isinstance(v, int) and not isinstance(v, bool) and v >= 0:
                for k in (rank, rank + 1):  # (diag_embed's dims count in its output: one more)
                    if v - k < 0 and accept(i, v - k, f"{name}={v - k}", same=True):
                        break
            elif isinstance(v, (list, tuple)) and v and all(isinstance(d, int) for d in v) and max(v) >= 0:
                for k in (rank, rank + 1):
                    negative = [d - k if d >= 0 else d for d in v]
                    if max(negative) < 0 and accept(i, negative, f"{name}={negative}", same=True):
                        break
            elif v is None and default is None:
                accept(i, [-1] if "List" in t else -1, f"{name}={[-1] if 'List' in t else -1}")
        elif t == "bool" and default != () and (name == "keepdim" or v == default) and isinstance(v, bool):
            accept(i, not v, f"{name}={not v}")
        elif t == "int" and name == "reduction" and v in REDUCTIONS:
            for r in REDUCTIONS:
                if r != v:
                    accept(i, r, f"reduction={r}")
        elif t in ("int", "SymInt") and isinstance(default, int) and not isinstance(v, bool) and v == default >= 0:
            # (a negative default is a sentinel: ignore_index=-100, "none")
            for other in (v - 1, v + 1):
                if accept(i, other, f"{name}={other}"):
                    break
        elif t == "str" and name in OTHER_STRINGS and v == default:
            for other in OTHER_STRINGS[name]:
                if other != v and accept(i, other, f"{name}={other!r}"):
                    break
        elif t in OPTIONAL_NUMBER_TYPES and v is None and default is None:
            accept(i, OPTIONAL_NUMBER, f"{name}={OPTIONAL_NUMBER}")
        elif isinstance(v, torch.Tensor) or (
            isinstance(v, (list, tuple)) and any(isinstance(x, torch.Tensor) for x in v)
        ):
            made += negative_indices(torch, overload, sample, values, i, base)
    return made


def unchecked_arguments(overload):
    """An internal op (`aten::_fft_r2c`) or a backward function: its kernel may trust its arguments, and a variant
    it does not expect (a negative dim it never wraps) can crash the process (_fft_r2c segfaults on one), so
    such a variant is tried in a forked copy first (schema.survives). Public ops check their arguments."""
    name = overload._schema.name.split("::")[-1]
    return name.startswith("_") or "backward" in name


def negative_indices(torch, overload, sample, values, i, base):
    """values[i] (an integer tensor, or a list of optional ones: index.Tensor's) with every other element of one
    tensor counted from the end (idx - n, n a size of the first tensor argument or its numel), kept where the op's
    output does not change: the op wraps negative indices, and the formula must too."""
    made = []
    first = next((v for v in values if isinstance(v, torch.Tensor)), None)
    if first is None:
        return made
    items = list(values[i]) if isinstance(values[i], (list, tuple)) else [values[i]]
    for j, index in enumerate(items):
        if not isinstance(index, torch.Tensor) or index.dtype in (torch.bool, torch.uint8):
            continue
        if index.is_floating_point() or index.is_complex() or index.numel() == 0 or bool((index < 0).any()):
            continue
        for n in sorted({*first.shape, first.numel()}):
            if n <= 0:
                continue
            moved = index.clone(memory_format=torch.contiguous_format)
            flat = moved.view(-1)
            flat[::2] -= n
            changed_items = list(items)
            changed_items[j] = moved
            changed = list(values)
            changed[i] = changed_items if isinstance(values[i], (list, tuple)) else moved
            if unchecked_arguments(overload) and not survives(torch, overload, changed):
                continue
            out = flat_output(torch, overload, changed)
            if out is not None and out.shape == base.shape and bool(torch.equal(out, base)):
                made.append(
                    variant(sample, changed, f"negative indices in {overload._schema.arguments[i].name}", False)
                )
                break
        break  # (one index tensor: the first)
    return made
