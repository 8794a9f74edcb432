"""What analysing one derivatives.yaml entry produces (shared by every profile's entry analyzer)."""

from __future__ import annotations

import re

from derivls.aten.native import NativeFunction
from derivls.base.diagnostics import Diagnostic
from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.document import Entry, FormulaItem, Scalar
from derivls.derivatives.model import Derivative, DifferentiabilityInfo, ForwardDerivative

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from derivls.derivatives.profiles.base import Profile

AUTOGRAD_KEYS = (
    "AutogradNestedTensor",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradHIP",
    "AutogradXLA",
    "AutogradMTIA",
    "AutogradMPS",
    "AutogradIPU",
    "AutogradXPU",
    "AutogradHPU",
    "AutogradVE",
    "AutogradLazy",
    "AutogradMeta",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
)
VALID_DISPATCH_KEYS = frozenset(AUTOGRAD_KEYS) | {"Default"}

_SCHEMA_NAME = re.compile(r"(\w+)(\.\w+)?\((.*)\)")
_GRAD_INDEX = re.compile(r"(?:^|\W)grads\[(\d+)\]")
_RESULT_N = re.compile(r"^result(\d+)$")


@frozen_dataclass(slots=True)
class KeyResult:
    """What one `names: formula` item became (for hovers, inlay hints and completion)."""

    item: FormulaItem
    dispatch_key: str
    var_names: tuple[str, ...]
    kind: str  # "backward" | "forward" | "non_differentiable" | "invalid"
    derivative: Derivative | None = None
    forward: ForwardDerivative | None = None
    backward_intended: bool = False  # an invalid item that was meant as a backward formula


@frozen_dataclass(slots=True)
class SectionResult:
    dispatch_key: str
    key: Scalar
    info: DifferentiabilityInfo | None  # op is None here; the file pass names it
    keys: tuple[KeyResult, ...]

    @property
    def has_derivatives(self) -> bool:
        return self.info is not None and self.info.has_derivatives

    @property
    def intends_derivatives(self) -> bool:
        """Has a backward formula, or would have but for an error in one: node numbering stays put
        while a formula is being typed."""
        return self.has_derivatives or any(k.backward_intended for k in self.keys)


@frozen_dataclass(slots=True, extra_slots=("_op_plan", "_dispatch_keys"))
class EntryResult:
    _op_plan = None  # lazily filled caches (not fields: no annotation)
    _dispatch_keys = None

    entry: Entry
    defn_name: str | None
    schema_function: NativeFunction | None  # the function `name:` spells
    canonical: NativeFunction | None  # the function the infos are about
    sections: tuple[SectionResult, ...]
    diagnostics: tuple[Diagnostic, ...]
    guessed_has_derivatives: bool = False  # for op numbering when the schema is unknown
    profile: Profile | None = None  # the rules it was computed with

    @property
    def op_plan(self) -> tuple[tuple[str, str | None], ...]:
        """(dispatch key, op-name prefix or None if the node is not generated), per section.

        Guessed when the schema did not resolve, so one broken entry does not renumber every node
        after it. Cached: the file pass numbers every entry on every keystroke.
        """
        plan = self._op_plan
        if plan is None:
            plan = self._plan()
            object.__setattr__(self, "_op_plan", plan)
        return plan

    def _plan(self) -> tuple[tuple[str, str | None], ...]:
        if self.defn_name is None:
            return ()
        base = create_op_prefix(self.defn_name)
        if self.canonical is not None:
            counted = [(s.dispatch_key, s.intends_derivatives) for s in self.sections]
        else:
            counted = [
                (s.key.value, self.guessed_has_derivatives)
                for s in self.entry.sections
                if s.key.value in VALID_DISPATCH_KEYS
            ]
        return tuple(
            (key, (base if key == "Default" else base + key) if has_derivatives else None)
            for key, has_derivatives in counted
        )

    @property
    def dispatch_keys(self) -> tuple[str, ...]:
        keys = self._dispatch_keys
        if keys is None:
            keys = tuple(s.dispatch_key for s in self.sections)
            object.__setattr__(self, "_dispatch_keys", keys)
        return keys

    @property
    def schema_string(self) -> str | None:
        if self.entry.name is None or not isinstance(self.entry.name.value, str):
            return None
        return self.entry.name.value


def split_name_params(schema: str) -> str | None:
    m = _SCHEMA_NAME.match(schema)
    return m.group(1) if m else None


def create_op_prefix(name: str) -> str:
    camel_case = "".join(p.title() for p in name.split("_"))
    return (camel_case + "Backward").replace("ForwardBackward", "Backward")


def used_gradient_indices(formula: str) -> list[int]:
    if "grads[" not in formula:  # what every match contains: skip the regex
        return []
    return [int(i) for i in _GRAD_INDEX.findall(formula)]
