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
