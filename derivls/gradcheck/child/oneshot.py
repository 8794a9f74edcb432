"""One run (the child started without `--serve`: derivls/gradcheck/runner.py).

Reads a JSON request line on stdin: {"units": [...], "double_backward": bool, "max_samples": n, "reach":
{aten overload: [OpInfo]} or null (then it is made and sent: {"event": "reach-index", "index": ...}), with "library": path.so and "namespace": ns in it, or (so that importing torch and finding OpInfo samples
overlap the compile) in a second line sent once the extension is built; no second line (end of input)
ends the run. Writes JSON lines on stdout: {"event": "torch", ...}, {"event": "samples"} once the samples
are found, then per unit {"event": "unit-start", "id"} and {"event": "unit", "id", "status": "passed"|"failed"|"not-checkable", "reason",
"samples", "inputs": "opinfo"|"schema"|"layout", "checks": {kind: how many ran}, "unstable": special points left out, "failures": [{"kind", "input",
"output", "sample", "dtype", "message"}]} (kind: "backward" gradcheck, "forward" check_forward_ad,
"double-backward" gradgradcheck, run only after the input's backward gradcheck passed), then
{"event": "done"}.
"""

import json
import sys
import traceback

from .checks import check_unit
from .protocol import emit
from .reach import reach_index
from .samples import find_samples
from .variants import inplace_fit, variants


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
        emit({"event": "unit-start", "id": unit["id"]})  # (a crash of torch on its samples is then this unit's)
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
        emit({"event": "unit-start", "id": unit["id"]})  # (each candidate is bounded as a unit)
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
