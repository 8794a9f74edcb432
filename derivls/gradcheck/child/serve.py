"""`--serve`: a session that stays alive (derivls/gradcheck/session.py), torch and op_db imported once; its
requests and answers are serve's doc."""

import json
import sys
import time
import traceback

from .checks import check_unit
from .jit import jit_define, jit_init
from .protocol import emit, rss_bytes
from .reach import reach_index
from .samples import find_samples
from .variants import UNSTABLE, variants


def sample_key(unit, max_samples):
    """What a unit's samples depend on (not its id or its compiled functions' names, which change per build)."""
    return json.dumps([unit["aten"], unit["overload"], unit["args"], unit["wrt"], max_samples])


def serve():
    """`--serve`: one JSON request a line on stdin, JSON lines on stdout, until `quit` or end of input.

    {"op": "ping"} -> {"event": "pong", "rss": bytes}
    {"op": "prepare", "units", "max_samples", "reach"} -> finds (once per unit's overload and arguments) the
        samples, and the samples made from them -> {"event": "prepared", "units": how many were new}
    {"op": "check", "library", "namespace", "units", "max_samples", "double_backward"} -> loads the extension
        (once per path: each build is a library of its own namespace), then the run's events: a "unit-start" and a
        "unit" per unit, then {"event": "done"}
    {"op": "jit-init", "libraries", "include_dirs", "includes", "prelude", "optimization", "warmup"} -> {"event": "jit",
        "ready": bool, "reason", "seconds"}: cppyy imported, Cling's -O level set, the libraries loaded RTLD_GLOBAL,
        the includes parsed (jit_init)
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
    jit = {}  # the JIT's state: "cppyy" once ready, "broken" after a rejected or unlinked definition, "defined" namespaces

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
                started = time.monotonic()
                failed = jit_define(torch, jit, request["jit"])
                if failed is not None:
                    emit(failed)
                    emit({"event": "done", "rss": rss_bytes()})
                    continue
                emit({"event": "jit-defined", "seconds": round(time.monotonic() - started, 3)})
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
                emit({"event": "unit-start", "id": unit["id"]})  # (the caller bounds each unit's checks from here)
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
