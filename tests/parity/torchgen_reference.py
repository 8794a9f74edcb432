"""Run torchgen's own loader and turn its result into `derivls dump`'s JSON shape.

Only the tests import torchgen; derivls never does.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any


def _saved(saved: Any) -> dict[str, str]:
    name = saved.nctype.name
    return {"name": name if isinstance(name, str) else name.name, "type": saved.nctype.cpp_type(), "expr": saved.expr}


def info_to_json(info: Any, dispatch_key: str) -> dict[str, Any]:
    return {
        "name": info.name,
        "schema": str(info.func.func),
        "dispatch_key": dispatch_key,
        "op": info.op,
        "args_with_derivatives": [b.name for b in info.args_with_derivatives],
        "non_differentiable_arg_names": list(info.non_differentiable_arg_names),
        "output_differentiability": None
        if info.output_differentiability is None
        else list(info.output_differentiability),
        "output_differentiability_conditions": None
        if info.output_differentiability_conditions is None
        else list(info.output_differentiability_conditions),
        "available_named_gradients": list(info.available_named_gradients),
        "used_named_gradients": sorted(info.used_named_gradients),
        "all_saved_inputs": [_saved(s) for s in info.all_saved_inputs],
        "all_saved_outputs": [_saved(s) for s in info.all_saved_outputs],
        "derivatives": [
            {
                "var_names": list(d.var_names),
                "formula": d.formula,
                "original_formula": d.original_formula,
                "saved_inputs": [_saved(s) for s in d.saved_inputs],
                "saved_outputs": [_saved(s) for s in d.saved_outputs],
                "named_gradients": sorted(d.named_gradients),
            }
            for d in info.derivatives
        ],
        "forward_derivatives": [
            {
                "var_names": list(fw.var_names),
                "var_types": [str(t) for t in fw.var_types],
                "formula": fw.formula,
                "required_inputs_fw_grad": None
                if fw.required_inputs_fw_grad is None
                else sorted(fw.required_inputs_fw_grad),
                "required_inputs_primal": None
                if fw.required_inputs_primal is None
                else sorted(fw.required_inputs_primal),
            }
            for fw in info.forward_derivatives
        ],
    }


def torchgen_load(derivatives: Path, native: Path, tags: Path) -> tuple[Any, set[str]]:
    from torchgen.packaged.autograd import load_derivatives as module

    module._GLOBAL_LOAD_DERIVATIVE_CACHE.clear()
    return module.load_derivatives(str(derivatives), str(native), str(tags))


def torchgen_dump(derivatives: Path, native: Path, tags: Path) -> dict[str, Any]:
    infos, used = torchgen_load(derivatives, native, tags)
    return {
        "infos": [info_to_json(info, key) for per_key in infos.values() for key, info in per_key.items()],
        "used_dispatch_keys": sorted(used),
    }
