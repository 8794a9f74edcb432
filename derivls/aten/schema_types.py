"""Schema kinds, annotations and types of JIT schemas (torchgen.model's; see schema.py)."""

from __future__ import annotations

import re
from collections.abc import Callable
from enum import Enum, auto

from derivls.base.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any


class _CallableBool:
    """A bool that can also be called: torchgen makes ``is_mutable`` / ``modifies_arguments``
    properties, while callers sometimes write them as methods; both spellings work."""

    __slots__ = ("_v",)

    def __init__(self, v: bool) -> None:
        self._v = v

    def __bool__(self) -> bool:
        return self._v

    def __call__(self) -> bool:
        return self._v

    def __eq__(self, other: object) -> bool:
        return bool(self) == other

    def __hash__(self) -> int:
        return hash(self._v)

    def __repr__(self) -> str:
        return repr(self._v)


def _state_without_hash(obj: Any) -> dict[str, Any]:
    """__getstate__ of a class whose hash `_cached_hash` remembers: str hashes differ between
    processes, so a pickled object (derivls.base.diskcache) must compute its hash again."""
    state = dict(obj.__dict__)
    state.pop("_hash", None)
    return state


def _cached_hash(obj: Any, fields: Callable[[], tuple]) -> int:
    # Frozen dataclasses recompute nested tuple hashes on every lookup; schemas are
    # used as dict keys thousands of times per load, so remember the value.
    h = obj._hash
    if h is None:
        h = hash(fields())
        object.__setattr__(obj, "_hash", h)
    return h


# --------------------------------------------------------------------------------------
# Schema kinds
# --------------------------------------------------------------------------------------


class SchemaKind(Enum):
    # members are singletons: identity hashing is valid and much cheaper than Enum's
    __hash__ = object.__hash__

    functional = auto()
    inplace = auto()
    out = auto()
    mutable = auto()
    scratch = auto()


# --------------------------------------------------------------------------------------
# Annotations
# --------------------------------------------------------------------------------------

_ANNOTATION_CACHE: dict[str, Annotation] = {}
_ANNOTATION_RE = re.compile(r"^([a-z])(\|[a-z])*(!?)( -> (\*|[a-z](\|[a-z])*))?$")


@frozen_dataclass
class Annotation:
    # Typically one element; a tuple (not a set) so the order is canonical.
    alias_set: tuple[str, ...]
    is_write: bool
    alias_set_after: tuple[str, ...]

    @staticmethod
    def parse(ann: str) -> Annotation:
        r = _ANNOTATION_CACHE.get(ann)  # immutable: one object per annotation text
        if r is None:
            r = _ANNOTATION_CACHE[ann] = Annotation._parse(ann)
        return r

    @staticmethod
    def _parse(ann: str) -> Annotation:
        m = _ANNOTATION_RE.match(ann)
        if m is None:
            raise ValueError(f"unrecognized alias annotation '{ann}'")
        before_alias = m.group(1) + (m.group(2) if m.group(2) else "")
        alias_set = tuple(before_alias.split("|"))
        is_write = m.group(3) == "!"
        if is_write and len(alias_set) > 1:
            raise ValueError(f"alias set larger than 1 is not mutable, got '{ann}' instead")
        after_set = tuple(m.group(5).split("|")) if m.group(5) else ()
        if len(before_alias) > 1 and len(after_set) > 1:
            raise ValueError(
                f"before alias set and after alias set cannot be larger than 1 at the same time, got '{ann}' instead"
            )
        r = Annotation(alias_set=alias_set, is_write=is_write, alias_set_after=after_set)
        if str(r) != ann:
            raise ValueError(f"alias annotation '{ann}' does not round-trip (got '{r}')")
        return r

    def __str__(self) -> str:
        alias_set = "|".join(self.alias_set)
        if self.is_write:
            alias_set = f"{alias_set}!"
        alias_set_after = "|".join(self.alias_set_after)
        if alias_set_after:
            alias_set = f"{alias_set} -> {alias_set_after}"
        return alias_set


# --------------------------------------------------------------------------------------
# Types
# --------------------------------------------------------------------------------------


class BaseTy(Enum):
    __hash__ = object.__hash__  # see SchemaKind

    Generator = auto()
    ScalarType = auto()
    Tensor = auto()
    int = auto()
    DimVector = auto()
    float = auto()
    str = auto()
    bool = auto()
    Layout = auto()
    Device = auto()
    DeviceIndex = auto()
    Scalar = auto()
    MemoryFormat = auto()
    QScheme = auto()
    Storage = auto()
    Stream = auto()
    SymInt = auto()
    SymBool = auto()
    GraphModule = auto()
    # Not in torchgen 2.13: named-tensor dimension names, used by 2021-era files.
    # Only accepted by the legacy grammar (see LEGACY_BASE_TYS).
    Dimname = auto()


# Base types the 2.13 grammar rejects but the 2021 grammar (legacy=True) accepts.
LEGACY_BASE_TYS: frozenset[BaseTy] = frozenset({BaseTy.Dimname})

_OPTIONAL_RE = re.compile(r"^(.+)\?$")
_LIST_RE = re.compile(r"^(.+)\[([0-9]+)?\]$")
_CUSTOM_CLASS_RE = re.compile(r"^__torch__\.torch\.classes\.([a-zA-Z0-9_.]+)$")
_TYPE_CACHE: dict[tuple[str, bool], Type] = {}


@frozen_dataclass
class Type:
    @staticmethod
    def parse(t: str, *, legacy: bool = False) -> Type:
        key = (t, legacy)
        r = _TYPE_CACHE.get(key)
        if r is None:
            r = Type._parse(t, legacy)
            if str(r) != t:
                raise ValueError(f"type '{t}' does not round-trip (got '{r}')")
            _TYPE_CACHE[key] = r
        return r

    @staticmethod
    def _parse(t: str, legacy: bool = False) -> Type:
        m = _OPTIONAL_RE.match(t)
        if m is not None:
            return OptionalType(Type.parse(m.group(1), legacy=legacy))
        m = _LIST_RE.match(t)
        if m is not None:
            size = int(m.group(2)) if m.group(2) is not None else None
            return ListType(elem=Type.parse(m.group(1), legacy=legacy), size=size)
        m = _CUSTOM_CLASS_RE.match(t)
        if m is not None:
            return CustomClassType(m.group(1))
        ty = BaseTy.__members__.get(t)
        if ty is None:
            raise ValueError(f"unrecognized type '{t}'")
        if ty in LEGACY_BASE_TYS and not legacy:
            raise ValueError(f"type '{t}' is no longer supported (only in legacy files)")
        return BaseType(ty)

    def __str__(self) -> str:
        raise NotImplementedError

    # As in torchgen these are loosely defined ("is int?[] nullable?"); kept for parity.
    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        raise NotImplementedError

    def is_tensor_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Tensor)

    def is_generator_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.Generator)

    def is_symint_like(self) -> bool:
        return self.is_base_ty_like(BaseTy.SymInt)

    def is_nullable(self) -> bool:
        raise NotImplementedError

    def is_list_like(self) -> ListType | None:
        raise NotImplementedError


@frozen_dataclass
class BaseType(Type):
    name: BaseTy

    def __str__(self) -> str:
        return f"{self.name.name}"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.name == base_ty

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None

    def is_symint_like(self) -> bool:
        return self.name == BaseTy.SymInt


@frozen_dataclass
class OptionalType(Type):
    elem: Type

    def __str__(self) -> str:
        return f"{self.elem}?"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base_ty)

    def is_symint_like(self) -> bool:
        return self.elem.is_symint_like()

    def is_nullable(self) -> bool:
        return True

    def is_list_like(self) -> ListType | None:
        return self.elem.is_list_like()


@frozen_dataclass
class CustomClassType(Type):
    class_name: str

    def __str__(self) -> str:
        return f"__torch__.torch.classes.{self.class_name}"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return False

    def is_symint_like(self) -> bool:
        return False

    def is_nullable(self) -> bool:
        return False

    def is_list_like(self) -> ListType | None:
        return None


@frozen_dataclass
class ListType(Type):
    elem: Type
    size: int | None

    def __str__(self) -> str:
        size = f"{self.size}" if self.size else ""
        return f"{self.elem}[{size}]"

    def is_base_ty_like(self, base_ty: BaseTy) -> bool:
        return self.elem.is_base_ty_like(base_ty)

    def is_symint_like(self) -> bool:
        return self.elem.is_symint_like()

    def is_nullable(self) -> bool:
        return self.elem.is_nullable()

    def is_list_like(self) -> ListType | None:
        return self


_TENSOR = BaseType(BaseTy.Tensor)
