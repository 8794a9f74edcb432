"""The reach index (reach_index): the aten overloads each OpInfo's and ModuleInfo's float64 samples reach, in their
forward or only in their backward (derivls/gradcheck/reach.py keeps it per torch build); the runs of those
samples, which find_samples uses too."""

from .limits import TooSlow, time_limit


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
