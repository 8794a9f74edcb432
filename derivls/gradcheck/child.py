"""The gradcheck child: run by path (`python -I child.py`) by the chosen Python; never imports derivls.

Reads a JSON request line on stdin: {"units": [...], "double_backward": bool, "max_samples": n},
with "library": path.so and "namespace": ns in it, or (so that importing torch and finding OpInfo samples
overlap the compile) in a second line sent once the extension is built; no second line (end of input)
ends the run. Writes JSON lines on stdout: {"event": "torch", ...}, {"event": "samples"} once the samples
are found, then per unit {"event": "unit", "id", "status": "passed"|"failed"|"not-checkable", "reason",
"samples", "inputs": "opinfo"|"schema", "checks": {kind: how many ran}, "failures": [{"kind", "input",
"output", "sample", "dtype", "message"}]} (kind: "backward" gradcheck, "forward" check_forward_ad,
"double-backward" gradgradcheck, run only after the input's backward gradcheck passed), then
{"event": "done"}.
"""

import json
import sys
import traceback


def emit(obj):
    sys.stdout.write(json.dumps(obj) + "\n")
    sys.stdout.flush()


def main():
    request = json.loads(sys.stdin.readline())
    import torch

    emit({"event": "torch", "version": torch.__version__})
    try:
        import torch.testing._internal.common_methods_invocations  # noqa: F401 (OpInfo's op_db)
    except ImportError as e:  # the torch wheel does not require what its test database imports
        emit(
            {
                "event": "setup-error",
                "message": f"torch's OpInfo database (torch.testing._internal) needs the module {e.name or e}: "
                f"install numpy and expecttest for {sys.executable} (pip install numpy expecttest)",
            }
        )
        return
    samples = find_samples(torch, request["units"], request.get("max_samples", 6))
    emit({"event": "samples"})
    if "library" not in request:
        line = sys.stdin.readline()
        if not line.strip():
            return  # the build failed or was cancelled
        request.update(json.loads(line))
    torch.ops.load_library(request["library"])
    ns = getattr(torch.ops, request["namespace"])
    for unit in request["units"]:
        try:
            emit(check_unit(torch, ns, unit, samples.get(unit["id"]), request))
        except Exception as e:  # a harness error is a fact about this unit, not a crash of the run
            emit(
                {
                    "event": "unit",
                    "id": unit["id"],
                    "status": "not-checkable",
                    "reason": f"harness error: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                    "detail": traceback.format_exc()[-1500:],
                    "failures": [],
                }
            )
    emit({"event": "done"})


# --- samples: OpInfo's, at the level of the aten overload they reach


def find_samples(torch, units, limit):
    """{unit id: [sample]} from OpInfo samples whose call reaches the overload; a sample is a dict: dtype, args,
    kwargs (the aten call's), origin (the OpInfo), skip (the kinds of check OpInfo skips or expects to fail for
    it: "backward", "forward", "double-backward"), transforms ({argument index: function}: what OpInfo's
    gradcheck_wrapper does to an input, e.g. `input + input.mH` for ops taking Hermitian matrices)."""
    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    wanted = {}
    for unit in units:
        packet = getattr(torch.ops.aten, unit["aten"], None)
        overload = getattr(packet, unit["overload"], None) if packet is not None else None
        if overload is not None:
            wanted.setdefault(overload, []).append(unit["id"])
    found = {uid: [] for ids in wanted.values() for uid in ids}

    def clone(x):
        return x.detach().clone() if isinstance(x, torch.Tensor) else x

    class Record(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.calls = []

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in wanted:
                self.calls.append((func, tree_map(clone, args), tree_map(clone, kwargs)))
            return func(*args, **kwargs)

    bases = {}
    backward_bases = {}  # log_sigmoid -> the units of log_sigmoid_backward: reached by the op's backward
    for unit in units:
        base = unit["aten"].rstrip("_")
        bases.setdefault(base, set()).add(unit["id"])
        bases.setdefault(base.lstrip("_"), set()).add(unit["id"])
        if "_backward" in unit["aten"] and unit["id"] in found:
            backward_bases.setdefault(unit["aten"].replace("_backward", "", 1).strip("_"), set()).add(unit["id"])
    for op in op_db:
        names = {op.name, op.aten_name or op.name, *(a.name for a in getattr(op, "aliases", ()))}
        through_backward = set().union(*(backward_bases.get(n.strip("_"), set()) for n in names))
        if not any(n in bases for n in names) and not through_backward:
            continue
        ids = set().union(*(bases[n] for n in names if n in bases)) | through_backward
        if all(len(found[i]) >= limit for i in ids if i in found):
            continue
        dtypes = [torch.float64]
        try:
            if torch.complex128 in op.supported_backward_dtypes("cpu"):
                dtypes.append(torch.complex128)
        except Exception:
            pass
        if not op.supports_autograd:
            continue
        origin = f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}"
        for dtype in dtypes:
            torch.manual_seed(0)  # as test_ops seeds each test: an op's samples do not depend on the selection
            try:
                inputs = list(op.sample_inputs("cpu", dtype, requires_grad=bool(through_backward)))
            except Exception:
                continue
            skip = opinfo_skips(torch, op, dtype)
            for sample in inputs:
                record = Record()
                try:
                    with record:  # through OpInfo's gradcheck_wrapper, as test_ops calls it (it may add arguments)
                        wrap = getattr(op, "gradcheck_wrapper", None)
                        if wrap is None:
                            out = op(sample.input, *sample.args, **sample.kwargs)
                        else:
                            out = wrap(op, sample.input, *sample.args, **sample.kwargs)
                except Exception:
                    continue
                forward_calls = len(record.calls)
                if through_backward:  # the *_backward functions its backward calls (test_fn_gradgrad's)
                    try:
                        with record:
                            backward_of(torch, out, sample)
                    except Exception:
                        pass
                transforms = wrapper_transforms(torch, op, sample)
                for index, (func, args, kwargs) in enumerate(record.calls):
                    # a call made by the backward is a sample for the *_backward units only
                    targets = [u for u in wanted[func] if index < forward_calls or u in through_backward]
                    if not targets:
                        continue
                    direct = func._schema.name.split("::")[-1].strip("_") in {n.strip("_") for n in names}
                    if index >= forward_calls:
                        direct = True  # (called by the op's own backward: a wrapper's input change is upstream)
                    why = None
                    if largest_tensor(torch, (args, kwargs)) > MAX_NUMEL:
                        # a dense gradcheck of it would not fit (grid_sampler_3d: 5 million elements)
                        why = f"too large for a dense gradcheck (a tensor of over {MAX_NUMEL} elements)"
                    elif not all_finite(torch, (args, kwargs)):
                        why = "not finite (finite differences at nan or inf mean nothing)"
                    elif transforms is None or (transforms and not direct):
                        why = f"made for OpInfo's gradcheck_wrapper ({getattr(op.gradcheck_wrapper, '__name__', '?')})"
                    if why is not None:
                        for uid in targets:
                            DROPPED.setdefault(uid, why)
                        continue
                    for uid in targets:
                        if len(found[uid]) < limit * len(dtypes):
                            found[uid].append(
                                {
                                    "dtype": dtype,
                                    "args": args,
                                    "kwargs": kwargs,
                                    "origin": origin,
                                    "skip": skip,
                                    "transforms": transforms,
                                    "from_backward": index >= forward_calls,
                                }
                            )
    return found


GRADIENT_TESTS = {  # test_ops' tests of each kind of check (TestGradients before 2.1)
    "backward": (("TestBwdGradients", "test_fn_grad"), ("TestGradients", "test_fn_grad")),
    "forward": (("TestFwdGradients", "test_forward_mode_AD"), ("TestGradients", "test_forward_mode_AD")),
    "double-backward": (("TestBwdGradients", "test_fn_gradgrad"), ("TestGradients", "test_fn_gradgrad")),
}


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


def same(torch, a, b):
    """Two results of the op on the same input are equal (nan where nan)."""
    a = a if isinstance(a, (tuple, list)) else (a,)
    b = b if isinstance(b, (tuple, list)) else (b,)
    with torch.no_grad():
        return len(a) == len(b) and all(
            x.shape == y.shape and bool(torch.isclose(x, y, rtol=0, atol=0, equal_nan=True).all()) for x, y in zip(a, b)
        )


def intermediate_input(torch, overload, unit, values, slots, kernels, request, sample):
    """An input of the sample whose backward formula is not_implemented() (layer norm's mean and rstd)."""
    backward, forward = kernels
    if backward is None:
        return False
    for leaf in reversed(slots):
        if leaf["bw_bit"] is None:
            continue
        try:
            run_check(torch, overload, unit, values, leaf, "backward", backward, forward, request, sample["transforms"])
        except FormulaNotImplemented:
            return True
        except Exception:
            continue
    return False


def has_fixed_float(torch, unit, values):
    """A floating-point tensor argument the entry has no formula for (held fixed while an input varies)."""
    wrt = {name for name, _ in unit["wrt"]}
    for name, value in zip(unit["args"], values):
        if name not in wrt and isinstance(value, torch.Tensor) and (value.is_floating_point() or value.is_complex()):
            return True
    return False


def backward_of(torch, out, sample):
    """Run the backward of an OpInfo sample's outputs (seeded random output grads), so the *_backward functions
    it calls are recorded."""
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor)]
    outs = [o for o in outs if o.requires_grad]
    leaves = []
    for value in [sample.input, *sample.args, *sample.kwargs.values()]:
        for t in value if isinstance(value, (tuple, list)) else (value,):
            if isinstance(t, torch.Tensor) and t.requires_grad:
                leaves.append(t)
    if outs and leaves:
        grads = [torch.randn_like(o) for o in outs]
        torch.autograd.grad(outs, leaves, grads, allow_unused=True)


def all_finite(torch, tree):
    if isinstance(tree, torch.Tensor):
        return not (tree.is_floating_point() or tree.is_complex()) or bool(torch.isfinite(tree).all())
    if isinstance(tree, (list, tuple)):
        return all(all_finite(torch, x) for x in tree)
    if isinstance(tree, dict):
        return all(all_finite(torch, x) for x in tree.values())
    return True


# A dense gradcheck builds a (numel in) x (numel out) Jacobian and runs the op once per input element: samples
# with a larger tensor are not used, and a check whose Jacobian would be larger is not run.
MAX_NUMEL = 4096
MAX_JACOBIAN = 2_000_000
CHECK_SECONDS = 120  # one gradcheck (a sample, an input, a kind) taking longer is stopped


class TooLarge(Exception):
    pass


class TooSlow(Exception):
    pass


class NotDeterministic(Exception):
    pass


class FormulaNotImplemented(Exception):
    pass


class NotFinite(Exception):
    pass


class GaugeDependent(Exception):
    pass


DROPPED: "dict[str, str]" = {}  # unit id -> why every OpInfo sample reaching it was left out (find_samples)


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
        if isinstance(x, torch.Tensor):
            return f"Tensor{list(x.shape)} {str(x.dtype).replace('torch.', '')}"
        if isinstance(x, (list, tuple)):
            return "[" + ", ".join(one(y) for y in x) + "]"
        return repr(x)

    text = ", ".join(one(a) for a in args)
    if kwargs:
        text += ", " + ", ".join(f"{k}={one(v)}" for k, v in kwargs.items())
    return text


SCHEMA_VALUES = {"number": 0.75, "Scalar": 0.75, "float": 0.5, "int": 1, "SymInt": 1, "bool": False}


def schema_samples(torch, unit, overload):
    """Inputs made from the schema: a 3x4 double tensor per Tensor argument (seeded, in [0.2, 0.9]), defaults
    elsewhere, else a plain value for a Scalar (0.75), float (0.5), int (1) or bool (False)."""
    args = []
    generator = torch.Generator().manual_seed(0)
    for a in overload._schema.arguments:
        t = str(a.type)
        if t in ("Tensor", "Optional[Tensor]", "Tensor?"):  # in [0.2, 0.9]: inside most ops' domains
            args.append(torch.rand(3, 4, dtype=torch.float64, generator=generator) * 0.7 + 0.2)
        elif a.has_default_value():
            args.append(a.default_value)
        elif t in SCHEMA_VALUES:
            args.append(SCHEMA_VALUES[t])
        else:
            return []
    return [
        {
            "dtype": torch.float64,
            "args": tuple(args),
            "kwargs": {},
            "origin": "schema-made",
            "skip": {},
            "transforms": {},
        }
    ]


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


# --- the check


def check_unit(torch, ns, unit, found, request):
    packet = getattr(torch.ops.aten, unit["aten"], None)
    overload = getattr(packet, unit["overload"], None) if packet is not None else None
    result = {"event": "unit", "id": unit["id"], "failures": [], "samples": 0, "inputs": "opinfo"}
    if overload is None:
        return {
            **result,
            "status": "not-checkable",
            "reason": f"the installed torch has no aten::{unit['aten']}.{unit['overload']}",
        }
    if not found and unit["id"] in DROPPED:
        return {
            **result,
            "status": "not-checkable",
            "reason": f"every OpInfo sample reaching it is {DROPPED[unit['id']]}",
        }
    if not found:
        found = schema_samples(torch, unit, overload)
        result["inputs"] = "schema"
    if not found:
        return {
            **result,
            "status": "not-checkable",
            "reason": "no OpInfo sample reaches this overload, and its schema needs values",
        }
    backward = getattr(ns, unit["backward"]) if unit.get("backward") else None
    forward = getattr(ns, unit["forward"]) if unit.get("forward") else None
    failures = {}
    checked = 0
    counts = {}
    errors = []
    skipped = []
    gauge = set()
    for sample in found:
        dtype, args, kwargs = sample["dtype"], sample["args"], sample["kwargs"]
        values = positional(overload, args, kwargs)
        slots = leaf_slots(torch, unit, values)
        if not slots:
            continue
        sample_text = f"{sample['origin']}: ({describe(torch, args, kwargs)})"
        if sample.get("from_backward") and (
            has_fixed_float(torch, unit, values)
            or intermediate_input(torch, overload, unit, values, slots, (backward, forward), request, sample)
        ):
            skipped.append(
                "reached through a backward, with a floating tensor argument without a formula or with a "
                "not_implemented() one (a forward intermediate: log_sigmoid's buffer, layer norm's mean and rstd): "
                "varying the other inputs alone is not what test_fn_gradgrad checks"
            )
            continue
        for leaf in slots:
            modes = []
            if backward is not None and leaf["bw_bit"] is not None:
                modes.append("backward")
            if forward is not None and leaf["fw_index"] is not None and not leaf["in_list"]:
                modes.append("forward")
            for mode in modes:
                key = (mode, leaf["name"])
                if key in failures:
                    continue
                if mode in sample["skip"]:
                    skipped.append(sample["skip"][mode])
                    continue
                if id(sample) in gauge:  # (its forward formula's vectors are in another gauge than the kernel's)
                    continue
                try:
                    ok, message, output = run_check(
                        torch, overload, unit, values, leaf, mode, backward, forward, request, sample["transforms"]
                    )
                except TooLarge as e:
                    skipped.append(f"too large for a dense gradcheck ({e})")
                    continue
                except TooSlow:
                    skipped.append(f"too slow: a gradcheck took over {CHECK_SECONDS} s")
                    continue
                except NotDeterministic:
                    skipped.append("random: two calls of the op on the same input differ")
                    continue
                except NotFinite:
                    skipped.append("the op's output at the sample is not finite")
                    continue
                except GaugeDependent:
                    # singular vectors / eigenvectors are defined up to a phase: gradcheck's random output grads
                    # make the loss depend on it (the formula says so); test_ops checks gauge-invariant functions
                    skipped.append("gauge: a loss of its singular/eigen vectors with random grads is ill-defined")
                    gauge.add(id(sample))
                    continue
                except FormulaNotImplemented as e:
                    skipped.append(f"the formula is not_implemented(): {e}")
                    continue
                except Exception as e:
                    errors.append(f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
                    continue
                checked += 1
                counts[mode] = counts.get(mode, 0) + 1
                if ok and mode == "backward" and request.get("double_backward"):
                    modes.append("double-backward")  # only after the first derivative passed
                if not ok:
                    failures[key] = {
                        "kind": mode,
                        "input": leaf["name"],
                        "output": output,
                        "sample": sample_text,
                        "dtype": str(dtype).replace("torch.", ""),
                        "message": message,
                    }
    result["samples"] = len(found)
    result["checks"] = counts
    result["failures"] = list(failures.values())
    if failures and result["inputs"] == "schema":
        # inputs made from the schema are a guess (outside the op's domain, quantization parameters making the
        # output constant...): a disagreement there is not evidence of a wrong formula
        first = result["failures"][0]
        result["failures"] = []
        result["status"] = "not-checkable"
        result["reason"] = (
            "inputs made from the schema: gradcheck disagrees there, which is not evidence of a mistake "
            f"({first['kind']} for {first['input']}: {first['message'].strip().splitlines()[0][:160]})"
        )
        return result
    if failures:
        result["status"] = "failed"
    elif checked:
        result["status"] = "passed"
    else:
        result["status"] = "not-checkable"
        if errors and result["inputs"] == "schema":
            result["reason"] = "inputs made from the schema do not fit the op: " + errors[0]
        elif errors:
            result["reason"] = "every check errored: " + errors[0]
        elif skipped:
            result["reason"] = "every check was skipped: " + skipped[0]
        else:
            result["reason"] = "no sample has a differentiable input"
    if errors:
        result["errors"] = errors[:5]
    return result


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


def run_check(torch, overload, unit, values, leaf, mode, backward, forward, request, transforms=None):
    """gradcheck of the real op with this leaf varying: (passed, message, output name)."""
    base = list(values)
    outputs_names = unit["outputs"]
    grads_of = unit["grads"]

    kwarg_only = [a.kwarg_only for a in overload._schema.arguments]
    returns = overload._schema.returns
    # a function returning Tensor[] (split, unbind): the node gets a grad per element, and the list as one output
    list_return = len(returns) == 1 and str(returns[0].type) in ("List[Tensor]", "Tensor[]")

    def differentiable(i):
        return list_return or i in grads_of

    def with_leaf(x):
        args = list(base)
        if leaf["item"] is None:
            args[leaf["arg"]] = x
        else:
            items = list(args[leaf["arg"]])
            items[leaf["item"]] = x
            args[leaf["arg"]] = items
        return args

    def call(args):
        """The real op: its keyword-only arguments by name."""
        names = [a.name for a in overload._schema.arguments]
        positional = [v for v, k in zip(args, kwarg_only) if not k]
        keywords = {n: v for n, v, k in zip(names, args, kwarg_only) if k}
        with torch.random.fork_rng(devices=[]):  # a random op (bernoulli, normal): the same draw at every call
            torch.manual_seed(0)
            return overload(*positional, **keywords)

    def as_tuple(out):
        return tuple(out) if isinstance(out, (tuple, list)) else (out,)

    class F(torch.autograd.Function):
        @staticmethod
        def forward(x):
            outs = as_tuple(call(with_leaf(x)))
            return tuple(o.clone() for o in outs)

        @staticmethod
        def setup_context(ctx, inputs, output):
            ctx.set_materialize_grads(False)
            (x,) = inputs
            non_diff = [
                o
                for i, o in enumerate(output)
                if not differentiable(i) or not (o.is_floating_point() or o.is_complex())
            ]
            if non_diff:
                ctx.mark_non_differentiable(*non_diff)
            ctx.save_for_backward(x, *output)
            ctx.save_for_forward(x, *output)

        @staticmethod
        def backward(ctx, *gouts):
            x, *outs = ctx.saved_tensors
            grads = list(gouts) if list_return else [gouts[i] for i in grads_of]
            res = backward(*with_leaf(x), *([outs] if list_return else outs), grads, 1 << leaf["bw_bit"])
            g = res[leaf["bw_bit"]] if leaf["bw_bit"] < len(res) else None
            return g

        @staticmethod
        def jvp(ctx, x_t):
            x, *outs = ctx.saved_tensors
            tangents = [None] * len(unit["fw_inputs"])
            tangents[leaf["fw_index"]] = x_t
            res = forward(*with_leaf(x), *outs, tangents)
            return tuple(r if i in grads_of else None for i, r in enumerate(res))

    value = base[leaf["arg"]] if leaf["item"] is None else base[leaf["arg"]][leaf["item"]]
    x = value.detach().clone().requires_grad_(True)
    # OpInfo's gradcheck_wrapper (a Hermitian or triangular input): the op sees transform(x), as in test_ops
    transforms = transforms or {}
    with torch.no_grad():
        for i, transform in transforms.items():
            if i != leaf["arg"] and i < len(base):
                base[i] = transform(base[i])
    own = transforms.get(leaf["arg"]) if leaf["item"] is None else None

    def fn(x):
        outs = F.apply(own(x) if own is not None else x)
        if list_return:
            return tuple(outs)
        return tuple(outs[i] for i in grads_of) if len(outs) > 1 else outs

    outs = fn(x)  # the real op on this sample: an error here is the sample's, not a formula's (raised to the caller)
    if not same(torch, outs, fn(x)):
        raise NotDeterministic()
    if not all_finite(torch, list(outs) if isinstance(outs, (tuple, list)) else [outs]):
        raise NotFinite()
    size = x.numel() * sum(o.numel() for o in (outs if isinstance(outs, (tuple, list)) else (outs,)))
    if size > MAX_JACOBIAN:
        raise TooLarge(f"a {size}-element Jacobian")
    with time_limit(CHECK_SECONDS):
        return _gradcheck(torch, fn, x, mode, outputs_names, grads_of)


def time_limit(seconds):
    """A context stopping its body with TooSlow after `seconds` (SIGALRM: the child runs checks in its main
    thread; elsewhere no limit)."""
    import contextlib
    import signal
    import threading

    if threading.current_thread() is not threading.main_thread() or not hasattr(signal, "SIGALRM"):
        return contextlib.nullcontext()

    @contextlib.contextmanager
    def limit():
        def stop(signum, frame):
            raise TooSlow()

        previous = signal.signal(signal.SIGALRM, stop)
        signal.alarm(seconds)
        try:
            yield
        finally:
            signal.alarm(0)
            signal.signal(signal.SIGALRM, previous)

    return limit()


def _gradcheck(torch, fn, x, mode, outputs_names, grads_of):
    """(passed, message, output name) of one gradcheck / gradgradcheck."""
    from torch.autograd.gradcheck import GradcheckError

    try:
        if mode == "double-backward":  # the backward formula's own derivatives (its gradcheck passed)
            torch.autograd.gradgradcheck(fn, (x,), check_undefined_grad=False, raise_exception=True)
        else:
            torch.autograd.gradcheck(
                fn,
                (x,),
                check_forward_ad=mode == "forward",
                check_backward_ad=mode == "backward",
                check_undefined_grad=mode == "backward",
                check_batched_grad=False,
                raise_exception=True,
            )
    except GradcheckError as e:
        message = str(e)
        output = None
        import re

        m = re.search(r"for output (\d+)", message)
        if m:
            idx = int(m.group(1))
            names = [outputs_names[i] for i in grads_of] if len(grads_of) > 1 else outputs_names
            output = names[idx] if idx < len(names) else None
        worst = largest_mismatch(torch, fn, x, int(m.group(1)) if m else 0, mode) if mode != "double-backward" else ""
        return False, (worst + "\n" + message.strip().splitlines()[0] if worst else summarize(message)), output
    except TooSlow:
        raise
    except RuntimeError as e:
        if "ill-defined" in str(e) or "e^{i phi}" in str(e):  # linalg_svd / linalg_eig's own check
            raise GaugeDependent() from None
        if "is not implemented" in str(e):  # not_implemented("chunk"): the entry says it has no derivative
            raise FormulaNotImplemented(str(e).splitlines()[0][:200]) from None
        return False, f"the formula raised RuntimeError: {summarize(str(e))}", None
    except NotImplementedError as e:
        if "is not implemented" in str(e):  # not_implemented("geqrf"): the entry says it has no derivative
            raise FormulaNotImplemented(str(e).splitlines()[0][:200]) from None
        return False, f"the formula raised NotImplementedError: {summarize(str(e))}", None
    except Exception as e:  # the formula raised (a wrong shape, an impossible broadcast...)
        if "helper not reachable" in str(e):
            raise
        return False, f"the formula raised {type(e).__name__}: {summarize(str(e))}", None
    return True, "", None


def largest_mismatch(torch, fn, x, output, mode):
    """'largest mismatch: element i of the input, j of the output: numerical N, analytical A' (real inputs only)."""
    if x.is_complex() or x.numel() > 400:
        return ""
    try:
        x0 = x.detach()

        def pick(v):
            outs = fn(v)
            return outs[output] if isinstance(outs, (tuple, list)) else outs

        with torch.no_grad():
            y0 = pick(x0)
        if y0.is_complex() or y0.numel() > 400:
            return ""
        eps = 1e-6
        numerical = torch.zeros(y0.numel(), x0.numel(), dtype=torch.float64)
        flat = x0.reshape(-1)
        with torch.no_grad():
            for i in range(x0.numel()):
                plus, minus = flat.clone(), flat.clone()
                plus[i] += eps
                minus[i] -= eps
                numerical[:, i] = ((pick(plus.reshape(x0.shape)) - pick(minus.reshape(x0.shape))) / (2 * eps)).reshape(
                    -1
                )
        if mode == "forward":
            import torch.autograd.forward_ad as fwAD

            columns = []
            for i in range(x0.numel()):
                tangent = torch.zeros_like(flat)
                tangent[i] = 1
                with fwAD.dual_level():
                    y = pick(fwAD.make_dual(x0, tangent.reshape(x0.shape)))
                    t = fwAD.unpack_dual(y).tangent
                columns.append(t.reshape(-1) if t is not None else torch.zeros(y0.numel(), dtype=torch.float64))
            jac = torch.stack(columns, 1)
        else:
            jac = torch.autograd.functional.jacobian(pick, x0, vectorize=False)
        analytical = jac.reshape(y0.numel(), x0.numel()).to(torch.float64)
        diff = (numerical - analytical).abs()
        j, i = divmod(int(diff.argmax()), x0.numel())
        return (
            f"largest mismatch: d output[{j}] / d input[{i}] (input value {flat[i].item():.6g}): "
            f"numerical {numerical[j, i].item():.6g}, analytical {analytical[j, i].item():.6g}"
        )
    except Exception:
        return ""


def summarize(message):
    lines = [line for line in message.strip().splitlines() if line.strip()]
    text = "\n".join(lines[:4])
    return text[:500]


if __name__ == "__main__":
    main()
