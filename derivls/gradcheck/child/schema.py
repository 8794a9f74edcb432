"""Inputs made from the schema, for an overload no OpInfo sample reaches: plain ones, then retries of ranks, shapes,
values and index dtypes that the op takes (fitting_schema_samples), each tried in a forked copy (survives)."""

from .values import flat_output, leaf_slots, values_dtype, without_kernel

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
    name = without_kernel(torch, overload, CPU_KEYS)
    return (
        None if name is None else f"no CPU kernel: {name} has no kernel for dense CPU tensors (only for other backends)"
    )


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
    ("values above 1", (3, 4), None, "above 1", False),  # (zeta's domain: tensors in [1.2, 1.9], numbers 1.75)
    # (batched 4x4 matrices, the optional tensors left out: _grouped_mm's 3-d x 3-d, rows of 16 bytes in float32)
    ("batched square matrices, optional tensors left out", (2, 4, 4), None, "no optional", False),
    ("a matrix and 1-d others", (3, 4), (4,), None, False),  # (an embedding bag's weight, indices and offsets)
    ("an LSTM layer's input, weights and state", (2, 1, 3), None, "lstm", False),  # (mkldnn_rnn_layer, float32)
)
# an LSTM layer's (kind "lstm"): time 2, batch 1, 3 features in, hidden size 2 (4 gates: 8 rows); the weights by
# position (input-hidden, hidden-hidden, two biases), the state (batch, hidden); what the ints and bools then are
LSTM_SIZES = {"weight0": (8, 3), "weight1": (8, 2), "weight2": (8,), "weight3": (8,), "hx_": (1, 2), "cx_": (1, 2)}
LSTM_VALUES = {"hidden_size": 2, "mode": 2, "num_layers": 1, "has_biases": True, "batch_sizes": [], "train": True}
ABOVE_ONE = {"number": 1.75, "Scalar": 1.75, "float": 1.75}
RETRY_SECONDS = 5  # one call of the op on a retry's inputs
INDEX_NAMES = ("index", "indices", "target", "lengths", "offsets", "offset2bag", "bag_size", "batch_sizes")
GRAD_NAMES = ("grad_output", "grad_out", "grad")  # a *_backward function's incoming grad: shaped by its forward
THETA = (1, 2, 3)  # `theta`: one 2-d affine matrix (N, 2, 3); its `size` is then an (N, C, H, W) image's


def schema_retry(torch, overload, shape, others, kind, definite, real=None):
    """Positional values for one retry (None: the schema needs a value no retry makes); `real` the floating dtype
    (float64, or float32 for a kernel that refuses float64)."""
    generator = torch.Generator().manual_seed(0)
    real = real or torch.float64
    dtype = (torch.complex128 if real == torch.float64 else torch.complex64) if kind == "complex" else real
    conv = (int(kind[4]), kind.endswith("transposed")) if kind and kind.startswith("conv") else None
    main = None
    values = []
    names = [a.name for a in overload._schema.arguments]
    # a *_backward function's grad comes first but is shaped like the forward's output: the other tensors (self,
    # input) are made first, the grad after them, then reshaped by running the forward (shaped_by_forward)
    deferred = set()
    if "self" in names or "input" in names:
        deferred = {i for i, n in enumerate(names) if n in GRAD_NAMES}
    for i, a in enumerate(overload._schema.arguments):
        t = str(getattr(a, "real_type", a.type))  # (ScalarType's type is int, its real type ScalarType)
        if i in deferred and t == "Tensor":
            values.append(None)  # (made once the others are)
            continue
        if kind == "no optional" and t == "Optional[Tensor]" and a.has_default_value():
            values.append(a.default_value)
            continue
        if t in ("Tensor", "Optional[Tensor]"):
            size = shape if main is None or others is None else others
            if conv and a.name == "weight":  # (out, in, k, k) or, transposed, (in, out, k, k): a kernel of 2
                size = ((2, 3) if conv[1] else (3, 2)) + (2,) * conv[0]
            if kind == "grid" and a.name == "grid":  # (N, H, W, 2) in [-0.9, 0.9]: inside the image
                size = (1, 3, 3, 2)
            if kind == "tbc" and a.name == "weight":  # (kernel, in channels, out channels)
                size = (2, 2, 3)
            if a.name == "theta":
                size = THETA
            if kind == "lstm":
                size = LSTM_SIZES.get(a.name, size)
            if a.name == "g" and main is not None and "dim" in names:  # (weight norm's magnitude: shaped like v's
                keep = next((b.default_value for b in overload._schema.arguments if b.name == "dim"), 0)  # norm over
                keep = keep if isinstance(keep, int) and 0 <= keep < main.dim() else 0  # every dimension but `dim`)
                size = tuple(n if d == keep else 1 for d, n in enumerate(main.shape))
            if "mask" in a.name:
                value = torch.rand(size, generator=generator) > 0.3
            elif a.name == "lengths" and main is not None and main.dim() >= 2:
                # a padded batch's lengths (time-major input): one per batch element, descending, at most its time
                steps, batch = main.shape[0], main.shape[1]
                value = torch.tensor([max(1, steps - k) for k in range(batch)], dtype=torch.int64)
            elif a.name in INDEX_NAMES and main is not None:
                bound = max(1, main.shape[0] if main.dim() else 1)
                value = torch.randint(0, bound, size, generator=generator, dtype=torch.int64)
                if a.name == "offsets" and value.dim() == 1 and len(value):  # (where each bag starts: from 0, sorted)
                    value = torch.cat([value.new_zeros(1), value[1:].sort().values])
            else:
                value = (torch.rand(size, dtype=torch.float64, generator=generator) * 0.7 + 0.2).to(dtype)
                if kind == "grid" and a.name == "grid":
                    value = value * 2.5 - 1.4
                if kind == "above 1":
                    value = value + 1
                if definite and value.dim() == 2 and value.shape[0] == value.shape[1]:
                    value = value @ value.mT + value.shape[0] * torch.eye(value.shape[0], dtype=dtype)
            main = value if main is None else main
            values.append(value)
        elif conv and t.startswith("List[int]"):  # stride, dilation 1, padding 0, kernel 2 in each spatial dim
            values.append([0 if "padding" in a.name else 2 if "kernel" in a.name else 1] * conv[0])
        elif t.startswith("List[int]") and getattr(a, "N", None) and main is not None and main.dim() >= a.N:
            # a fixed-length list (`SymInt[2] padding`): one value per spatial dimension, as many as the schema says
            values.append(fixed_int_list(a.name, main, a.N))
        elif kind == "lstm" and a.name in LSTM_VALUES:
            values.append(LSTM_VALUES[a.name])
        elif conv and a.name == "transposed":
            values.append(conv[1])
        elif kind == "grid" and a.name.endswith("_mode"):  # bilinear, zeros
            values.append(0)
        elif a.has_default_value():
            values.append(a.default_value)
        elif t in SCHEMA_VALUES:
            values.append(ABOVE_ONE.get(t, SCHEMA_VALUES[t]) if kind == "above 1" else SCHEMA_VALUES[t])
        elif t.startswith("Optional["):
            values.append(None)
        elif t == "ScalarType":
            values.append(dtype)
        elif t == "List[Optional[Tensor]]" and main is not None and main.dim():  # (indices along the first dim)
            # (distinct: a write through repeated indices keeps one of the values, whichever the kernel likes)
            values.append([torch.randperm(main.shape[0], generator=generator)[:2]])
        elif t.startswith("List[bool]"):
            values.append([True, True, True])
        elif t == "List[Tensor]":  # (a foreach function's list: two tensors of the retry's shape)
            items = [(torch.rand(shape, dtype=real, generator=generator) * 0.7 + 0.2).to(dtype) for _ in range(2)]
            main = items[0] if main is None else main
            values.append(items)
        elif t.startswith("List[int]") and main is not None:
            values.append(schema_int_list(a.name, main, "theta" in names))
        else:
            return None
    for i in deferred:  # (the forward's output shape is set by shaped_by_forward: the main tensor's until then)
        values[i] = (torch.rand(main.shape, dtype=real, generator=generator) * 0.7 + 0.2).to(dtype)
    return values


def schema_int_list(name, main, theta=False):
    """A guess at an int[] argument from the first tensor: its dims, its stride, its size, a split of its first
    dimension, the spatial size of an upsample; the `size` of the image an affine `theta` (N, 2, 3) samples."""
    if theta and name == "size":
        return [main.shape[0], 2] + [4] * (main.shape[-1] - 1)
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


def fixed_int_list(name, main, n):
    """A guess at a fixed-length int list (`SymInt[2] padding`): n values, padding 0, a stride or dilation 1, a kernel
    2, else the first tensor's last n sizes."""
    if "padding" in name:
        return [0] * n
    if "stride" in name or "dilation" in name:
        return [1] * n
    if "kernel" in name:
        return [2] * n
    return list(main.shape[-n:])


def fitting_schema_samples(torch, unit, overload):
    """Inputs made from the schema (schema_samples), or when the op rejects them (or gives no finite output), the
    first of SCHEMA_RETRIES it takes, each call bounded by RETRY_SECONDS: in float64, then, when none fits, the same
    in float32 (a kernel that refuses float64: the grid samplers' CPU fallbacks, mkldnn's convolution; checked at
    float32's tolerances); the first ones when none fits (so the reason names what the op said)."""
    first = schema_samples(torch, unit, overload)
    for real in (torch.float64, torch.float32):
        for what, shape, others, kind, definite in SCHEMA_RETRIES:
            try:
                values = schema_retry(torch, overload, shape, others, kind, definite, real)
                values = values if values is None else shaped_by_forward(torch, overload, values)
            except Exception:
                continue
            if values is None or not leaf_slots(torch, unit, values):
                continue
            if not survives(torch, overload, values):
                continue
            return [schema_sample(torch, values, f"schema-made ({what}{', float32' if real == torch.float32 else ''})")]
    made = made_by_forward(torch, unit, overload)
    return made or first


def made_by_forward(torch, unit, overload):
    """A `*_backward` function's inputs made by running its forward (forward_of, else its name less its last words:
    _embedding_bag_dense_backward's _embedding_bag) on inputs made from the forward's schema: the grad shaped like
    its first output, the arguments the forward takes by name, the tensors it does not take its other outputs in
    order (offset2bag, bag_size, maximum_indices), a `num_<x>s` the first size of its `<x>`; [] when that fails."""
    name = overload._schema.name.split("::")[-1]
    if "_backward" not in name:
        return []
    forwards = forward_of(torch, overload)
    base = name.split("_backward")[0]
    while not forwards and "_" in base.strip("_"):
        base = base.rsplit("_", 1)[0]
        packet = getattr(torch.ops.aten, base, None)
        forwards = [getattr(packet, o) for o in packet.overloads()] if packet is not None else []
    for forward in forwards:
        arguments = forward._schema.arguments
        floating = [(a.name, False) for a in arguments if str(a.type) == "Tensor"]
        request = {"id": "forward", "args": [a.name for a in arguments], "wrt": floating}
        samples = [s for s in fitting_schema_samples(torch, request, forward) if s["origin"] != "schema-made"]
        if not samples or not floating:
            continue
        given = dict(zip(request["args"], samples[0]["args"]))
        outs = run_forked(torch, lambda forward=forward, values=samples[0]["args"]: tensors_of(torch, forward(*values)))
        if not outs:
            continue
        values = []
        rest = iter(outs[1:])
        generator = torch.Generator().manual_seed(1)
        for a in overload._schema.arguments:
            t = str(a.type)
            plural = a.name[4:-1] if a.name.startswith("num_") and a.name.endswith("s") else None
            if a.name in GRAD_NAMES and t == "Tensor":
                values.append((torch.rand(outs[0].shape, generator=generator, dtype=torch.float64) + 0.2).to(outs[0]))
            elif a.name in given:
                values.append(given[a.name])
            elif t == "Tensor":
                values.append(next(rest, None))
            elif plural and isinstance(given.get(plural), torch.Tensor) and given[plural].dim():
                values.append(given[plural].shape[0])
            elif a.has_default_value():
                values.append(a.default_value)
            elif t.startswith("Optional["):
                values.append(None)
            elif t in SCHEMA_VALUES:
                values.append(SCHEMA_VALUES[t])
            else:
                break
        else:
            if leaf_slots(torch, unit, values) and survives(torch, overload, values):
                return [
                    schema_sample(
                        torch, values, f"schema-made (by its forward, {forward._schema.name.split('::')[-1]})"
                    )
                ]
    return []


def schema_sample(torch, values, origin):
    """A sample of inputs made from the schema (positional values, no skip, no transform)."""
    return {
        "dtype": values_dtype(torch, values),
        "args": tuple(values),
        "kwargs": {},
        "origin": origin,
        "skip": {},
        "transforms": {},
    }


def tensors_of(torch, out):
    """An op's tensor outputs, in order (a list)."""
    return [o for o in (out if isinstance(out, (tuple, list)) else (out,)) if isinstance(o, torch.Tensor)]


def schema_refusal(torch, overload):
    """What the op says (`Type: message`) when called on the first retry whose values can be made (in float64), in a
    forked copy (run_forked); None when no retry's values can be made, or the op takes them."""
    for _, shape, others, kind, definite in SCHEMA_RETRIES:
        try:
            values = schema_retry(torch, overload, shape, others, kind, definite)
        except Exception:
            continue
        if values is None:
            continue

        def call(values=values):
            try:
                overload(*values)
            except Exception as e:
                return f"{type(e).__name__}: {str(e).splitlines()[0][:200] if str(e) else ''}"
            return None

        return run_forked(torch, call)
    return None


def forward_of(torch, overload):
    """The forward of a `*_backward` function (its name without `_backward`, or with `_forward` for it:
    _slow_conv2d_backward's _slow_conv2d_forward): its overloads, [] when there is none."""
    name = overload._schema.name.split("::")[-1]
    if "_backward" not in name:
        return []
    for candidate in (name.replace("_backward", "", 1), name.replace("_backward", "_forward", 1)):
        packet = getattr(torch.ops.aten, candidate, None)
        if packet is not None:
            return [getattr(packet, o) for o in packet.overloads()]
    return []


def shaped_by_forward(torch, overload, values):
    """values with a `*_backward` function's incoming grad (grad_output) shaped like its forward's first output: the
    forward called on the backward's arguments of the same names (`self` / `input` a tensor of `input_size` when the
    backward has only that), in a forked copy (survives). Unchanged when there is no such forward or it fails."""
    names = [a.name for a in overload._schema.arguments]
    grads = [i for i, n in enumerate(names) if n in GRAD_NAMES and isinstance(values[i], torch.Tensor)]
    if not grads:
        return values
    given = dict(zip(names, values))
    grad = values[grads[0]]
    for forward in forward_of(torch, overload):
        args = []
        for b in forward._schema.arguments:
            if b.name in given and b.name not in GRAD_NAMES:
                args.append(given[b.name])
            elif b.name in ("self", "input") and isinstance(given.get("input_size"), list):
                args.append(torch.rand(given["input_size"], dtype=grad.dtype))
            elif b.has_default_value():
                args.append(b.default_value)
            elif str(b.type).startswith("Optional["):  # (a bias the backward does not take)
                args.append(None)
            else:
                break
        else:
            shape = run_forked(torch, lambda forward=forward, args=args: first_shape(torch, forward(*args)))
            if shape is None:
                continue
            out = list(values)
            generator = torch.Generator().manual_seed(1)
            out[grads[0]] = (torch.rand(shape, dtype=torch.float64, generator=generator) * 0.7 + 0.2).to(grad.dtype)
            return out
    return values


def first_shape(torch, out):
    """The shape of the first tensor of an op's output (a list of ints), None when it has none."""
    for o in out if isinstance(out, (tuple, list)) else (out,):
        if isinstance(o, torch.Tensor):
            return list(o.shape)
    return None


def survives(torch, overload, values):
    """The op runs on values and gives a finite, non-empty output (run_forked)."""

    def finite():
        out = flat_output(torch, overload, values)
        return out is not None and out.numel() > 0 and bool(torch.isfinite(out).all())

    return run_forked(torch, finite) is True


def run_forked(torch, fn):
    """fn()'s answer (a small picklable value), got in a forked copy of this process: a kernel given shapes it does
    not check may crash the process (_slow_conv2d_backward segfaults) or not end (killed after RETRY_SECONDS); None
    when it raised, crashed or ran out of time. The copy is in this process group and under its limits; it writes
    nothing but its answer to a pipe."""
    import os
    import pickle
    import signal
    import time

    try:
        read, write = os.pipe()
        pid = os.fork()
    except OSError:
        return None
    if pid == 0:  # (the copy: one thread, its answer on the pipe)
        os.close(read)
        try:
            die_with_parent()
            torch.set_num_threads(1)
            data = pickle.dumps(fn())
            while data:
                data = data[os.write(write, data) :]
        except BaseException:
            pass
        finally:
            os._exit(0)
    os.close(write)
    os.set_blocking(read, False)
    chunks = []
    deadline = time.monotonic() + RETRY_SECONDS
    try:
        while True:
            try:
                chunk = os.read(read, 65536)
            except BlockingIOError:
                chunk = None
            if chunk:
                chunks.append(chunk)
            done, _ = os.waitpid(pid, os.WNOHANG)
            if done:
                while True:
                    try:
                        chunk = os.read(read, 65536)
                    except BlockingIOError:
                        break
                    if not chunk:
                        break
                    chunks.append(chunk)
                break
            if time.monotonic() > deadline:
                os.kill(pid, signal.SIGKILL)
                os.waitpid(pid, 0)
                return None
            time.sleep(0.002)
    finally:
        os.close(read)
    try:
        return pickle.loads(b"".join(chunks)) if chunks else None
    except Exception:
        return None


def _op_without_cpu_kernel(message):
    """The aten op a dispatcher error names as having no kernel for the CPU backend, None for any other message."""
    import re

    m = re.search(r"Could not run '(aten::[\w.]+)' with arguments from the 'CPU' backend", message)
    return None if m is None else m.group(1)


def formula_without_cpu_kernel(message):
    """'no CPU kernel: ...' when a formula raised for want of a dense CPU kernel of an op it calls (matmul's
    matmul_backward, a nested-tensor op): a fact about the formula, not a disagreement; None otherwise."""
    op = _op_without_cpu_kernel(message)
    return None if op is None else f"no CPU kernel: the formula calls {op}, which has no kernel for dense CPU tensors"


def op_without_cpu_kernel(message):
    """'no CPU kernel: ...' when the op itself, called on inputs made from the schema, raised for want of a dense CPU
    kernel of an op it calls (an autogenerated `_copy` of a nested-only view) or of an accelerator (`_pin_memory`): a
    fact about the op, not inputs that do not fit; None otherwise."""
    op = _op_without_cpu_kernel(message)
    if op is not None:
        return f"no CPU kernel: the op calls {op}, which has no kernel for dense CPU tensors"
    if "Cannot access accelerator device when none is available" in message:
        return "no CPU kernel: the op needs an accelerator device (none on a CPU-only build)"
    if "please use TORCH_LIBRARY_IMPL to override this function" in message:  # (the *_overrideable ops)
        return "no CPU kernel: the op's only kernel raises, for an out-of-tree backend to override it"
    return None


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
