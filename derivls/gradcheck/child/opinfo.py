"""What OpInfo says of an op's samples: the foreach functions' OpInfos, the checks it skips or expects to fail
(opinfo_skips), what its gradcheck_wrapper does to the inputs (wrapper_transforms), and the reference_inputs its
sample_inputs lack (reference_samples)."""

from .limits import MAX_NUMEL
from .values import all_finite


def foreach_infos():
    """torch's OpInfos of the foreach functions (_foreach_div, ...), not in op_db; [] where the torch has none."""
    try:
        from torch.testing._internal import common_methods_invocations as cmi
    except Exception:
        return []
    infos = []
    for name in (
        "foreach_unary_op_db",
        "foreach_binary_op_db",
        "foreach_pointwise_op_db",
        "foreach_reduce_op_db",
        "foreach_other_op_db",
        "foreach_lerp_op_db",
    ):
        infos += [op for op in getattr(cmi, name, ()) if op not in infos]
    return infos


GRADIENT_TESTS = {  # test_ops' tests of each kind of check (TestGradients before 2.1)
    "backward": (("TestBwdGradients", "test_fn_grad"), ("TestGradients", "test_fn_grad")),
    "forward": (("TestFwdGradients", "test_forward_mode_AD"), ("TestGradients", "test_forward_mode_AD")),
    "double-backward": (("TestBwdGradients", "test_fn_gradgrad"), ("TestGradients", "test_fn_gradgrad")),
}


TEST_SKIP = ("is skipped (", "is an expected failure (")  # (opinfo_skips' reasons for a decorator of a test)


def is_test_skip(why):
    """The reason is a skip or expected failure of test_ops' test (not the op's lack of forward AD / gradgrad)."""
    return why.startswith("OpInfo: ") and any(t in why for t in TEST_SKIP)


def skips_backward(torch, op):
    """OpInfo skips test_fn_grad (or expects it to fail) on CPU in float64."""
    return is_test_skip(opinfo_skips(torch, op, torch.float64).get("backward", ""))


def opinfo_skips(torch, op, dtype):
    """The kinds of check OpInfo does not run for this op on CPU in this dtype (it says the op does not support
    it, or a skip or expected failure of test_ops' test): {kind: why}."""
    skips = {}
    if not getattr(op, "supports_forward_ad", True):
        skips["forward"] = "OpInfo: no forward AD"
    if not getattr(op, "supports_gradgrad", True):
        skips["double-backward"] = "OpInfo: no gradgrad"
    for decorator in getattr(op, "decorators", ()) or ():
        active = getattr(decorator, "is_active", None)
        if active is None:
            continue
        for kind, tests in GRADIENT_TESTS.items():
            for cls_name, test_name in tests:
                try:
                    if not active(cls_name, test_name, "cpu", dtype, {}):
                        continue
                except Exception:
                    continue
                for d in getattr(decorator, "decorators", ()) or ():
                    qualname = getattr(d, "__qualname__", "")
                    if qualname == "expectedFailure":
                        label = "an expected failure"
                    elif qualname.split(".")[0].lower().startswith("skip"):  # unittest.skip(...) and the like
                        label = "skipped"
                    else:  # toleranceOverride, slowTest...: the test runs
                        continue
                    skips.setdefault(kind, f"OpInfo: {test_name} is {label} ({str(dtype).replace('torch.', '')})")
    return skips


def wrapper_transforms(torch, op, sample):
    """What OpInfo's gradcheck_wrapper does to each positional input: {index: function}; {} (no change),
    None (a wrapper that cannot be followed: it changes outputs, or fails on a stand-in op)."""
    wrapper = getattr(op, "gradcheck_wrapper", None)
    if wrapper is None:
        return {}
    name = getattr(wrapper, "__name__", "")
    if "masked" in name:
        return None  # masks outputs
    positional = [sample.input, *sample.args]

    def seen(values, kwargs):
        captured = []

        def capture(*args, **kw):
            captured.append(args)
            return args[0] if args else None

        try:
            wrapper(capture, *values, **kwargs)
        except Exception:
            return None
        return captured[0] if captured else None

    captured = seen(positional, sample.kwargs)
    if captured is None:
        return None
    changed = [i for i, v in enumerate(positional) if i < len(captured) and captured[i] is not v]
    if not changed and len(captured) == len(positional):
        return {}
    if not changed:
        return None  # it adds arguments without changing one (a layout we do not follow)

    def transform(index):
        def apply(value):
            values = list(positional)
            values[index] = value
            return seen(values, sample.kwargs)[index]

        return apply

    return {i: transform(i) for i in changed}


# --- inputs where mistakes live: OpInfo's reference inputs (variants.py makes the others)

REFERENCE_SAMPLES = 2  # per dtype: OpInfo's reference_inputs that its sample_inputs lack, kept beyond `limit`
REFERENCE_SCAN = 120  # of an op's reference_inputs, at most this many are looked at (they start with its samples)
# a reference input with a larger floating value is not used: its large-value samples (1e5, 1e20...) test the
# kernel's range, where finite differences at gradcheck's step say nothing of a formula
REFERENCE_MAX_ABS = 100.0


def opinfo_count(samples):
    """How many of the samples are OpInfo's sample_inputs (reference inputs are kept beyond the limit)."""
    return sum(1 for f in samples if not f.get("reference"))


def has_room(samples, dtype, limit, reference):
    """Room for one more sample of this dtype: up to `limit` of OpInfo's sample_inputs, and REFERENCE_SAMPLES more
    from its reference_inputs."""
    kept = sum(1 for f in samples if f["dtype"] == dtype and bool(f.get("reference")) == reference)
    return kept < (REFERENCE_SAMPLES if reference else limit)


def sample_tensors(torch, sample):
    """The tensors of an OpInfo SampleInput (input, args, kwargs; lists flattened)."""
    out = []

    def walk(x):
        if isinstance(x, torch.Tensor):
            out.append(x)
        elif isinstance(x, (list, tuple)):
            for y in x:
                walk(y)
        elif isinstance(x, dict):
            for y in x.values():
                walk(y)

    walk((sample.input, sample.args, sample.kwargs))
    return out


def sample_signature(torch, sample):
    """What tells two samples apart for a formula: each tensor's shape, strides and dtype, the other arguments."""

    def one(x):
        if isinstance(x, torch.Tensor):
            return ("T", tuple(x.shape), tuple(x.stride()), str(x.dtype))
        if isinstance(x, (list, tuple)):
            return tuple(one(y) for y in x)
        if isinstance(x, dict):
            return tuple((k, one(v)) for k, v in sorted(x.items()))
        return repr(x)

    return one((sample.input, sample.args, sample.kwargs))


def sample_structure(torch, sample):
    """The kind of call a sample is, where formulas go wrong: a non-contiguous tensor, inputs of different shapes
    (broadcasting), a 0-dim tensor, an expanded one (a zero stride)."""
    tensors = [t for t in sample_tensors(torch, sample) if t.numel() > 0]
    return (
        any(not t.is_contiguous() for t in tensors),
        len({tuple(t.shape) for t in tensors}) > 1,
        any(t.dim() == 0 for t in tensors),
        any(0 in t.stride() and t.numel() > 1 for t in tensors),
    )


def reference_samples(torch, op, dtype, samples):
    """Up to REFERENCE_SAMPLES of OpInfo's reference_inputs (broadcasting, non-contiguous, 0-dim, other shapes and
    arguments) that its sample_inputs do not have, of at most MAX_NUMEL elements, finite and within
    REFERENCE_MAX_ABS, every floating tensor of the sample's dtype; first those of a kind of call (sample_structure) the samples lack. Seeded: the same at every
    run."""
    if getattr(op, "reference_inputs_func", None) is None:
        return []
    seen = {sample_signature(torch, s) for s in samples}
    kinds = {sample_structure(torch, s) for s in samples}
    new_kind, other = [], []
    torch.manual_seed(0)
    try:
        for n, sample in enumerate(op.reference_inputs("cpu", dtype, requires_grad=True)):
            if n >= REFERENCE_SCAN or len(new_kind) >= REFERENCE_SAMPLES:
                break
            tensors = sample_tensors(torch, sample)
            if any(t.numel() > MAX_NUMEL for t in tensors) or not all_finite(torch, tensors):
                continue
            if any(
                (t.is_floating_point() or t.is_complex())
                and t.numel()
                and float(t.detach().abs().max()) > REFERENCE_MAX_ABS
                for t in tensors
            ):
                continue
            if any((t.is_floating_point() or t.is_complex()) and t.dtype != dtype for t in tensors):
                continue  # mixed precision (cat's [float64, float64, float16]): a float16 input's finite differences
                # at gradcheck's step are 0, never a fact about the formula
            signature = sample_signature(torch, sample)
            if signature in seen:
                continue
            seen.add(signature)
            kind = sample_structure(torch, sample)
            if kind not in kinds:
                kinds.add(kind)
                new_kind.append(sample)
            elif len(other) < REFERENCE_SAMPLES:
                other.append(sample)
    except Exception:  # an OpInfo whose reference inputs fail to build here: its samples alone
        pass
    return (new_kind + other)[:REFERENCE_SAMPLES]
