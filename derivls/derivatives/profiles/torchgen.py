"""The `torchgen` profile: PyTorch 2.x's loader (torchgen/api/autograd.py, load_derivatives.py).

Per-release variants: a release family that differs from the newest in a few rules is an instance
(or subclass) of `TorchgenProfile` with its own `release` / rule values; `describe()` names them.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence

from derivls.derivatives.profiles.base import OpNames, Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from derivls.aten.cpp_types import Binding
    from derivls.aten.native import NativeFunction, NativeIndex
    from derivls.derivatives.analysis import EntryAnalyzer
    from derivls.derivatives.profiles.base import Analysis
    from derivls.derivatives.results import EntryResult
    from derivls.derivatives.saved import Replacement


class TorchgenProfile(Profile):
    name = "torchgen"

    def __init__(self, release: str | None = None, reason: str = "") -> None:
        self.release = release  # None: the newest rules derivls knows
        self.reason = reason

    def describe(self) -> str:
        rules = f"torchgen {self.release} rules" if self.release else "torchgen rules"
        return f"{rules} ({self.reason})" if self.reason else rules

    def because(self, reason: str) -> TorchgenProfile:
        return TorchgenProfile(self.release, reason)

    def _key(self) -> tuple:
        return (self.name, self.release)

    def entry_analyzer(self, index: NativeIndex, native_path: str | None) -> EntryAnalyzer:
        from derivls.derivatives.analysis import EntryAnalyzer

        return EntryAnalyzer(index, native_path, self)

    def number_ops(self, results: Sequence[EntryResult]) -> list[OpNames]:
        """Every differentiable entry gets a per-prefix counter suffix: AddBackward0, AddBackward1, …"""
        counter: Counter[str] = Counter()
        numbered: list[OpNames] = []
        for result in results:
            ops: list[tuple[str, str | None]] = []
            for key, prefix in result.op_plan:
                if prefix is None:
                    ops.append((key, None))
                else:
                    ops.append((key, f"{prefix}{counter[prefix]}"))
                    counter[prefix] += 1
            numbered.append(tuple(ops))
        return numbered

    def bindings(self, f: NativeFunction) -> Sequence[Binding]:
        from derivls.derivatives.analysis import function_facts

        return function_facts(f).bindings

    def return_cpp_types(self, f: NativeFunction) -> list[str]:
        from derivls.derivatives.analysis import function_facts

        return [n.cpp_type() for n in function_facts(f).named_returns]

    def cpp_signature(self, f: NativeFunction) -> str:
        from derivls.aten import cpp

        sigs = cpp.CppSignatureGroup.from_native_function(f, method=False)
        sig = sigs.symint_signature if sigs.symint_signature is not None else sigs.signature
        return sig.decl()

    def substitutions(self, f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
        from derivls.derivatives.analysis import function_facts
        from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS, plain_name

        facts = function_facts(f)
        return [plain_name(n) for n in (*facts.arg_nctypes, *facts.named_returns)], TORCHGEN_REPLACEMENTS

    def canonical_function(self, index: NativeIndex, f: NativeFunction, defn_name: str) -> NativeFunction | None:
        from derivls.derivatives.analysis import canonical_function

        functions = index.by_signature.get(f.func.signature(), [])
        return canonical_function(functions, defn_name) if functions else None

    def overload_group(self, index: NativeIndex, f: NativeFunction) -> list[NativeFunction]:
        return list(index.by_signature.get(f.func.signature(), [f]))

    def dump(self, analysis: Analysis) -> dict[str, Any]:
        from derivls.derivatives.dump import info_to_json

        infos = [
            info_to_json(info, key, analysis.info_lines.get(schema))
            for schema, per_key in analysis.infos.items()
            for key, info in per_key.items()
        ]
        rules = getattr(analysis.index, "rules", None)
        if rules is not None:  # the C++ spelling of the release (c10::optional up to 2.3)
            for info in infos:
                lists = [info["all_saved_inputs"], info["all_saved_outputs"]]
                for d in info["derivatives"]:
                    lists += [d["saved_inputs"], d["saved_outputs"]]
                for saved in lists:
                    for s in saved:
                        s["type"] = rules.respell(s["type"])
        return {"infos": infos, "used_dispatch_keys": sorted(analysis.used_dispatch_keys)}


TORCHGEN = TorchgenProfile()
