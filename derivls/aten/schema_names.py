"""Operator names of JIT schemas: `add_.Tensor`, dunder methods (torchgen.model's; see schema.py)."""

from __future__ import annotations

import re

from derivls.aten.sharing import shared
from derivls.base.frozen import frozen_dataclass

_OPNAME_CACHE: dict[str, OperatorName] = {}


# --------------------------------------------------------------------------------------
# Operator names
# --------------------------------------------------------------------------------------

# Names that are valid as __iXXX__ (in-place) dunder methods (PEP 203).
AUGMENTED_ASSIGNMENT_NAMES = [
    "add",
    "sub",
    "mul",
    "div",
    "mod",
    "pow",
    "lshift",
    "rshift",
    "and",
    "xor",
    "or",
]

_NS_RE = re.compile(r"^(?:(.*)::)?(.*)$")
_DUNDER_RE = re.compile(r"^__([^_]+)__$")


@frozen_dataclass(slots=True, extra_slots=("_str",), unpickled=("_str",))
class BaseOperatorName:
    # lazily filled caches (not dataclass fields: no annotation)
    _str = None

    base: str
    inplace: bool
    dunder_method: bool
    # Note [Overload Ambiguity With Functional Variants]: the functional variant of a
    # "mutable" op is a new base name `<op>_functional`, not an overload.
    functional_overload: bool = False
    # Not used by native_functions.yaml; part of the printed name when present.
    namespace: str | None = None

    @staticmethod
    def parse(op: str) -> BaseOperatorName:
        if op == "":
            raise ValueError("operator name cannot be empty")
        if op.endswith("_out"):
            raise ValueError(
                f"'{op}': the _out suffix is reserved and not permitted for operator names; "
                "did you mean to specify an out overload name instead?"
            )
        if "::" not in op and not op.startswith("__"):
            # the usual case (no namespace, not a dunder): plain string operations
            inplace = op[-1] == "_"
            base = op[:-1] if inplace else op
            functional_overload = base.endswith("_functional")
            if functional_overload:
                if inplace:
                    raise ValueError(f"functional overload cannot be a dunder method or inplace: {op}")
                base = base[: -len("_functional")]
            r = BaseOperatorName(
                base=shared(base), inplace=inplace, dunder_method=False, functional_overload=functional_overload
            )
            # base + ('_' | '_functional' | '') is `op` by construction: it prints as `op`
            object.__setattr__(r, "_str", shared(op))
            return r
        match = _NS_RE.match(op)
        namespace = match.group(1) if match else ""
        op_without_ns = match.group(2) if match else op
        if not op_without_ns:
            raise ValueError(f"operator name cannot be empty: '{op}'")
        m = _DUNDER_RE.match(op_without_ns)
        if m is not None:
            dunder_method = True
            base = m.group(1)
            if any(base == f"i{n}" for n in AUGMENTED_ASSIGNMENT_NAMES):
                inplace = True
                base = base[1:]
            else:
                inplace = False
                # historically true of every dunder method ATen has (see torchgen)
                if base[0] == "i":
                    raise ValueError(f"unexpected dunder method starting with 'i': {op}")
        else:
            dunder_method = False
            base = op_without_ns
            if base[-1] == "_":
                inplace = True
                base = base[:-1]
            else:
                inplace = False

        functional_suffix = "_functional"
        if base.endswith(functional_suffix):
            functional_overload = True
            base = base[: -len(functional_suffix)]
            if dunder_method or inplace:
                raise ValueError(f"functional overload cannot be a dunder method or inplace: {op}")
        else:
            functional_overload = False

        r = BaseOperatorName(
            base=base,
            inplace=inplace,
            dunder_method=dunder_method,
            functional_overload=functional_overload,
            namespace=namespace,
        )
        if str(r) != op:
            raise ValueError(f"operator name '{op}' does not round-trip (got '{r}')")
        return r

    def __str__(self) -> str:
        s = self._str
        if s is None:
            namespace_prefix = f"{self.namespace}::" if self.namespace else ""
            if self.dunder_method:
                i = "i" if self.inplace else ""
                s = f"{namespace_prefix}__{i}{self.base}__"
            else:
                i = "_" if self.inplace else "_functional" if self.functional_overload else ""
                s = f"{namespace_prefix}{self.base}{i}"
            s = shared(s)
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass(slots=True, extra_slots=("_str",), unpickled=("_str",))
class OperatorName:
    # lazily filled caches (not dataclass fields: no annotation)
    _str = None

    name: BaseOperatorName
    overload_name: str

    @staticmethod
    def parse(op_name: str) -> OperatorName:
        r = _OPNAME_CACHE.get(op_name)
        if r is None:
            r = OperatorName._parse(op_name)
            _OPNAME_CACHE[op_name] = r
        return r

    @staticmethod
    def _parse(op_name: str) -> OperatorName:
        if "." in op_name:
            name, overload_name = op_name.split(".", 1)
        else:
            name = op_name
            overload_name = ""
        r = OperatorName(name=BaseOperatorName.parse(name), overload_name=shared(overload_name))
        if overload_name or "." not in op_name:
            # the name prints as `name` (BaseOperatorName.parse checks), so `r` as `op_name`
            object.__setattr__(r, "_str", shared(op_name))
        elif str(r) != op_name:  # a trailing '.': printed without it
            raise ValueError(f"operator name '{op_name}' does not round-trip (got '{r}')")
        return r

    def __str__(self) -> str:
        s = self._str
        if s is None:
            s = shared(f"{self.name}.{self.overload_name}" if self.overload_name else f"{self.name}")
            object.__setattr__(self, "_str", s)
        return s

    # Must match the naming scheme in aten/src/ATen/templates/Operators.h:
    # "op" or "op_overload".
    def unambiguous_name(self) -> str:
        if self.overload_name:
            return f"{self.name}_{self.overload_name}"
        return f"{self.name}"

    def remove_inplace(self) -> OperatorName:
        return OperatorName(
            name=BaseOperatorName(base=self.name.base, inplace=False, dunder_method=self.name.dunder_method),
            overload_name=self.overload_name,
        )

    def with_overload(self, overload: str) -> OperatorName:
        return OperatorName(
            name=BaseOperatorName(base=self.name.base, inplace=False, dunder_method=self.name.dunder_method),
            overload_name=overload,
        )
