"""The gradcheck child: run by path (`python -I child.py`) by the chosen Python; never imports derivls.

Reads a JSON request line on stdin: {"units": [...], "double_backward": bool, "max_samples": n, "reach":
{aten overload: [OpInfo]} or null (then it is made and sent: {"event": "reach-index", "index": ...}), with "library": path.so and "namespace": ns in it, or (so that importing torch and finding OpInfo samples
overlap the compile) in a second line sent once the extension is built; no second line (end of input)
ends the run. Writes JSON lines on stdout: {"event": "torch", ...}, {"event": "samples"} once the samples
are found, then per unit {"event": "unit", "id", "status": "passed"|"failed"|"not-checkable", "reason",
"samples", "inputs": "opinfo"|"schema", "checks": {kind: how many ran}, "unstable": special points left out, "failures": [{"kind", "input",
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
    index = request.get("reach")
    if index is None:  # none kept for this torch build: made once (every OpInfo's samples), kept by the parent
        index = reach_index(torch)
        emit({"event": "reach-index", "index": index})
    samples = find_samples(torch, request["units"], request.get("max_samples", 6), index)
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
    line = sys.stdin.readline()  # the repair phase: one more extension to check, or end of input
    if line.strip():
        check_repairs(torch, json.loads(line), samples, request)


def check_repairs(torch, repairs, samples, request):
    """The repair phase (derivls/gradcheck/trials.py): {"library", "namespace", "units"}, each unit a candidate
    repair of the failed unit `like` (its samples, and the samples made from them, once per `like`), stopped at
    its first failure (`first_failure`). Emits one "unit" per candidate, then {"event": "done"}."""
    torch.ops.load_library(repairs["library"])
    ns = getattr(torch.ops, repairs["namespace"])
    found = {}
    for unit in repairs["units"]:
        like = unit.get("like")
        if like not in found:
            base = samples.get(like) or []
            packet = getattr(torch.ops.aten, unit["aten"], None)
            overload = getattr(packet, unit["overload"], None) if packet is not None else None
            try:
                made = variants(torch, overload, unit, base) if base and overload is not None else []
                found[like] = list(base) + inplace_fit(torch, overload, unit, made)
            except Exception:
                found[like] = list(base)
        try:
            event = check_unit(torch, ns, unit, found[like], {**request, "variants": False})
        except Exception as e:
            event = {
                "event": "unit",
                "id": unit["id"],
                "status": "not-checkable",
                "failures": [],
                "reason": str(e)[:300],
            }
        emit(event)
    emit({"event": "done"})


# --- samples: OpInfo's, at the level of the aten overload they reach


def find_samples(torch, units, limit, reach=None):
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
        overload = sample_overload(torch, unit, overload)
        if overload is not None:
            wanted.setdefault(overload, []).append(unit["id"])
    found = {uid: [] for ids in wanted.values() for uid in ids}
    overload_of = {uid: overload_name(func) for func, ids in wanted.items() for uid in ids}

    def clone(x):
        return x.detach().clone() if isinstance(x, torch.Tensor) else x

    class Record(TorchDispatchMode):
        def __init__(self, lineage=False):
            super().__init__()
            self.calls = []
            self.lineage = [] if lineage else None  # every call (a *_backward unit's forward intermediates)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in wanted:
                self.calls.append((func, tree_map(clone, args), tree_map(clone, kwargs)))
            if self.lineage is not None:
                return lineage_call(torch, self, func, args, kwargs, func in wanted)
            return func(*args, **kwargs)

    bases = {}
    backward_bases = {}  # log_sigmoid -> the units of log_sigmoid_backward: reached by the op's backward
    for unit in units:
        base = unit["aten"].rstrip("_")
        bases.setdefault(base, set()).add(unit["id"])
        bases.setdefault(base.lstrip("_"), set()).add(unit["id"])
        if "_backward" in unit["aten"] and unit["id"] in found:
            backward_bases.setdefault(unit["aten"].replace("_backward", "", 1).strip("_"), set()).add(unit["id"])

    wrt_of = {unit["id"]: {name for name, _ in unit["wrt"]} for unit in units}
    WRT_OF.update(wrt_of)

    def differentiable(func, uid, args, kwargs):
        """A non-empty floating tensor in an argument the unit has a formula for."""
        for a, v in zip(func._schema.arguments, positional(func, args, kwargs)):
            if a.name in wrt_of.get(uid, ()):
                items = v if isinstance(v, (list, tuple)) else [v]
                if any(
                    isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) and t.numel() > 0
                    for t in items
                ):  # (an empty tensor has nothing to vary: cholesky_inverse's first samples)
                    return True
        return False

    def visit(op, names, ids, through_backward, only=None, reached=False):
        """Record the calls of the op's samples (float64, and complex128 when its backward supports it) that
        reach a wanted overload (only the units `only` when given)."""
        dtypes = [torch.float64]
        try:
            if torch.complex128 in op.supported_backward_dtypes("cpu"):
                dtypes.append(torch.complex128)
        except Exception:
            pass
        if not op.supports_autograd:
            return
        origin = f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}"
        for dtype in dtypes:
            torch.manual_seed(0)  # as test_ops seeds each test: an op's samples do not depend on the selection
            try:
                # requires_grad=True as test_ops' gradient tests ask: an OpInfo leaves out the samples whose
                # gradient differs from finite differences by design then (embedding's padding_idx)
                inputs = list(op.sample_inputs("cpu", dtype, requires_grad=True))
            except Exception:
                continue
            reference = reference_samples(torch, op, dtype, inputs)  # (kept beyond `limit`: REFERENCE_SAMPLES)
            inputs += reference
            skip = opinfo_skips(torch, op, dtype)
            for sample in inputs:
                record = Record(lineage=bool(through_backward))
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
                    targets = [
                        u for u in targets if (only is None or u in only) and differentiable(func, u, args, kwargs)
                    ]
                    if not targets:
                        continue
                    direct = func._schema.name.split("::")[-1].strip("_") in {n.strip("_") for n in names}
                    if index >= forward_calls:
                        direct = True  # (called by the op's own backward: a wrapper's input change is upstream)
                    why = None
                    if largest_tensor(torch, (args, kwargs)) > MAX_NUMEL:
                        # a dense gradcheck of it would not fit (grid_sampler_3d: 5 million elements)
                        why = f"too large for a dense gradcheck (a tensor of over {MAX_NUMEL} elements)"
                    elif not all_strided(torch, (args, kwargs)):
                        why = "of a sparse or nested layout (a dense gradcheck of strided tensors only)"
                    elif not all_finite(torch, (args, kwargs)):
                        why = "not finite (finite differences at nan or inf mean nothing)"
                    elif transforms is None or (transforms and not direct):
                        why = f"made for OpInfo's gradcheck_wrapper ({getattr(op.gradcheck_wrapper, '__name__', '?')})"
                    if why is not None:
                        for uid in targets:
                            DROPPED.setdefault(uid, why)
                        continue
                    for uid in targets:  # up to `limit` per dtype
                        if has_room(found[uid], dtype, limit, any(sample is r for r in reference)):
                            found[uid].append(
                                {
                                    "dtype": dtype,
                                    "args": args,
                                    "kwargs": kwargs,
                                    "origin": origin
                                    + (" (reference_inputs)" if any(sample is r for r in reference) else ""),
                                    "reference": any(sample is r for r in reference),
                                    "skip": skip,
                                    "transforms": transforms,
                                    "from_backward": index >= forward_calls,
                                    # a call inside another op (corrcoef's clamp at exactly 1): check its points
                                    "points": reached,
                                    **backward_lineage(torch, record, index, func, args, kwargs, sample, forward_calls),
                                }
                            )

    by_key = {}
    for op in op_db + foreach_infos():  # (torch keeps the foreach functions' OpInfos apart from op_db)
        names = {op.name, op.aten_name or op.name, *(a.name for a in getattr(op, "aliases", ()))}
        if op.name.startswith("nn.functional."):  # (nn.functional.elu: its aten_name is not elu)
            names.add(op.name[len("nn.functional.") :])
        by_key[opinfo_key(op)] = (op, names)
        through_backward = set().union(*(backward_bases.get(n.strip("_"), set()) for n in names))
        if not any(n in bases for n in names) and not through_backward:
            continue
        ids = set().union(*(bases[n] for n in names if n in bases)) | through_backward
        if all(opinfo_count(found[i]) >= limit for i in ids if i in found):  # (reference inputs aside)
            continue
        try:  # (samples for these units only: a unit's samples do not depend on the other units selected)
            visit(op, names, ids, through_backward, only=ids)
        except Exception:  # an OpInfo whose samples the harness cannot take apart (sparse layouts): not used
            continue
    # then the units no OpInfo of their name reached: the OpInfos whose samples reach their overload (an internal
    # overload such as _softmax, or one only a composite op calls), in op_db's order
    if reach:
        empty = {uid for uid, samples in found.items() if not samples}
        # first the calls OpInfos' forwards make (small, as the op is called), then, for the units still without
        # samples, those their backwards make (pow.Tensor_Scalar reached by asinh's backward gets 20x20 inputs,
        # too large for special values, where a forward reaches it with the op's own small samples)
        for through in (False, True):
            for key, (op, names) in by_key.items():
                ids = {uid for uid in empty if key in reach.get(overload_of[uid], ())}
                back = {uid for uid in empty if key + REACH_BACKWARD in reach.get(overload_of[uid], ())}
                if through:  # (those its forward reaches were visited in the first pass)
                    ids = back = {uid for uid in back if not found[uid]}
                else:
                    back = set()
                ids = {uid for uid in ids | back if opinfo_count(found[uid]) < limit}
                if ids:  # (the units only its backward reaches: through it, as the *_backward units of its name)
                    try:
                        visit(op, names, ids, back & ids, only=ids, reached=True)
                    except Exception:
                        continue
        module_samples(torch, reach, {uid for uid in empty if not found[uid]}, overload_of, wanted, found, limit)
    return found


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


def sample_overload(torch, unit, overload):
    """The overload whose calls are a unit's samples: an in-place unit's (elu_) are its out-of-place twin's (elu,
    the same arguments), as OpInfo's inplace_variant is tested on the out-of-place op's samples."""
    if not unit.get("inplace") or overload is None:
        return overload
    packet = getattr(torch.ops.aten, unit["aten"].rstrip("_"), None)
    twin = getattr(packet, unit["overload"], None) if packet is not None else None
    if twin is None:
        return overload
    same_args = [str(a.type) for a in twin._schema.arguments] == [str(a.type) for a in overload._schema.arguments]
    return twin if same_args else overload


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


def written_cloned(torch, overload, values):
    """values with every argument the op writes (an in-place op's self) cloned: the op writes the clone."""
    out = list(values)
    for i, a in enumerate(overload._schema.arguments):
        if i < len(out) and a.alias_info is not None and a.alias_info.is_write and isinstance(out[i], torch.Tensor):
            out[i] = out[i].clone()
    return out


def module_samples(torch, reach, empty, overload_of, wanted, found, limit):
    """Samples from ModuleInfo's (float64, the module in training mode) for the units in `empty` that the reach index
    says a module's forward or backward reaches (convolution_backward, batch norm's): added to `found`."""
    from torch.utils._python_dispatch import TorchDispatchMode
    from torch.utils._pytree import tree_map

    def clone(x):
        return x.detach().clone() if isinstance(x, torch.Tensor) else x

    class Record(TorchDispatchMode):
        def __init__(self, lineage=False):
            super().__init__()
            self.calls = []
            self.lineage = [] if lineage else None  # every call (a *_backward unit's forward intermediates)

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            kwargs = kwargs or {}
            if func in wanted:
                self.calls.append((func, tree_map(clone, args), tree_map(clone, kwargs)))
            if self.lineage is not None:
                return lineage_call(torch, self, func, args, kwargs, func in wanted)
            return func(*args, **kwargs)

    for info in module_infos():
        key = REACH_MODULE + info.name
        ids = {uid for uid in empty if key in reach.get(overload_of[uid], ()) and len(found[uid]) < limit}
        back = {uid for uid in empty if key + REACH_BACKWARD in reach.get(overload_of[uid], ())}
        ids |= {uid for uid in back if len(found[uid]) < limit}
        if not ids:
            continue
        torch.manual_seed(0)
        try:
            for run in module_runs(torch, info, MODULE_SAMPLES):
                record = Record(lineage=bool(back & ids))
                try:
                    with record:
                        out, sample = run()
                except Exception:
                    continue
                forward_calls = len(record.calls)
                if back & ids:
                    try:
                        with record:
                            backward_of(torch, out, sample)
                    except Exception:
                        pass
                for index, (func, args, kwargs) in enumerate(record.calls):
                    targets = [
                        u
                        for u in wanted[func]
                        if u in ids and (index < forward_calls or u in back) and has_input(torch, func, u, args, kwargs)
                    ]
                    if not targets:
                        continue
                    why = unusable(torch, (args, kwargs))
                    for uid in targets:
                        if why is not None:
                            DROPPED.setdefault(uid, why)
                        elif len(found[uid]) < limit:
                            found[uid].append(
                                {
                                    "dtype": torch.float64,
                                    "args": args,
                                    "kwargs": kwargs,
                                    "origin": key,
                                    "skip": {},
                                    "transforms": {},
                                    "from_backward": index >= forward_calls,
                                    "points": True,  # (a call inside the module: its points are checked)
                                    **backward_lineage(torch, record, index, func, args, kwargs, sample, forward_calls),
                                }
                            )
        except Exception:  # a ModuleInfo whose samples cannot be made here: not used
            continue


MODULE_SAMPLES = 16  # the ModuleInfo samples run for a unit the reach index says a module reaches


def has_input(torch, func, unit_id, args, kwargs):
    """A non-empty floating tensor in an argument of the call the unit has a formula for (unit ids are
    aten.overload... and the wanted units carry their wrt in WRT_OF)."""
    for a, v in zip(func._schema.arguments, positional(func, args, kwargs)):
        if a.name in WRT_OF.get(unit_id, ()):
            items = v if isinstance(v, (list, tuple)) else [v]
            if any(
                isinstance(t, torch.Tensor) and (t.is_floating_point() or t.is_complex()) and t.numel() > 0
                for t in items
            ):
                return True
    return False


WRT_OF: "dict[str, set[str]]" = {}  # unit id -> the arguments it has formulas for (find_samples fills it)


def unusable(torch, tree):
    """Why a call's arguments cannot be a dense gradcheck's sample (None: they can)."""
    if largest_tensor(torch, tree) > MAX_NUMEL:
        return f"too large for a dense gradcheck (a tensor of over {MAX_NUMEL} elements)"
    if not all_strided(torch, tree):
        return "of a sparse or nested layout (a dense gradcheck of strided tensors only)"
    if not all_finite(torch, tree):
        return "not finite (finite differences at nan or inf mean nothing)"
    return None


def opinfo_key(op):
    """An OpInfo's name in the reach index: name, or name.variant."""
    return f"{op.name}{'.' + op.variant_test_name if op.variant_test_name else ''}"


def overload_name(func):
    """aten::name.overload (name.default for the default overload)."""
    return f"{func._schema.name}.{func._overloadname}"


def reach_index(torch):
    """{aten::name.overload: [source keys]}: the overloads each OpInfo's and ModuleInfo's float64 samples reach at
    the dispatcher, in their forward (through the op's Python wrappers and decompositions) and in the backward of
    their outputs (seeded random output grads: the `*_backward` functions): the key of a source is its OpInfo's
    (name or name.variant) or `module:` and its ModuleInfo's name, with `@backward` when only its backward reaches
    the overload. In op_db's then module_db's order; each source stops after REACH_SOURCE_SECONDS, the whole after
    REACH_SECONDS (what was reached by then is kept). The same for every selection: the parent keeps it per torch
    build."""
    import time

    from torch.testing._internal.common_methods_invocations import op_db
    from torch.utils._python_dispatch import TorchDispatchMode

    class Reached(TorchDispatchMode):
        def __init__(self):
            super().__init__()
            self.seen = set()

        def __torch_dispatch__(self, func, types, args=(), kwargs=None):
            self.seen.add(func)
            return func(*args, **(kwargs or {}))

    index = {}
    deadline = time.monotonic() + REACH_SECONDS

    def add(key, calls):
        forward, backward = calls
        for func, suffix in [*((f, "") for f in forward), *((f, REACH_BACKWARD) for f in backward - forward)]:
            if getattr(func, "namespace", "aten") == "aten":
                index.setdefault(overload_name(func), []).append(key + suffix)

    for op in op_db:
        if not op.supports_autograd or time.monotonic() > deadline:
            continue
        torch.manual_seed(0)
        add(opinfo_key(op), reach_source(torch, Reached, opinfo_runs(torch, op, REACH_SAMPLES)))
    for info in module_infos():
        if time.monotonic() > deadline:
            break
        torch.manual_seed(0)
        add(REACH_MODULE + info.name, reach_source(torch, Reached, module_runs(torch, info, REACH_SAMPLES)))
    return index


REACH_SAMPLES = 24  # the samples of each OpInfo / ModuleInfo run for the reach index
REACH_SOURCE_SECONDS = 5  # one source's samples (forward and backward) stop after this
REACH_SECONDS = 300  # the whole index stops after this (what was reached by then is kept)
REACH_BACKWARD = "@backward"  # the source's backward reaches the overload (its forward does not)
REACH_MODULE = "module:"  # a ModuleInfo's key


def reach_source(torch, mode, runs):
    """(overloads the forwards reach, overloads the backwards reach) of one source's runs, within
    REACH_SOURCE_SECONDS (a run that raises is left out)."""
    forward, backward = mode(), mode()
    try:
        with time_limit(REACH_SOURCE_SECONDS):
            for run in runs:
                try:
                    with forward:
                        out, sample = run()
                    with backward:
                        backward_of(torch, out, sample)
                except TooSlow:
                    raise
                except Exception:
                    continue
    except Exception:  # (TooSlow, or the source's samples themselves failed: what was reached is kept)
        pass
    return forward.seen, backward.seen


def opinfo_runs(torch, op, limit):
    """Up to `limit` thunks running one of the OpInfo's float64 samples (as test_ops' gradient tests ask for them,
    requires_grad=True): each returns (output, sample)."""
    for n, sample in enumerate(op.sample_inputs("cpu", torch.float64, requires_grad=True)):
        if n >= limit:
            return
        yield lambda sample=sample: (op(sample.input, *sample.args, **sample.kwargs), sample)


def module_infos():
    """torch's ModuleInfo database (empty where the torch has none)."""
    try:
        from torch.testing._internal.common_modules import module_db
    except Exception:
        return []
    return [info for info in module_db if not getattr(info, "is_lazy", False)]


class ModuleSample:
    """A ModuleInfo sample seen as an OpInfo one by backward_of: the forward's inputs and the module's parameters
    (the leaves its backward reaches)."""

    def __init__(self, args, kwargs, parameters):
        self.input = tuple(parameters)
        self.args = tuple(args)
        self.kwargs = dict(kwargs)


def module_runs(torch, info, limit):
    """Up to `limit` thunks running one of the ModuleInfo's float64 samples (the module built in training mode, as
    test_modules' gradient tests do; its construction is not part of the run): each returns (output, sample)."""
    inputs = info.module_inputs_func(info, device="cpu", dtype=torch.float64, requires_grad=True, training=True)
    for n, module_input in enumerate(inputs):
        if n >= limit:
            return
        if module_input.forward_input is None:
            continue
        made = module_input.constructor_input
        try:
            module = info.module_cls(*made.args, **made.kwargs).to(torch.float64)
            module.train()
        except Exception:
            continue
        forward = module_input.forward_input

        def run(module=module, forward=forward):
            out = module(*forward.args, **forward.kwargs)
            return out, ModuleSample(forward.args, forward.kwargs, module.parameters())

        yield run


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
            run_check(
                torch,
                overload,
                unit,
                values,
                leaf,
                "backward",
                backward,
                forward,
                request,
                sample["transforms"],
                lineage=sample.get("lineage"),
            )
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


# --- forward intermediates: a *_backward function's arguments that its forward made (log_sigmoid's buffer, batch
# norm's save_mean / save_invstd, nll_loss's total_weight), computed again from the varied inputs at every call


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


class Unstable(Exception):
    """Finite differences are not reliable at some elements of a sample made with special values (how many)."""


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


# --- inputs made from the schema that the op takes: retries of ranks, shapes, values and index dtypes

CPU_KEYS = ("CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional")


def no_cpu_kernel(torch, overload):
    """Why the op cannot run on dense CPU tensors (it has a kernel for none of CPU_KEYS: a CUDA / MPS / mkldnn /
    sparse / nested-only op), None when it can (or when the dispatcher cannot say)."""
    name = str(overload._schema.name)
    if overload._overloadname != "default":
        name += "." + overload._overloadname
    try:
        if any(torch._C._dispatch_has_kernel_for_dispatch_key(name, key) for key in CPU_KEYS):
            return None
    except Exception:
        return None
    return f"no CPU kernel: {name} has no kernel for dense CPU tensors (only for other backends)"


# (what each retry makes the Tensor arguments: the first one's shape, the others', their dtype, a definite matrix)
SCHEMA_RETRIES = (
    ("3x4", (3, 4), None, None, False),
    ("square matrices", (3, 3), None, None, False),
    ("symmetric positive definite matrices", (3, 3), None, None, True),
    ("rank 1", (4,), None, None, False),
    ("rank 0", (), None, None, False),
    ("a 3x4 tensor and rank-0 others", (3, 4), (), None, False),
    ("rank 3, others one per channel", (2, 3, 4), (3,), None, False),
    ("rank 4, others one per channel", (2, 3, 4, 4), (3,), None, False),
    ("rank 3", (2, 3, 4), None, None, False),
    ("rank 4", (2, 3, 4, 4), None, None, False),
    ("complex 3x4", (3, 4), None, "complex", False),
    ("3x2 (a last dimension of 2)", (3, 2), None, None, False),
    ("a 2-d convolution's input, weight and bias", (1, 2, 5, 5), (3,), "conv2d", False),
    ("a 3-d convolution's input, weight and bias", (1, 2, 5, 5, 5), (3,), "conv3d", False),
    ("a transposed 2-d convolution's", (1, 2, 5, 5), (3,), "conv2d-transposed", False),
    ("a transposed 3-d convolution's", (1, 2, 5, 5, 5), (3,), "conv3d-transposed", False),
    ("an image and a sampling grid", (1, 2, 4, 4), None, "grid", False),
    ("a time, batch, channel input and its convolution", (5, 1, 2), (3,), "tbc", False),
)
RETRY_SECONDS = 5  # one call of the op on a retry's inputs
INDEX_NAMES = ("index", "indices", "target", "lengths", "offsets", "offset2bag", "bag_size", "batch_sizes")


def schema_retry(torch, overload, shape, others, kind, definite):
    """Positional values for one retry (None: the schema needs a value no retry makes)."""
    generator = torch.Generator().manual_seed(0)
    dtype = torch.complex128 if kind == "complex" else torch.float64
    conv = (int(kind[4]), kind.endswith("transposed")) if kind and kind.startswith("conv") else None
    main = None
    values = []
    for a in overload._schema.arguments:
        t = str(getattr(a, "real_type", a.type))  # (ScalarType's type is int, its real type ScalarType)
        if t in ("Tensor", "Optional[Tensor]"):
            size = shape if main is None or others is None else others
            if conv and a.name == "weight":  # (out, in, k, k) or, transposed, (in, out, k, k): a kernel of 2
                size = ((2, 3) if conv[1] else (3, 2)) + (2,) * conv[0]
            if kind == "grid" and a.name == "grid":  # (N, H, W, 2) in [-0.9, 0.9]: inside the image
                size = (1, 3, 3, 2)
            if kind == "tbc" and a.name == "weight":  # (kernel, in channels, out channels)
                size = (2, 2, 3)
            if "mask" in a.name:
                value = torch.rand(size, generator=generator) > 0.3
            elif a.name in INDEX_NAMES and main is not None:
                bound = max(1, main.shape[0] if main.dim() else 1)
                value = torch.randint(0, bound, size, generator=generator, dtype=torch.int64)
            else:
                value = (torch.rand(size, dtype=torch.float64, generator=generator) * 0.7 + 0.2).to(dtype)
                if kind == "grid" and a.name == "grid":
                    value = value * 2.5 - 1.4
                if definite and value.dim() == 2 and value.shape[0] == value.shape[1]:
                    value = value @ value.mT + value.shape[0] * torch.eye(value.shape[0], dtype=dtype)
            main = value if main is None else main
            values.append(value)
        elif conv and t.startswith("List[int]"):  # stride, dilation 1, padding 0, kernel 2 in each spatial dim
            values.append([0 if "padding" in a.name else 2 if "kernel" in a.name else 1] * conv[0])
        elif conv and a.name == "transposed":
            values.append(conv[1])
        elif kind == "grid" and a.name.endswith("_mode"):  # bilinear, zeros
            values.append(0)
        elif a.has_default_value():
            values.append(a.default_value)
        elif t in SCHEMA_VALUES:
            values.append(SCHEMA_VALUES[t])
        elif t.startswith("Optional["):
            values.append(None)
        elif t == "ScalarType":
            values.append(dtype)
        elif t == "List[Optional[Tensor]]" and main is not None and main.dim():  # (indices along the first dim)
            # (distinct: a write through repeated indices keeps one of the values, whichever the kernel likes)
            values.append([torch.randperm(main.shape[0], generator=generator)[:2]])
        elif t.startswith("List[bool]"):
            values.append([True, True, True])
        elif t.startswith("List[int]") and main is not None:
            values.append(schema_int_list(a.name, main))
        else:
            return None
    return values


def schema_int_list(name, main):
    """A guess at an int[] argument from the first tensor: its dims, its stride, its size, a split of its first
    dimension, the spatial size of an upsample."""
    if "stride" in name:
        return list(main.stride())
    if name in ("dim", "dims"):
        return [0]
    if "kernel" in name:
        return [2, 2]
    if "split" in name:
        return [1, main.shape[0] - 1] if main.dim() and main.shape[0] > 1 else [1]
    if name == "output_size":
        return [2 * n for n in main.shape[2:]] if main.dim() > 2 else [2]
    return list(main.shape)


def fitting_schema_samples(torch, unit, overload):
    """Inputs made from the schema (schema_samples), or when the op rejects them (or gives no finite output), the
    first of SCHEMA_RETRIES it takes, each call bounded by RETRY_SECONDS; the first ones when none fits (so the
    reason names what the op said)."""
    first = schema_samples(torch, unit, overload)
    for what, shape, others, kind, definite in SCHEMA_RETRIES:
        try:
            values = schema_retry(torch, overload, shape, others, kind, definite)
        except Exception:
            continue
        if values is None or not leaf_slots(torch, unit, values):
            continue
        if not survives(torch, overload, values):
            continue
        origin = f"schema-made ({what})"
        return [
            {
                "dtype": values_dtype(torch, values),
                "args": tuple(values),
                "kwargs": {},
                "origin": origin,
                "skip": {},
                "transforms": {},
            }
        ]
    return first


def survives(torch, overload, values):
    """The op runs on values and gives a finite, non-empty output, tried in a forked copy of this process first: a
    kernel given shapes it does not check may crash the process (_slow_conv2d_backward segfaults) or not end
    (killed after RETRY_SECONDS). The copy is in this process group and under its limits; it writes nothing."""
    import os
    import signal
    import time

    try:
        pid = os.fork()
    except OSError:
        return False
    if pid == 0:  # (the copy: one thread, no output, ends with its answer as exit status)
        code = 1
        try:
            die_with_parent()
            torch.set_num_threads(1)
            out = flat_output(torch, overload, values)
            code = 0 if out is not None and out.numel() and bool(torch.isfinite(out).all()) else 1
        except BaseException:
            code = 1
        finally:
            os._exit(code)
    deadline = time.monotonic() + RETRY_SECONDS
    while True:
        done, status = os.waitpid(pid, os.WNOHANG)
        if done:
            return os.waitstatus_to_exitcode(status) == 0
        if time.monotonic() > deadline:
            os.kill(pid, signal.SIGKILL)
            os.waitpid(pid, 0)
            return False
        time.sleep(0.002)


def formula_without_cpu_kernel(message):
    """'no CPU kernel: ...' when a formula raised for want of a dense CPU kernel of an op it calls (matmul's
    matmul_backward, a nested-tensor op): a fact about the formula, not a disagreement; None otherwise."""
    import re

    m = re.search(r"Could not run '(aten::[\w.]+)' with arguments from the 'CPU' backend", message)
    if m is None:
        return None
    return f"no CPU kernel: the formula calls {m.group(1)}, which has no kernel for dense CPU tensors"


def die_with_parent():
    """In a forked copy: killed when the child ends (PR_SET_PDEATHSIG, Linux), and at most RETRY_SECONDS of CPU."""
    import resource

    resource.setrlimit(resource.RLIMIT_CPU, (RETRY_SECONDS, RETRY_SECONDS))
    try:
        import ctypes
        import signal

        ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL))  # PR_SET_PDEATHSIG = 1
    except (OSError, AttributeError):
        pass


def values_dtype(torch, values):
    return next((v.dtype for v in values if isinstance(v, torch.Tensor) and v.is_complex()), torch.float64)


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


# --- inputs where mistakes live: variants of OpInfo's first samples (made from them: the same at every run)

# put into floating inputs: zero, units, negatives, points near the edges of common domains ([-1, 1], x > 0)
SPECIAL_REAL = (0.0, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, 1e-3, -1e-3, 0.999, -0.999, 3.0, -3.0)
SPECIAL_COMPLEX = (0j, 1 + 0j, -1 + 0j, 1j, -1j, -1.5 + 0.5j, -0.5 - 1.5j, 0.5 - 0.5j)
VARIANT_BASES = 2  # the first samples of each dtype that get variants
VARIANT_NUMEL = 256  # every differentiable input of a variant has at most this many elements
STEP = 1e-6  # gradcheck's eps
# a point is stable when the one-sided difference quotients agree to gradcheck's own tolerances
STABLE_ATOL, STABLE_RTOL = 1e-5, 1e-3
SCALAR_TYPES = ("Scalar", "float", "complex", "number", "Optional[Scalar]", "Optional[float]", "Scalar?", "float?")


def call_overload(torch, overload, values):
    """The real op on positional values (one per schema argument): keyword-only ones by name, a random op with
    the same seed at every call."""
    values = written_cloned(torch, overload, values)
    arguments = overload._schema.arguments
    args = [v for v, a in zip(values, arguments) if not a.kwarg_only]
    kwargs = {a.name: v for v, a in zip(values, arguments) if a.kwarg_only}
    with torch.random.fork_rng(devices=[]):
        torch.random.default_generator.manual_seed(0)
        return overload(*args, **kwargs)


def flat_output(torch, overload, values):
    """The op's floating outputs as one complex vector, or None when the op raises."""
    try:
        with torch.no_grad():
            out = call_overload(torch, overload, values)
    except Exception:
        return None
    outs = [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor)]
    if not all_strided(torch, outs):
        return None
    parts = [o.detach().reshape(-1).to(torch.complex128) for o in outs if o.is_floating_point() or o.is_complex()]
    return torch.cat(parts) if parts else None


def unstable_elements(torch, overload, values, arg, indices):
    """The elements (flat indices) of the tensor values[arg] at which central differences are not reliable: the
    op's output there or a step either side is not finite, or the one-sided quotients disagree (a kink, a jump, a
    branch cut, a pole close by). Complex elements are stepped along both axes."""
    base = values[arg]
    f0 = flat_output(torch, overload, values)
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
                f = flat_output(torch, overload, shifted)
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
                wide.append(flat_output(torch, overload, shifted))
            if any(w is None or w.shape != f0.shape or not bool(torch.isfinite(w).all()) for w in wide):
                bad.add(i)
                break
            central_wide = (wide[0] - wide[1]) / (4 * abs(step))
            if not bool(((central - central_wide).abs() <= STABLE_ATOL + STABLE_RTOL * central.abs()).all()):
                bad.add(i)
                break
    return bad


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
    return made + structure_of_samples(torch, overload, unit, found)


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

# --- inputs where mistakes live (2): OpInfo's reference inputs; the call's structure (dims, keepdim, flags, indices)

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
    REFERENCE_MAX_ABS; first those of a kind of call (sample_structure) the samples lack. Seeded: the same at every
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


DIM_NAMES = ("dim", "dims", "dim0", "dim1", "dim2", "dimension", "start_dim", "end_dim")
REDUCTIONS = (0, 1, 2)  # an int `reduction` (at::Reduction): None, Mean, Sum
OTHER_STRINGS = {"approximate": ("tanh", "none")}  # a str argument's values, where they are known
OPTIONAL_NUMBER = 0.25  # a Scalar? / float? argument left None (var's correction, logit's eps) gets this value
OPTIONAL_NUMBER_TYPES = ("Optional[number]", "Optional[float]")
# arguments whose other values change the gradient by design (test_ops leaves them out of gradient samples too):
# embedding's padding_idx and scale_grad_by_freq, a sparse gradient, a half-precision result
NOT_MOVED = ("padding_idx", "scale_grad_by_freq", "sparse", "sparse_grad", "half_to_float")


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
    - never an argument that changes the gradient by design (NOT_MOVED: padding_idx, sparse, ...);
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
            moved = index.clone()
            flat = moved.view(-1)
            flat[::2] -= n
            changed_items = list(items)
            changed_items[j] = moved
            changed = list(values)
            changed[i] = changed_items if isinstance(values[i], (list, tuple)) else moved
            out = flat_output(torch, overload, changed)
            if out is not None and out.shape == base.shape and bool(torch.equal(out, base)):
                made.append(
                    variant(sample, changed, f"negative indices in {overload._schema.arguments[i].name}", False)
                )
                break
        break  # (one index tensor: the first)
    return made


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
    if not found and no_cpu_kernel(torch, overload):  # (a fact about the op: nothing to run it on here)
        return {**result, "status": "not-checkable", "reason": no_cpu_kernel(torch, overload)}
    if not found:
        found = fitting_schema_samples(torch, unit, overload)
        result["inputs"] = "schema"
    elif request.get("variants", True):
        found = list(found) + inplace_fit(torch, overload, unit, variants(torch, overload, unit, found))
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
    unstable = UNSTABLE.get(unit["id"], 0)
    stop = unit.get("first_failure")  # (a repair candidate: one failure rules it out)
    for sample in found:
        if stop and failures:
            break
        dtype, args, kwargs = sample["dtype"], sample["args"], sample["kwargs"]
        values = positional(overload, args, kwargs)
        values = foreach_values(torch, unit, values)
        slots = leaf_slots(torch, unit, values)
        if not slots:
            continue
        sample_text = f"{sample['origin']}: ({describe(torch, args, kwargs)})"
        stale = False
        if sample.get("from_backward"):  # (its forward intermediates follow the varied inputs)
            slots, stale = backward_slots(torch, unit, values, slots, sample)
        if sample.get("from_backward") and (
            stale
            or (
                sample.get("lineage") is None  # (known: its intermediates are not varied, they follow the inputs)
                and intermediate_input(torch, overload, unit, values, slots, (backward, forward), request, sample)
            )
        ):
            skipped.append(
                "reached through a backward, with a floating tensor argument without a formula or with a "
                "not_implemented() one (a forward intermediate: log_sigmoid's buffer, layer norm's mean and rstd): "
                "varying the other inputs alone is not what test_fn_gradgrad checks"
            )
            continue
        for leaf in slots:
            if stop and failures:
                break
            modes = []
            if backward is not None and leaf["bw_bit"] is not None:
                modes.append("backward")
            if forward is not None and leaf["fw_index"] is not None and not leaf["in_list"]:
                modes.append("forward")
            for mode in modes:
                key = (mode, leaf["name"])
                if key in failures or (stop and failures):
                    continue
                if mode in sample["skip"]:
                    skipped.append(sample["skip"][mode])
                    continue
                if id(sample) in gauge:  # (its forward formula's vectors are in another gauge than the kernel's)
                    continue
                try:
                    ok, message, output = run_check(
                        torch,
                        overload,
                        unit,
                        values,
                        leaf,
                        mode,
                        backward,
                        forward,
                        request,
                        sample["transforms"],
                        stable_only=bool(sample.get("points")),
                        lineage=sample.get("lineage"),
                    )
                except Unstable as e:
                    unstable += e.args[0]
                    skipped.append("finite differences are not reliable at a special point")
                    continue
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
    if unstable:
        result["unstable"] = unstable  # special points left out: finite differences are not reliable there
    result["failures"] = list(failures.values())
    if failures and result["inputs"] == "schema":
        # inputs made from the schema are a guess (outside the op's domain, quantization parameters making the
        # output constant...): a disagreement there is not evidence of a wrong formula
        first = result["failures"][0]
        result["failures"] = []
        result["status"] = "not-checkable"
        result["reason"] = formula_without_cpu_kernel(first["message"]) or (
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


FOREACH_ITEMS = 2  # the list elements a check of a foreach function keeps, per sample


def foreach_values(torch, unit, values):
    """A foreach function's sample with every list argument (Tensor[], Scalar[]) cut to the same FOREACH_ITEMS
    elements, the smallest non-empty ones of its first list: its formula is one per element, the same for each (and
    the Jacobian of 20 outputs for each of 20 inputs is 20 times the work of one)."""
    if not unit["aten"].startswith("_foreach"):
        return values
    lists = [i for i, v in enumerate(values) if isinstance(v, (list, tuple)) and v]
    if not lists or len({len(values[i]) for i in lists}) != 1:
        return values
    first = values[lists[0]]
    size = [t.numel() if isinstance(t, torch.Tensor) else 1 for t in first]
    keep = sorted(sorted((i for i in range(len(first)) if size[i] > 0), key=lambda i: size[i])[:FOREACH_ITEMS])
    out = list(values)
    for i in lists:
        out[i] = [values[i][k] for k in keep]
    return out


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


def run_check(
    torch,
    overload,
    unit,
    values,
    leaf,
    mode,
    backward,
    forward,
    request,
    transforms=None,
    stable_only=False,
    lineage=None,
):
    """gradcheck of the real op with this leaf varying: (passed, message, output name); stable_only (a sample
    made with special values): Unstable unless finite differences are reliable at every element of the leaf."""
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
        return recomputed(torch, args, lineage) if lineage else args  # (forward intermediates follow x)

    written = {}  # argument index -> its value after the op wrote it, at the last call (noise, running_mean)

    def call(args):
        """The real op: its keyword-only arguments by name (an argument it writes: a clone)."""
        args = written_cloned(torch, overload, args)
        names = [a.name for a in overload._schema.arguments]
        positional = [v for v, k in zip(args, kwarg_only) if not k]
        keywords = {n: v for n, v, k in zip(names, args, kwarg_only) if k}
        with torch.random.fork_rng(devices=[]):  # a random op (bernoulli, normal): the same draw at every call
            # (the CPU generator only: torch.manual_seed also queues a lazy CUDA seeding, a stack trace per call)
            torch.random.default_generator.manual_seed(0)
            out = overload(*positional, **keywords)
        written.clear()
        written.update(written_after(torch, overload, unit, args))
        return out

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
            ctx.derivls_written = dict(written)  # (the buffers the op wrote at x: what VariableType's node reads)

        @staticmethod
        def backward(ctx, *gouts):
            x, *outs = ctx.saved_tensors
            grads = list(gouts) if list_return else [gouts[i] for i in grads_of]
            args = with_leaf(x)
            args = [ctx.derivls_written.get(i, v) for i, v in enumerate(args)]
            res = backward(*args, *([outs] if list_return else outs), grads, 1 << leaf["bw_bit"])
            g = res[leaf["bw_bit"]] if leaf["bw_bit"] < len(res) else None
            return g

        @staticmethod
        def jvp(ctx, x_t):
            x, *outs = ctx.saved_tensors
            tangents = [None] * len(unit["fw_inputs"])
            tangents[leaf["fw_index"]] = x_t.clone() if unit.get("inplace") else x_t  # (self_t.copy_(...))
            args = [ctx.derivls_written.get(i, v) for i, v in enumerate(with_leaf(x))]
            res = forward(*args, *outs, tangents)
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
    if stable_only and leaf["item"] is None:
        bad = unstable_elements(torch, overload, base, leaf["arg"], range(value.numel()))
        if bad:
            raise Unstable(len(bad))
    with time_limit(CHECK_SECONDS):
        return _gradcheck(torch, fn, x, mode, outputs_names, grads_of)


def written_after(torch, overload, unit, args):
    """{argument index: value after the call} of the tensors the op wrote other than an in-place unit's self (a
    buffer: rrelu_with_noise's noise, batch norm's running stats): VariableType's node saves the tensor itself, so
    its formulas read what the op wrote there."""
    out = {}
    for i, a in enumerate(overload._schema.arguments):
        if a.alias_info is None or not a.alias_info.is_write or (unit.get("inplace") and a.name == "self"):
            continue
        if i < len(args) and isinstance(args[i], torch.Tensor):
            out[i] = args[i].detach().clone()
    return out


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


# --- serve: a session that stays alive (derivls/gradcheck/session.py), torch and op_db imported once


def sample_key(unit, max_samples):
    """What a unit's samples depend on (not its id or its compiled functions' names, which change per build)."""
    return json.dumps([unit["aten"], unit["overload"], unit["args"], unit["wrt"], max_samples])


def serve():
    """`child.py --serve`: one JSON request a line on stdin, JSON lines on stdout, until `quit` or end of input.

    {"op": "ping"} -> {"event": "pong", "rss": bytes}
    {"op": "prepare", "units", "max_samples", "reach"} -> finds (once per unit's overload and arguments) the
        samples, and the samples made from them -> {"event": "prepared", "units": how many were new}
    {"op": "check", "library", "namespace", "units", "max_samples", "double_backward"} -> loads the extension
        (once per path: each build is a library of its own namespace), then the run's events: one "unit" per
        unit, then {"event": "done"}
    {"op": "jit-init", "libraries", "include_dirs", "includes", "prelude", "warmup"} -> {"event": "jit", "ready": bool,
        "reason", "seconds"}: cppyy imported, the libraries loaded RTLD_GLOBAL, the includes parsed (jit_init)
    {"op": "check", "jit": {"namespace", "source"}, ...} -> the source defined by Cling (once per namespace), or
        {"event": "jit-failed", "message", "broken"} and {"event": "done"} (the caller builds it with g++)
    {"op": "quit"} -> ends.
    The first line out is {"event": "torch", ...} or {"event": "setup-error", ...} (then it ends)."""
    import torch

    emit({"event": "torch", "version": torch.__version__})
    try:
        import torch.testing._internal.common_methods_invocations  # noqa: F401 (OpInfo's op_db)
    except ImportError as e:
        emit(
            {
                "event": "setup-error",
                "message": f"torch's OpInfo database (torch.testing._internal) needs the module {e.name or e}: "
                f"install numpy and expecttest for {sys.executable} (pip install numpy expecttest)",
            }
        )
        return
    emit({"event": "ready"})
    index = None
    prepared = {}  # sample key -> (samples with the ones made from them, special points put back)
    loaded = set()
    jit = {}  # the JIT's state: "cppyy" once ready, "broken" after a failed materialization, "defined" namespaces

    def prepare(request):
        nonlocal index
        limit = request.get("max_samples", 6)
        if index is None:
            index = request.get("reach")
            if index is None:
                index = reach_index(torch)
                emit({"event": "reach-index", "index": index})
        new = {}
        for unit in request["units"]:
            key = sample_key(unit, limit)
            if key not in prepared and key not in new:
                new[key] = {**unit, "id": key}
        if new:
            found = find_samples(torch, list(new.values()), limit, index)
            for key, unit in new.items():
                samples = found.get(key) or []
                packet = getattr(torch.ops.aten, unit["aten"], None)
                overload = getattr(packet, unit["overload"], None) if packet is not None else None
                UNSTABLE.pop(key, None)
                if samples and overload is not None:
                    try:
                        samples = list(samples) + variants(torch, overload, unit, samples)
                    except Exception:
                        pass  # (check_unit makes them again, and says what failed)
                prepared[key] = (samples, UNSTABLE.pop(key, 0))
        return len(new)

    for line in sys.stdin:
        try:
            request = json.loads(line)
        except ValueError:
            emit({"event": "error", "message": "not JSON"})
            continue
        op = request.get("op")
        if op == "quit":
            return
        if op == "ping":
            emit({"event": "pong", "rss": rss_bytes()})
        elif op == "prepare":
            emit({"event": "prepared", "units": prepare(request)})
        elif op == "jit-init":
            emit(jit_init(torch, jit, request))
        elif op == "check":
            prepare(request)
            if "jit" in request:
                failed = jit_define(torch, jit, request["jit"])
                if failed is not None:
                    emit(failed)
                    emit({"event": "done", "rss": rss_bytes()})
                    continue
            else:
                library = request["library"]
                if library not in loaded:
                    torch.ops.load_library(library)
                    loaded.add(library)
            ns = getattr(torch.ops, request["namespace"])
            limit = request.get("max_samples", 6)
            for unit in request["units"]:
                key = sample_key(unit, limit)
                samples, unstable = prepared[key]
                UNSTABLE[key] = unstable
                try:
                    event = check_unit(torch, ns, {**unit, "id": key}, samples, {**request, "variants": False})
                except Exception as e:
                    event = {
                        "event": "unit",
                        "status": "not-checkable",
                        "reason": f"harness error: {type(e).__name__}: {str(e).splitlines()[0][:300] if str(e) else ''}",
                        "detail": traceback.format_exc()[-1500:],
                        "failures": [],
                    }
                emit({**event, "id": unit["id"]})
            emit({"event": "done", "rss": rss_bytes()})
        else:
            emit({"event": "error", "message": f"unknown op {op!r}"})


# --- the JIT path (derivls/gradcheck/jit.py): the extension's code defined by Cling in this process


def jit_init(torch, jit, request):
    """Import cppyy, load libtorch and the helper stubs RTLD_GLOBAL (torch loads its libraries RTLD_LOCAL: the
    JIT would not resolve libtorch's symbols), parse the includes once, define the prelude."""
    import ctypes
    import time

    started = time.monotonic()
    try:
        import cppyy
    except ImportError as e:
        return {"event": "jit", "ready": False, "reason": f"cppyy is not installed for {sys.executable} ({e})"}
    try:
        for library in request["libraries"]:
            ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        for folder in request["include_dirs"]:
            cppyy.add_include_path(folder)
        for header in request["includes"]:
            cppyy.include(header.strip('"<>'))
        cppyy.cppdef(request["prelude"])
        if request.get("warmup"):  # a node defined once: the templates every node instantiates, instantiated now
            cppyy.cppdef(request["warmup"])
    except Exception as e:
        jit["broken"] = True
        return {"event": "jit", "ready": False, "reason": f"{type(e).__name__}: {summarize(str(e))}"}
    jit["cppyy"] = cppyy
    jit["defined"] = set()
    return {"event": "jit", "ready": True, "seconds": round(time.monotonic() - started, 2)}


def jit_define(torch, jit, request):
    """Define `request["source"]` (once per namespace); None when its ops are registered, else the jit-failed
    event, `broken`: Cling's state after a rejected definition or a failed materialization (it cannot run later
    static initializers) is not trusted, the session is restarted."""
    ns = request["namespace"]
    if ns in jit.get("defined", ()):
        return None
    cppyy = jit.get("cppyy")
    if cppyy is None or jit.get("broken"):
        return {"event": "jit-failed", "message": "the JIT is not ready", "broken": bool(jit.get("broken"))}
    try:
        cppyy.cppdef(request["source"])
    except Exception as e:  # Cling rejected the code: g++ judges it. Cling's roll-back of the templates that code
        # instantiated is not reliable (a later definition may find them broken): no more JIT in this process
        jit["broken"] = True
        return {"event": "jit-failed", "message": summarize(str(e)), "broken": True}
    wanted = request.get("ops", [])
    library = getattr(torch.ops, ns)
    if not all(hasattr(library, name) for name in wanted):
        jit["broken"] = True
        return {"event": "jit-failed", "message": "the JIT could not link the code", "broken": True}
    jit["defined"].add(ns)
    return None


def rss_bytes():
    try:
        with open("/proc/self/statm") as f:
            import os

            return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")
    except (OSError, ValueError, IndexError):
        return 0


if __name__ == "__main__":
    serve() if "--serve" in sys.argv[1:] else main()
