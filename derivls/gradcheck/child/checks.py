"""The check of one unit (check_unit): gradcheck, check_forward_ad and gradgradcheck of the real op with the
compiled formulas as its backward and jvp (run_check), one check stopped at CHECK_SECONDS; the largest mismatch
of a failure."""

from .edges import torch_agrees
from .layouts import as_grad, layout_samples, on_values, strided, with_values
from .limits import (
    CHECK_SECONDS,
    MAX_JACOBIAN,
    FormulaNotImplemented,
    GaugeDependent,
    NotDeterministic,
    NotFinite,
    TooLarge,
    TooSlow,
    Unstable,
    time_limit,
)
from .lineage import backward_slots, recomputed
from .nested import from_flat, nested_samples, no_nested_kernel, structure, to_flat
from .operands import operand_variants
from .opinfo import is_test_skip
from .protocol import summarize
from .samples import DROPPED
from .schema import (
    fitting_schema_samples,
    formula_without_cpu_kernel,
    no_cpu_kernel,
    op_without_cpu_kernel,
    schema_refusal,
)
from .values import all_finite, describe, leaf_slots, positional, same, written_cloned
from .variants import UNSTABLE, inplace_fit, nudged, unstable_elements, variants

NOT_IMPLEMENTED_SKIP = "the formula is not_implemented(): "  # (every check skipped so: the unit's reason is a fact)


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


NOT_FINITE = "the op's output at the sample is not finite"
UNRELIABLE = "finite differences are not reliable at a special point"
INTERMEDIATE = (
    "reached through a backward, with a floating tensor argument without a formula or with a "
    "not_implemented() one (a forward intermediate: log_sigmoid's buffer, layer norm's mean and rstd): "
    "varying the other inputs alone is not what test_fn_gradgrad checks"
)
# (where inputs made from the schema are tried instead: the op as a function of its own arguments, the intermediate
# one of them, a constant: a pass there is the formula's on the real op; a disagreement is never a failure)
OUTSIDE = tuple(f"every check was skipped: {why}" for why in (NOT_FINITE, UNRELIABLE, INTERMEDIATE))


def check_unit(torch, ns, unit, found, request):
    """The unit's result on its samples; when every check of OpInfo's samples was skipped because the op's output
    there is not finite (special.zeta's samples, all below its domain) or finite differences are not reliable there
    (_to_copy's samples: casts to float32), the result on inputs made from the schema instead, where those give a
    check (the retries include values above 1)."""
    result = check_samples(torch, ns, unit, found, request)
    if not found and DROPPED.get(unit["id"], "").startswith("too large"):
        # every OpInfo sample was too large for a dense gradcheck (slice_scatter's): small inputs made from the
        # schema instead, where the op takes them and they give a check (else the reason stays the samples')
        retried = check_samples(torch, ns, unit, [], request, dropped=False)
        return retried if retry_answers(retried) else result
    if found and result["status"] == "not-checkable" and result.get("reason") in OUTSIDE:
        retried = check_samples(torch, ns, unit, [], request)
        if retry_answers(retried):
            return retried
    return result


def retry_answers(retried):
    """A result on inputs made from the schema says more than the samples' skip: a check, or a fact about the op."""
    return retried["status"] != "not-checkable" or retried["reason"].startswith(("not implemented", "no CPU kernel"))


def check_samples(torch, ns, unit, found, request, dropped=True):
    """The unit's result on the samples found (on inputs made from the schema when there are none; `dropped`: not
    when every OpInfo sample reaching it was left out, whose reason is then the result's)."""
    packet = getattr(torch.ops.aten, unit["aten"], None)
    overload = getattr(packet, unit["overload"], None) if packet is not None else None
    result = {"event": "unit", "id": unit["id"], "failures": [], "samples": 0, "inputs": "opinfo"}
    if overload is None:
        return {
            **result,
            "status": "not-checkable",
            "reason": f"the installed torch has no aten::{unit['aten']}.{unit['overload']}",
        }
    # (nested constructors, sparse or jagged arguments: inputs made for their layout)
    if not found and (made := layout_samples(torch, unit, overload)):
        found = made
        result["inputs"] = "layout"
    if not found and dropped and unit["id"] in DROPPED:
        return {
            **result,
            "status": "not-checkable",
            "reason": f"every OpInfo sample reaching it is {DROPPED[unit['id']]}",
        }
    if not found and (fact := no_cpu_kernel(torch, overload)):  # (a fact about the op: nothing to run it on here)
        return {**result, "status": "not-checkable", "reason": fact}
    nested = unit.get("layout") == "nested"  # (an AutogradNestedTensor formula: nested tensors reach it)
    if nested and (fact := no_nested_kernel(torch, overload)):
        return {**result, "status": "not-checkable", "reason": fact}
    if not found:
        found = fitting_schema_samples(torch, unit, overload)
        result["inputs"] = "schema"
    elif request.get("variants", True) and not nested and result["inputs"] != "layout":  # (layouts: as made)
        made = variants(torch, overload, unit, found) + operand_variants(torch, overload, unit, found)
        found = list(found) + inplace_fit(torch, overload, unit, made)
    if nested and found and result["inputs"] != "layout":  # (a jagged sample made for it: as made)
        found = nested_samples(torch, overload, unit, found)
        if not found:
            return {
                **result,
                "status": "not-checkable",
                "reason": "no sample the op takes as a nested tensor (its dense samples' arguments do not fit one)",
            }
    if not found:
        # (an op whose only kernel raises on every input the retries make: a fact, when its message says so)
        refusal = schema_refusal(torch, overload) if result["inputs"] == "schema" else None
        reason = "no OpInfo sample reaches this overload, and its schema needs values"
        if refusal:  # (what the op said: _nnpack_spatial_convolution's NNPACK failing on this machine)
            reason = op_without_cpu_kernel(refusal) or "inputs made from the schema do not fit the op: " + refusal
        return {**result, "status": "not-checkable", "reason": reason}
    backward = getattr(ns, unit["backward"]) if unit.get("backward") else None
    forward = getattr(ns, unit["forward"]) if unit.get("forward") else None
    failures = {}
    checked = 0
    counts = {}
    errors = []
    skipped = []
    gauge = set()
    gauge_free = set()  # id(sample): checked on a gauge-invariant function of its vectors (GAUGE_OUTPUTS)
    excused = set()  # failures of a by-design formula where torch's own gradient disagrees too (not evidence)
    agreement = {}  # id(sample) -> torch_agrees there (a check OpInfo skips is run where torch's own gradient agrees)
    unstable = UNSTABLE.get(unit["id"], 0)
    stop = unit.get("first_failure")  # (a repair candidate: one failure rules it out)
    for sample in found:
        if stop and failures:
            break
        dtype, args, kwargs = sample["dtype"], sample["args"], sample["kwargs"]
        values = positional(overload, args, kwargs)
        values = foreach_values(torch, unit, values)
        slots = leaf_slots(torch, unit, values)
        if sample.get("layouts"):  # (a sparse argument is held constant: only the strided tensors vary, and the
            # values of a sparse one made of them)
            slots = [
                s
                for s in slots
                if strided(torch, values[s["arg"]] if s["item"] is None else values[s["arg"]][s["item"]])
                or (s["item"] is None and s["arg"] in sample["built"])
            ]
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
            skipped.append(INTERMEDIATE)
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
                    why = opinfo_skip_kept(torch, overload, unit, values, sample, mode, request, agreement)
                    if why is not None:
                        skipped.append(why)
                        continue
                if id(sample) in gauge:  # (its forward formula's vectors are in another gauge than the kernel's)
                    continue
                try:
                    ok, message, output = checked_in_gauge(
                        gauge_free,
                        id(sample),
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
                        nudge=sample.get("points") is True,  # (a sample reached inside another op)
                        lineage=sample.get("lineage"),
                        nested=bool(sample.get("nested")),
                        built=sample.get("built", ()),
                    )
                except Unstable as e:
                    unstable += e.args[0]
                    skipped.append(UNRELIABLE)
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
                    skipped.append(NOT_FINITE)
                    continue
                except GaugeDependent:
                    # singular vectors / eigenvectors are defined up to a phase: gradcheck's random output grads
                    # make the loss depend on it (the formula says so); test_ops checks gauge-invariant functions
                    skipped.append("gauge: a loss of its singular/eigen vectors with random grads is ill-defined")
                    gauge.add(id(sample))
                    continue
                except FormulaNotImplemented as e:
                    skipped.append(f"{NOT_IMPLEMENTED_SKIP}{e}")
                    continue
                except Exception as e:
                    errors.append(f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}")
                    continue
                checked += 1
                counts[mode] = counts.get(mode, 0) + 1
                # (a nested sample, or one made for its layout: the formula's own derivative is not traced through
                # the flat view of nested.py)
                if ok and mode == "backward" and request.get("double_backward") and not sample.get("nested"):
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
                    if unit.get("by_design") and not message.startswith("the formula raised"):
                        # (a formula not the derivative on purpose: its disagreement is a fact only where torch's
                        # own gradient disagrees at that sample too; where torch's agrees, the edit is wrong there)
                        agrees = agreement_at(torch, overload, unit, values, sample, request, agreement)
                        if agrees is None or mode in agrees:
                            excused.add(key)
    result["samples"] = len(found)
    result["checks"] = counts
    if unstable:
        result["unstable"] = unstable  # special points left out: finite differences are not reliable there
    result["failures"] = list(failures.values())
    disagreed = [k for k, f in failures.items() if not f["message"].startswith("the formula raised")]
    if unit.get("by_design") and (
        (disagreed and set(disagreed) <= excused) or (not checked and any(TORCH_DISAGREES in s for s in skipped))
    ):
        # the entry's formula is not the derivative on purpose (the parent's rule on its text: a random op's zeros, a
        # straight-through estimator...) and finite differences disagree with it where they disagree with torch's
        # own too, or with torch's own everywhere: a fact (a formula that raised is not that: reported as before; a
        # disagreement where torch's own gradient agrees is a failure)
        result["failures"] = []
        result["status"] = "not-checkable"
        result["reason"] = unit["by_design"]
        return result
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
            result["reason"] = op_without_cpu_kernel(errors[0]) or (
                "inputs made from the schema do not fit the op: " + errors[0]
            )
        elif errors:
            result["reason"] = "every check errored: " + errors[0]
        elif skipped and all(s.startswith(NOT_IMPLEMENTED_SKIP) for s in skipped):  # (a fact about the entry)
            result["reason"] = "not implemented: " + skipped[0][len(NOT_IMPLEMENTED_SKIP) :]
        elif skipped:
            result["reason"] = "every check was skipped: " + skipped[0]
        else:
            result["reason"] = "no sample has a differentiable input"
    if errors:
        result["errors"] = errors[:5]
    return result


TORCH_DISAGREES = "torch's own gradient disagrees with finite differences there"


def opinfo_skip_kept(torch, overload, unit, values, sample, mode, request, agreement):
    """Why a check the sample's skip names stays skipped; None when it is run after all. A skip or expected failure
    of test_ops' test (opinfo.TEST_SKIP) is OpInfo's reason for its own test, often not the formula's (memory
    overlap, slowness, a nondeterministic kernel): the check is run where the installed torch's own gradient agrees
    with finite differences at that very sample (edges.torch_agrees: its backward, and its forward AD or double
    backward for those checks), and stays skipped where it does not, with both reasons."""
    why = sample["skip"][mode]
    if not is_test_skip(why):
        return why  # (OpInfo says the op has no forward AD / gradgrad at all)
    if sample.get("transforms") or (
        sample.get("from_backward")
        and any(s.get("kind") != "independent" for s in (sample.get("lineage") or {}).values())
    ):
        return why  # (torch's own check would not see what the check sees: a wrapper's input, intermediates)
    agrees = agreement_at(torch, overload, unit, values, sample, request, agreement)
    if agrees is None:
        return f"{why}, and {TORCH_DISAGREES}"
    if mode in agrees:
        return f"{why}, and {agrees[mode]}"
    return None


def agreement_at(torch, overload, unit, values, sample, request, agreement):
    """edges.torch_agrees at the sample's values, asked once per sample (agreement: id(sample) -> its answer)."""
    key = id(sample)
    if key not in agreement:
        agreement[key] = torch_agrees(torch, overload, unit, values, bool(request.get("double_backward")))
    return agreement[key]


def checked_in_gauge(gauge_free, key, *args, **kwargs):
    """run_check; where the formula says the loss depends on the gauge of the op's vectors (GaugeDependent: a phase
    of each eigenvector / singular vector is arbitrary, and gradcheck's random output grads make the loss depend on
    it), the check again on their absolute values, as test_ops checks linalg.eig (its output_process_fn_grad) and
    every later check of the sample so (key added to gauge_free); GaugeDependent again when that does not help. A
    check that failed on outputs named in GAUGE_OUTPUTS is run again so too: the formula raises only in a backward
    that reaches the vectors' grads (a failure at the eigenvalues comes first; a jvp never raises), and a
    disagreement in the phase of a complex vector is the gauge's, not a mistake (where they are real, their
    absolute values are themselves: the same failure)."""
    if key in gauge_free:
        return run_check(*args, **kwargs, gauge_free=True)
    try:
        result = run_check(*args, **kwargs)
    except GaugeDependent:
        result = run_check(*args, **kwargs, gauge_free=True)
        gauge_free.add(key)
        return result
    unit = args[2]
    if not result[0] and any(name in GAUGE_OUTPUTS for name in unit["outputs"]):
        result = run_check(*args, **kwargs, gauge_free=True)
        gauge_free.add(key)
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
    nudge=False,
    nested=False,
    built=(),
    gauge_free=False,
):
    """gradcheck of the real op with this leaf varying: (passed, message, output name); stable_only (a sample
    made with special values): Unstable unless finite differences are reliable at every element of the leaf; nudge
    (a sample reached inside another op): its unreliable elements are moved a little off first (variants.nudged);
    nested (the leaf is a nested tensor, for an AutogradNestedTensor formula): gradcheck varies its components'
    values as one flat tensor, sees each nested output flat, and the formula gets nested tensors (nested.py); gauge_free:
    gradcheck sees the absolute values of the complex outputs named in GAUGE_OUTPUTS (a gauge-invariant function of
    vectors defined up to a phase: test_ops' output_process_fn_grad of linalg.eig)."""
    base = list(values)
    built_leaf = leaf["item"] is None and leaf["arg"] in built
    leaf_shapes = structure(torch, base[leaf["arg"]]) if nested and leaf["item"] is None and not built_leaf else None
    # built (a sparse argument a check varies): the leaf is its values, at its indices (layouts.with_values)
    sparse = base[leaf["arg"]] if built_leaf else None
    last = {}  # (nested) the op's outputs at the last call, as the op gave them: what the formula gets
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
        if sparse is not None:
            args[leaf["arg"]] = with_values(torch, sparse, x)
        elif leaf["item"] is None:
            args[leaf["arg"]] = from_flat(torch, x, leaf_shapes)
        else:
            items = list(args[leaf["arg"]])
            items[leaf["item"]] = x
            args[leaf["arg"]] = items
        return recomputed(torch, args, lineage) if lineage else args  # (forward intermediates follow x)

    written = {}  # argument index -> its value after the op wrote it, at the last call (noise, running_mean)

    def call(args):
        """The real op: its keyword-only arguments by name (an argument it writes: a clone, whose value after the
        call the node keeps: not values.call_overload, which drops the clone)."""
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
            if any(o is None for o in outs):  # (an output made in grad mode only: mkldnn_rnn_layer's workspace)
                with torch.enable_grad():
                    outs = tuple(o.detach() if o is not None else o for o in as_tuple(call(with_leaf(x.detach()))))
            last["outs"] = outs
            return tuple(to_flat(torch, o).clone() for o in outs)

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
            ctx.derivls_outs = last.get("outs") if nested else None

        @staticmethod
        def backward(ctx, *gouts):
            x, *outs = ctx.saved_tensors
            if ctx.derivls_outs is not None:  # (nested: the formula gets the outputs and their grads nested)
                outs = list(ctx.derivls_outs)
                gouts = [as_grad(torch, g, o) for g, o in zip(gouts, outs)]  # (a sparse output: a sparse grad)
            grads = list(gouts) if list_return else [gouts[i] for i in grads_of]
            args = with_leaf(x)
            args = [ctx.derivls_written.get(i, v) for i, v in enumerate(args)]
            res = backward(*args, *([outs] if list_return else outs), grads, 1 << leaf["bw_bit"])
            g = res[leaf["bw_bit"]] if leaf["bw_bit"] < len(res) else None
            return on_values(torch, g, sparse) if sparse is not None else to_flat(torch, g)

        @staticmethod
        def jvp(ctx, x_t):
            x, *outs = ctx.saved_tensors
            flat_outs = list(outs)
            if ctx.derivls_outs is not None:
                outs = list(ctx.derivls_outs)
            tangents = [None] * len(unit["fw_inputs"])
            tangents[leaf["fw_index"]] = x_t.clone() if unit.get("inplace") else x_t  # (self_t.copy_(...))
            tangents[leaf["fw_index"]] = from_flat(torch, tangents[leaf["fw_index"]], leaf_shapes)
            if sparse is not None:
                tangents[leaf["fw_index"]] = with_values(torch, sparse, x_t)
            args = [ctx.derivls_written.get(i, v) for i, v in enumerate(with_leaf(x))]
            res = forward(*args, *outs, tangents)
            # (None: no input the output's formula reads has a tangent, VariableType's guard: a zero tangent; a
            # custom Function's jvp may not return None for a differentiable output)
            return tuple(
                (to_flat(torch, r) if r is not None else torch.zeros_like(flat_outs[i])) if i in grads_of else None
                for i, r in enumerate(res)
            )

    value = base[leaf["arg"]] if leaf["item"] is None else base[leaf["arg"]][leaf["item"]]
    x = (sparse.values() if sparse is not None else to_flat(torch, value)).detach().clone().requires_grad_(True)
    # OpInfo's gradcheck_wrapper (a Hermitian or triangular input): the op sees transform(x), as in test_ops
    transforms = log_probabilities(overload, transforms or {})
    with torch.no_grad():
        for i, transform in transforms.items():
            if i != leaf["arg"] and i < len(base):
                base[i] = transform(base[i])
    own = transforms.get(leaf["arg"]) if leaf["item"] is None else None

    def fn(x):
        outs = F.apply(own(x) if own is not None else x)
        if gauge_free:
            outs = tuple(
                o.abs() if i < len(outputs_names) and outputs_names[i] in GAUGE_OUTPUTS and o.is_complex() else o
                for i, o in enumerate(outs)
            )
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
    moved_off = 0
    if stable_only and leaf["item"] is None:
        seen = None if list_return else grads_of  # (the outputs gradcheck sees: fn's)
        bad = unstable_elements(torch, overload, base, leaf["arg"], range(value.numel()), seen)
        if bad:
            # a value found inside another op (nudge; not a variant's special points, placed on purpose) may sit on
            # a tie or a bound by construction (eq_ of a tensor and its copy): checked a little off it instead
            moved = nudged(torch, overload, base, leaf["arg"], bad, seen) if nudge else None
            if moved is None:
                raise Unstable(len(bad))
            base[leaf["arg"]] = moved
            x = moved.detach().clone().requires_grad_(True)
            moved_off = len(bad)
    with time_limit(CHECK_SECONDS):
        ok, message, output = _gradcheck(torch, fn, x, mode, outputs_names, grads_of)
    if not ok and moved_off:
        message += (
            f" (with {moved_off} elements of {leaf['name']} moved off points where finite differences are not reliable)"
        )
    return ok, message, output


def log_probabilities(overload, transforms):
    """transforms with log_softmax over the last dimension for an argument of log-probabilities (`log_probs`): a CTC
    loss's formula is the gradient with respect to the logits they were made of (LossCTC.cpp: exp(log_probs) minus
    the paths' posterior), right only through log_softmax, as test_nn's gradcheck of ctc_loss checks it; the op sees
    the same values (log_softmax of log-probabilities is themselves)."""
    for i, a in enumerate(overload._schema.arguments):
        if a.name == "log_probs" and i not in transforms:
            transforms = {**transforms, i: lambda t: t.log_softmax(-1)}
    return transforms


GAUGE_OUTPUTS = ("eigenvectors", "U", "V", "Vh")  # outputs defined up to a phase per vector (eig, eigh, svd)


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


def _gradcheck(torch, fn, x, mode, outputs_names, grads_of):
    """(passed, message, output name) of one gradcheck / gradgradcheck."""
    import warnings

    from torch.autograd.gradcheck import GradcheckError

    tolerances = single_precision(torch, x)
    try:
        if tolerances:  # (gradcheck warns that a float32 input "will likely fail": its tolerances are set for that)
            warnings.filterwarnings("ignore", message=".*not of double precision.*")
        if mode == "double-backward":  # the backward formula's own derivatives (its gradcheck passed)
            torch.autograd.gradgradcheck(fn, (x,), check_undefined_grad=False, raise_exception=True, **tolerances)
        else:
            torch.autograd.gradcheck(
                fn,
                (x,),
                check_forward_ad=mode == "forward",
                check_backward_ad=mode == "backward",
                check_undefined_grad=mode == "backward",
                check_batched_grad=False,
                raise_exception=True,
                **tolerances,
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


FLOAT32_TOLERANCES = {"eps": 1e-3, "atol": 1e-3, "rtol": 1e-2}  # (central differences in single precision)


def single_precision(torch, x):
    """gradcheck's step and tolerances for a float32 / complex64 input (a schema-made sample of a kernel that refuses
    float64): a step of 1e-3, as a 1e-6 step of a float32 value is all rounding; {} (gradcheck's own) otherwise."""
    return dict(FLOAT32_TOLERANCES) if x.dtype in (torch.float32, torch.complex64) else {}


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
        eps = single_precision(torch, x).get("eps", 1e-6)
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
