"""The `derivls dump` JSON shape: one object per (entry, dispatch key), torchgen's order."""

from __future__ import annotations

from typing import Any

from derivls.derivatives.loader import DocumentAnalysis
from derivls.derivatives.model import DifferentiabilityInfo, SavedAttribute
from derivls.derivatives.profiles import profile_of
from derivls.derivatives.saved import plain_name


def saved_to_json(saved: SavedAttribute) -> dict[str, str]:
    return {"name": plain_name(saved.nctype), "type": saved.nctype.cpp_type(), "expr": saved.expr}


def info_to_json(info: DifferentiabilityInfo, dispatch_key: str, line: int | None) -> dict[str, Any]:
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
        "all_saved_inputs": [saved_to_json(s) for s in info.all_saved_inputs],
        "all_saved_outputs": [saved_to_json(s) for s in info.all_saved_outputs],
        "derivatives": [
            {
                "var_names": list(d.var_names),
                "formula": d.formula,
                "original_formula": d.original_formula,
                "saved_inputs": [saved_to_json(s) for s in d.saved_inputs],
                "saved_outputs": [saved_to_json(s) for s in d.saved_outputs],
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
        "line": None if line is None else line + 1,
    }


# -- the legacy profile: only what the 2021 loader's DifferentiabilityInfo had --------------------


def legacy_info_to_json(info: DifferentiabilityInfo) -> dict[str, Any]:
    """The 2021 fields only (no forward derivatives, named gradients, conditions or original
    formulas); types are 2021 C++ strings. One object per entry, as the 2021 loader's list."""
    return {
        "name": info.name,
        "schema": str(info.func.func),
        "dispatch_key": "Default",
        "op": info.op,
        "args_with_derivatives": [b.name for b in info.args_with_derivatives],
        "non_differentiable_arg_names": list(info.non_differentiable_arg_names),
        "output_differentiability": None
        if info.output_differentiability is None
        else list(info.output_differentiability),
        "all_saved_inputs": [saved_to_json(s) for s in info.all_saved_inputs],
        "all_saved_outputs": [saved_to_json(s) for s in info.all_saved_outputs],
        "derivatives": [
            {
                "var_names": list(d.var_names),
                "formula": d.formula,
                "saved_inputs": [saved_to_json(s) for s in d.saved_inputs],
                "saved_outputs": [saved_to_json(s) for s in d.saved_outputs],
            }
            for d in info.derivatives
        ],
    }


def legacy_dump(analysis: DocumentAnalysis) -> dict[str, Any]:
    return {"infos": [legacy_info_to_json(info) for entry in analysis.entries for _, info in entry.infos()]}


def dump(analysis: DocumentAnalysis) -> dict[str, Any]:
    if profile_of(analysis) == "legacy":
        return legacy_dump(analysis)
    infos = [
        info_to_json(info, key, analysis.info_lines.get(schema))
        for schema, per_key in analysis.infos.items()
        for key, info in per_key.items()
    ]
    rules = getattr(analysis.index, "rules", None)
    if rules is not None:  # the C++ spelling of the release (c10::optional up to 2.3)
        for info in infos:
            for saved in _saved_lists(info):
                for s in saved:
                    s["type"] = rules.respell(s["type"])
    return {"infos": infos, "used_dispatch_keys": sorted(analysis.used_dispatch_keys)}


def _saved_lists(info: dict[str, Any]) -> list[list[dict[str, str]]]:
    lists = [info["all_saved_inputs"], info["all_saved_outputs"]]
    for d in info["derivatives"]:
        lists += [d["saved_inputs"], d["saved_outputs"]]
    return lists
