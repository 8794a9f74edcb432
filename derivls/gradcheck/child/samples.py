"""OpInfo's samples, at the level of the aten overload they reach (find_samples), and ModuleInfo's for the units
the reach index says a module reaches (module_samples)."""

from .limits import MAX_NUMEL
from .lineage import backward_lineage, lineage_call
from .opinfo import (
    foreach_infos,
    has_room,
    opinfo_count,
    opinfo_skips,
    reference_samples,
    skips_backward,
    wrapper_transforms,
)
from .reach import REACH_BACKWARD, REACH_MODULE, backward_of, module_infos, module_runs, opinfo_key, overload_name
from .values import all_finite, all_strided, largest_tensor, positional


def find_samples(torch, units, limit, reach=None, siblings=True):
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
    # (torch keeps the foreach functions' OpInfos apart from op_db) first the OpInfos whose test_fn_grad runs: the
    # samples test_ops checks (max_unpool3d's 'grad' variant, whose indices do not repeat) before those of a variant
    # skipping it, which fill the unit's `limit` otherwise (run only where torch agrees: checks.opinfo_skip_kept)
    for op in sorted(op_db + foreach_infos(), key=lambda op: skips_backward(torch, op)):
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
    if siblings:  # (the units still without samples: their op's other overloads')
        sibling_samples(torch, units, found, limit, reach)
    return found


def sibling_samples(torch, units, found, limit, reach):
    """For each unit no sample reaches (norm.Scalar: OpInfo's norm calls norm.ScalarOpt_dim), the samples of its op's
    other overloads (not the out= ones), their arguments taken by name (as_overload); kept where the op runs on them
    and gives a finite output (schema.survives). Added to `found` as OpInfo's samples (origin: `(through ...)`)."""
    from .schema import survives

    asked = {}
    for unit in units:
        if found.get(unit["id"]) or unit["id"] in DROPPED:
            continue
        packet = getattr(torch.ops.aten, unit["aten"], None)
        target = getattr(packet, unit["overload"], None) if packet is not None else None
        if target is None:
            continue
        for name in packet.overloads():
            sibling = getattr(packet, name)
            if name == unit["overload"] or any(a.is_out for a in sibling._schema.arguments):
                continue
            names = [a.name for a in sibling._schema.arguments]
            wrt = [(n, is_list) for n, is_list in unit["wrt"] if n in names]
            if wrt:
                pseudo = {**unit, "id": f"{unit['id']}@{name}", "overload": name, "args": names, "wrt": wrt}
                asked[pseudo["id"]] = (unit["id"], target, sibling, {**pseudo, "inplace": False})
    if not asked:
        return
    more = find_samples(torch, [pseudo for *_, pseudo in asked.values()], limit, reach, siblings=False)
    for pid, (uid, target, sibling, _) in asked.items():
        for sample in more.get(pid, []):
            # (a call inside a backward has intermediates, a wrapper's change an index: both of the other overload)
            if (
                sample.get("from_backward")
                or sample["transforms"]
                or not has_room(found[uid], sample["dtype"], limit, bool(sample.get("reference")))
            ):
                continue
            values = as_overload(torch, target, sibling, sample)
            if values is None or not survives(torch, target, values):
                continue
            found[uid].append(
                {**sample, "args": tuple(values), "kwargs": {}, "origin": f"{sample['origin']} (through {sibling})"}
            )


def as_overload(torch, target, sibling, sample):
    """A sibling overload's sample as positional values of `target`: each argument by name where the sibling has it
    with a value of its kind (a tensor, a list, a number), else its default, the sample's dtype for a ScalarType,
    None when optional; None when an argument has none of these."""
    given = dict(
        zip([a.name for a in sibling._schema.arguments], positional(sibling, sample["args"], sample["kwargs"]))
    )
    out = []
    for a in target._schema.arguments:
        t = str(getattr(a, "real_type", a.type))
        optional = t.startswith("Optional[")
        value = given.get(a.name)
        if value is None:
            fits = a.name in given and optional
        elif "Tensor" in t and "List" not in t:
            fits = isinstance(value, torch.Tensor)
        elif "List" in t:
            fits = isinstance(value, (list, tuple))
        else:
            fits = not isinstance(value, (torch.Tensor, list, tuple))
        if fits:
            out.append(value)
        elif a.has_default_value():
            out.append(a.default_value)
        elif t == "ScalarType":
            out.append(sample["dtype"])
        elif optional:
            out.append(None)
        else:
            return None
    return out


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


DROPPED: "dict[str, str]" = {}  # unit id -> why every OpInfo sample reaching it was left out (find_samples)
