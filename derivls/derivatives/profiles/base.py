"""What every loader generation (a Profile) answers; one subclass per generation.

A Profile owns everything that differs between loaders: how native_functions.yaml is read, the
per-entry analyzer, node numbering, the C++ view of a function (bindings, return types,
signature), the canonical function and overload group of a schema, the formula substitutions,
the `dump` shape and what completion may offer. Code outside `profiles/` asks the Profile; it
never tests which one it has.

Adding a variant (e.g. one per PyTorch release) is a subclass or an instance with other
parameters: see `TorchgenProfile`.
"""

from __future__ import annotations

from collections.abc import Sequence

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any, Protocol

    from derivls.aten.cpp_types import Binding
    from derivls.aten.native import NativeFunction, NativeIndex
    from derivls.derivatives.document import Entry
    from derivls.derivatives.results import EntryResult
    from derivls.derivatives.saved import Replacement

    class EntryAnalyzer(Protocol):
        def analyse(self, entry: Entry) -> EntryResult: ...

    class Analysis(Protocol):  # derivls.derivatives.loader.DocumentAnalysis
        @property
        def entries(self) -> Any: ...
        @property
        def infos(self) -> Any: ...
        @property
        def info_lines(self) -> Any: ...
        @property
        def used_dispatch_keys(self) -> Any: ...
        @property
        def index(self) -> Any: ...


AUTO = "auto"

# per entry, its (dispatch key, node name or None) pairs
OpNames = tuple[tuple[str, "str | None"], ...]


class Profile:
    """One loader generation. Instances are immutable and compare by value."""

    name: str = "?"  # what --profile and the `profile` setting call it
    # native_functions.yaml as that generation's torchgen read it: True = the 2021 grammar, no
    # generated functions, no view groups
    native_2021_grammar: bool = False
    # completion facts: what an entry of this generation may contain
    forward_formulas: bool = True
    dispatch_sections: bool = True
    named_grads: bool = True
    # torchgen 2.x's autograd codegen checks (gen_variable_type & co.) run after the loader
    codegen_stage_checks: bool = True
    # why this profile was chosen (set by `detect.choose`), for hover and `check`'s summary
    reason: str = ""

    def describe(self) -> str:
        """One line: which rules and why they were chosen."""
        return f"{self.name} rules ({self.reason})" if self.reason else f"{self.name} rules"

    def because(self, reason: str) -> Profile:
        """This profile, chosen for `reason`."""
        raise NotImplementedError

    # -- analysis ------------------------------------------------------------------------------

    def entry_analyzer(self, index: NativeIndex, native_path: str | None) -> EntryAnalyzer:
        raise NotImplementedError

    def number_ops(self, results: Sequence[EntryResult]) -> list[OpNames]:
        """Node names of every entry (they depend on all earlier entries)."""
        raise NotImplementedError

    # -- the C++ view of a function ----------------------------------------------------------

    def bindings(self, f: NativeFunction) -> Sequence[Binding]:
        """The C++ arguments formulas refer to (empty if this generation cannot express `f`)."""
        raise NotImplementedError

    def return_cpp_types(self, f: NativeFunction) -> list[str]:
        raise NotImplementedError

    def cpp_signature(self, f: NativeFunction) -> str:
        raise NotImplementedError

    def substitutions(self, f: NativeFunction) -> tuple[list[str], Sequence[Replacement]]:
        """(the variable names a formula of `f` may use, the rules that rewrite `name.sizes()` & co.)."""
        raise NotImplementedError

    # -- which functions an entry is about ---------------------------------------------------

    def canonical_function(self, index: NativeIndex, f: NativeFunction, defn_name: str) -> NativeFunction | None:
        """The function of `f`'s overload group the entry's infos are about (None: none qualifies)."""
        raise NotImplementedError

    def overload_group(self, index: NativeIndex, f: NativeFunction) -> list[NativeFunction]:
        """The functions sharing `f`'s formulas (functional, in-place, out, …)."""
        raise NotImplementedError

    # -- output --------------------------------------------------------------------------------

    def dump(self, analysis: Analysis) -> dict[str, Any]:
        """`derivls dump`'s JSON: the shape this generation's loader returns."""
        raise NotImplementedError

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Profile):
            return type(self) is type(other) and self._key() == other._key()
        return NotImplemented

    def __hash__(self) -> int:
        return hash(self._key())

    def _key(self) -> tuple:
        return (self.name,)

    def __repr__(self) -> str:
        return f"<Profile {self.describe()}>"
