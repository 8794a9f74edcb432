"""The `legacy` profile: the January 2021 loader (its analyzer: derivls.derivatives.legacy)."""

from __future__ import annotations

from collections.abc import Sequence

from derivls.derivatives.profiles.base import OpNames, Profile

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from derivls.aten.cpp_types import Binding
    from derivls.aten.native import NativeFunction, NativeIndex
    from derivls.derivatives.legacy import LegacyEntryAnalyzer
    from derivls.derivatives.profiles.base import Analysis
    from derivls.derivatives.results import EntryResult
    from derivls.derivatives.saved import Replacement


class LegacyProfile(Profile):
    name = "legacy"
    native_2021_grammar = True
    forward_formulas = False  # 2021: no forward formulas, dispatch sections or named gradients
    dispatch_sections = False
    named_grads = False
    codegen_stage_checks = False  # the 2021 codegen had other rules

    def __init__(self, reason: str = "") -> None:
        self.reason = reason
        self._groups: dict[int, tuple[NativeIndex, LegacyEntryAnalyzer]] = {}

    def because(self, reason: str) -> LegacyProfile:
        return LegacyProfile(reason)

    def entry_analyzer(self, index: NativeIndex, native_path: str | None) -> LegacyEntryAnalyzer:
        from derivls.derivatives.legacy import LegacyEntryAnalyzer

        return LegacyEntryAnalyzer(index, native_path, self)

    def number_ops(self, results: Sequence[EntryResult]) -> list[OpNames]:
        from derivls.derivatives.legacy import legacy_op_numbering

        return [tuple(ops) for ops in legacy_op_numbering(results)]

    def bindings(self, f: NativeFunction) -> Sequence[Binding]:
        from derivls.derivatives.legacy_saved import legacy_facts

        try:
            return legacy_facts(f).bindings
        except ValueError:
            return ()

    def return_cpp_types(self, f: NativeFunction) -> list[str]:
        from derivls.derivatives.legacy_saved import legacy_facts

        try:
            return [t for _, t in legacy_facts(f).returns]
        except ValueError:
            return []

    def cpp_signature(self, f: NativeFunction) -> str:
        from derivls.aten import legacy_cpp

        try:
            return legacy_cpp.cpp_signature(f)
        except ValueError as e:
            return f"// not expressible in the 2021 C++ API: {e}"

    def substitutions(self, f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
        from derivls.derivatives.legacy_saved import LEGACY_REPLACEMENTS, legacy_facts

        try:
            facts = legacy_facts(f)
        except ValueError:
            return [], LEGACY_REPLACEMENTS
        return [n for n, _ in (*facts.arguments, *facts.returns)], LEGACY_REPLACEMENTS

    def _analyzer(self, index: NativeIndex) -> LegacyEntryAnalyzer:
        """One analyzer per index, for its 2021 signature groups."""
        hit = self._groups.get(id(index))
        if hit is None or hit[0] is not index:
            if len(self._groups) > 8:
                self._groups.clear()
            hit = self._groups[id(index)] = (index, self.entry_analyzer(index, None))
        return hit[1]

    def canonical_function(self, index: NativeIndex, f: NativeFunction, defn_name: str) -> NativeFunction | None:
        return self._analyzer(index).canonical(f, defn_name)

    def overload_group(self, index: NativeIndex, f: NativeFunction) -> list[NativeFunction]:
        return list(self._analyzer(index).group(f))

    def dump(self, analysis: Analysis) -> dict[str, Any]:
        from derivls.derivatives.dump import legacy_info_to_json

        return {"infos": [legacy_info_to_json(info) for entry in analysis.entries for _, info in entry.infos()]}


LEGACY = LegacyProfile()
