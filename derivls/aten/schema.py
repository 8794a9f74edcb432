"""JIT function schemas as native_functions.yaml writes them: a torch-free copy of torchgen.model.

Class names, field names and method semantics follow torchgen 2.13 (``torchgen/model.py``) so
that code written against torchgen objects reads these the same way. Differences, on purpose:

* every parse error is a ``ValueError`` (torchgen raises ``AssertionError``/``RuntimeError``);
  the message names the offending piece of text;
* ``legacy=True`` also accepts the early-2021 grammar (the ``Dimname`` base type, dropped from
  torchgen since), and skips torchgen's schema invariants, which that era's files predate;
* torchgen validates schema invariants in ``__post_init__`` (so for every object it builds);
  here ``FunctionSchema.parse`` runs the same checks once (``FunctionSchema.validate``), which
  keeps ``signature()`` and friends cheap;
* hashes of the big objects are cached: ``signature()`` results are dict keys in every lookup.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Callable, Iterator, Sequence
from enum import Enum, auto

from derivls.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "AUGMENTED_ASSIGNMENT_NAMES",
    "Annotation",
    "Argument",
    "Arguments",
    "BaseOperatorName",
    "BaseTy",
    "BaseType",
    "CustomClassType",
    "FunctionSchema",
    "LEGACY_BASE_TYS",
    "ListType",
    "OperatorName",
    "OptionalType",
    "Return",
    "SchemaKind",
    "SelfArgument",
    "TensorOptionsArguments",
    "Type",
    "parse_returns",
]


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


# --------------------------------------------------------------------------------------
# Arguments and returns
# --------------------------------------------------------------------------------------

_ANNOTATED_TENSOR_RE = re.compile(r"Tensor\((.+)\)(.*)")
_ARG_CACHE: dict[tuple[str, bool], Argument] = {}
_ARGUMENTS_CACHE: dict[tuple[str, bool], Arguments] = {}
_RETURNS_CACHE: dict[tuple[str, bool], tuple[Return, ...]] = {}
_OPNAME_CACHE: dict[str, OperatorName] = {}
_RET_CACHE: dict[tuple[str, bool], Return] = {}


def _split_annotation(type_and_annot: str, legacy: bool) -> tuple[Type, Annotation | None]:
    match = _ANNOTATED_TENSOR_RE.match(type_and_annot)
    if match:
        if match.group(2) not in ("", "?", "[]"):
            raise ValueError(
                f"unrecognized alias analysis form with Tensor: '{type_and_annot}' "
                "(only Tensor(a), Tensor(a)? and Tensor(a)[] are allowed)"
            )
        return Type.parse("Tensor" + match.group(2), legacy=legacy), Annotation.parse(match.group(1))
    return Type.parse(type_and_annot, legacy=legacy), None


def _annotated_type_str(type: Type, annotation: Annotation | None) -> str:
    s = f"{type}"
    if annotation:
        if s not in ("Tensor", "Tensor?", "Tensor[]"):
            raise ValueError(f"annotation on non-Tensor type: {s}")
        s = s.replace("Tensor", f"Tensor({annotation})")
    return s


@frozen_dataclass
class Argument:
    # lazily filled caches (not dataclass fields: no annotation)
    _str = None

    name: str
    type: Type
    default: str | None
    # Alias annotation of the Tensor inside `type` (Tensor(a!)? is an optional tensor whose
    # tensor is annotated); stored at top level as torchgen and c10::Argument do.
    annotation: Annotation | None

    @property
    def alias_info(self) -> Annotation | None:
        return self.annotation

    @staticmethod
    def parse(arg: str, *, legacy: bool = False) -> Argument:
        key = (arg, legacy)
        r = _ARG_CACHE.get(key)
        if r is None:
            r = Argument._parse(arg, legacy)
            _ARG_CACHE[key] = r
        return r

    @staticmethod
    def _parse(arg: str, legacy: bool) -> Argument:
        default: str | None
        if " " not in arg:
            raise ValueError(f"illegal argument '{arg}' (expected '<type> <name>')")
        if "=" in arg:
            if arg.count("=") != 1:
                raise ValueError(f"illegal argument with default value: '{arg}'")
            type_and_annot_and_name, default = arg.split("=")
            if " " not in type_and_annot_and_name:
                raise ValueError(f"illegal argument '{arg}' (expected '<type> <name>=<default>')")
            type_and_annot, name = type_and_annot_and_name.rsplit(" ", 1)
        else:
            type_and_annot, name = arg.rsplit(" ", 1)
            default = None
        type, annotation = _split_annotation(type_and_annot, legacy)
        r = Argument(name=name, type=type, default=default, annotation=annotation)
        if str(r) != arg:
            raise ValueError(f"argument '{arg}' does not round-trip (got '{r}')")
        return r

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        # cached: printing schemas (round-trip checks, by_schema keys) is on the hot path
        s = self._str
        if s is None:
            type = _annotated_type_str(self.type, self.annotation)
            if self.name is None:
                s = type
            else:
                mb_default = f"={self.default}" if self.default else ""
                s = f"{type} {self.name}{mb_default}"
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass
class Return:
    # lazily filled caches (not dataclass fields: no annotation)
    _str = None

    name: str | None
    type: Type
    annotation: Annotation | None

    @property
    def alias_info(self) -> Annotation | None:
        return self.annotation

    @staticmethod
    def parse(arg: str, *, legacy: bool = False) -> Return:
        key = (arg, legacy)
        r = _RET_CACHE.get(key)
        if r is None:
            r = Return._parse(arg, legacy)
            _RET_CACHE[key] = r
        return r

    @staticmethod
    def _parse(arg: str, legacy: bool) -> Return:
        name: str | None
        if " " in arg:
            type_and_annot, name = arg.rsplit(" ", 1)
        else:
            type_and_annot = arg
            name = None
        type, annotation = _split_annotation(type_and_annot, legacy)
        r = Return(name=name, type=type, annotation=annotation)
        if str(r) != arg:
            raise ValueError(f"return '{arg}' does not round-trip (got '{r}')")
        return r

    @property
    def is_write(self) -> bool:
        return self.annotation is not None and self.annotation.is_write

    def __str__(self) -> str:
        s = self._str
        if s is None:
            type = _annotated_type_str(self.type, self.annotation)
            s = type if self.name is None else f"{type} {self.name}"
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass
class SelfArgument:
    """The `self` argument of functions that may be methods."""

    argument: Argument


@frozen_dataclass
class TensorOptionsArguments:
    """dtype/layout/device/pin_memory, bundled because the C++ API passes them as TensorOptions."""

    dtype: Argument
    layout: Argument
    device: Argument
    pin_memory: Argument

    def all(self) -> Sequence[Argument]:
        return [self.dtype, self.layout, self.device, self.pin_memory]


def _strip_arg_annotation(a: Argument, strip_default: bool) -> Argument:
    if a.annotation is None and (not strip_default or a.default is None):
        return a  # already stripped: share the object (and its cached hash)
    return Argument(name=a.name, type=a.type, default=None if strip_default else a.default, annotation=None)


_TO_TYPES = (
    ("dtype", BaseType(BaseTy.ScalarType)),
    ("layout", BaseType(BaseTy.Layout)),
    ("device", BaseType(BaseTy.Device)),
    ("pin_memory", BaseType(BaseTy.bool)),
)


def _is_tensor_options_arg(a: Argument, name: str, ty: Type) -> bool:
    return a.name == name and (a.type == ty or a.type == OptionalType(ty))


@frozen_dataclass
class Arguments:
    # lazily filled caches (not dataclass fields: no annotation)
    _hash = None
    _str = None
    _signature = None
    _flat = None
    _has_symint = None

    # pre_self_positional is usually empty; where.self has `condition` before `self`.
    pre_self_positional: tuple[Argument, ...]
    self_arg: SelfArgument | None
    post_self_positional: tuple[Argument, ...]

    pre_tensor_options_kwarg_only: tuple[Argument, ...]
    tensor_options: TensorOptionsArguments | None
    # usually memory_format, which "should" be part of TensorOptions but is not
    post_tensor_options_kwarg_only: tuple[Argument, ...]

    # out= arguments are factored out of the kwarg-only ones (they are kwarg-only too)
    out: tuple[Argument, ...]

    def __hash__(self) -> int:
        return _cached_hash(
            self,
            lambda: (
                self.pre_self_positional,
                self.self_arg,
                self.post_self_positional,
                self.pre_tensor_options_kwarg_only,
                self.tensor_options,
                self.post_tensor_options_kwarg_only,
                self.out,
            ),
        )

    def _flats(self) -> tuple[tuple[Argument, ...], tuple[Argument, ...], tuple[Argument, ...], tuple[Argument, ...]]:
        # (positional, kwarg-only, non-out, all) computed once: the object is immutable
        # and shared by every schema with the same argument list
        r = self._flat
        if r is None:
            pos = self.pre_self_positional
            if self.self_arg is not None:
                pos = pos + (self.self_arg.argument,)
            pos = pos + self.post_self_positional
            kw = self.pre_tensor_options_kwarg_only
            if self.tensor_options is not None:
                kw = kw + tuple(self.tensor_options.all())
            kw = kw + self.post_tensor_options_kwarg_only
            r = (pos, kw, pos + kw, pos + kw + self.out)
            object.__setattr__(self, "_flat", r)
        return r

    # The flat_* properties return fresh lists, as torchgen's do (callers may mutate them).
    @property
    def flat_non_out(self) -> Sequence[Argument]:
        return list(self._flats()[2])

    @property
    def flat_positional(self) -> Sequence[Argument]:
        return list(self._flats()[0])

    @property
    def post_self_positional_mutable(self) -> Sequence[Argument]:
        return [a for a in self.post_self_positional if a.is_write]

    @property
    def flat_kwarg_only(self) -> Sequence[Argument]:
        """Keyword-only arguments, NOT including out arguments."""
        return list(self._flats()[1])

    @property
    def flat_all(self) -> Sequence[Argument]:
        return list(self._flats()[3])

    @property
    def non_out(self) -> Sequence[Argument | SelfArgument | TensorOptionsArguments]:
        ret: list[Argument | SelfArgument | TensorOptionsArguments] = []
        ret.extend(self.positional)
        ret.extend(self.kwarg_only)
        return ret

    @property
    def positional(self) -> Sequence[Argument | SelfArgument]:
        ret: list[Argument | SelfArgument] = []
        ret.extend(self.pre_self_positional)
        if self.self_arg is not None:
            ret.append(self.self_arg)
        ret.extend(self.post_self_positional)
        return ret

    @property
    def kwarg_only(self) -> Sequence[Argument | TensorOptionsArguments]:
        ret: list[Argument | TensorOptionsArguments] = []
        ret.extend(self.pre_tensor_options_kwarg_only)
        if self.tensor_options is not None:
            ret.append(self.tensor_options)
        ret.extend(self.post_tensor_options_kwarg_only)
        return ret

    @property
    def all(self) -> Sequence[Argument | SelfArgument | TensorOptionsArguments]:
        ret: list[Argument | SelfArgument | TensorOptionsArguments] = []
        ret.extend(self.positional)
        ret.extend(self.kwarg_only)
        ret.extend(self.out)
        return ret

    def mutable_arg_names(self) -> list[str]:
        return [a.name for a in self._flats()[3] if a.annotation is not None and a.annotation.is_write]

    def has_tensor_arg(self) -> bool:
        return any(a.type.is_tensor_like() for a in self._flats()[2])

    def has_symint_arg(self) -> bool:
        r = self._has_symint
        if r is None:
            r = any(a.type.is_symint_like() for a in self._flats()[2])
            object.__setattr__(self, "_has_symint", r)
        return r

    def has_generator_arg(self) -> bool:
        return any(a.type.is_generator_like() for a in self._flats()[2])

    def signature(self, *, strip_default: bool = False) -> Arguments:
        if strip_default:
            return self._compute_signature(True)
        r = self._signature
        if r is None:
            r = self._compute_signature(False)
            object.__setattr__(self, "_signature", r)
        return r

    def _compute_signature(self, strip_default: bool) -> Arguments:
        if not strip_default and self.tensor_options is None and not self.out:
            if not any(a.annotation is not None for a in self._flats()[0]) and not any(
                a.annotation is not None for a in self.pre_tensor_options_kwarg_only
            ):
                return self  # nothing to strip: share the object (and its cached hash)
        return Arguments(
            pre_self_positional=tuple(_strip_arg_annotation(a, strip_default) for a in self.pre_self_positional),
            self_arg=(
                SelfArgument(_strip_arg_annotation(self.self_arg.argument, strip_default))
                if self.self_arg is not None
                else None
            ),
            post_self_positional=tuple(_strip_arg_annotation(a, strip_default) for a in self.post_self_positional),
            # TensorOptions are dropped (so factory functions pair with their out=
            # variants); what followed them joins what preceded them.
            pre_tensor_options_kwarg_only=tuple(
                _strip_arg_annotation(a, strip_default) for a in self.pre_tensor_options_kwarg_only
            )
            + tuple(_strip_arg_annotation(a, strip_default) for a in self.post_tensor_options_kwarg_only),
            tensor_options=None,
            post_tensor_options_kwarg_only=(),
            out=(),
        )

    def remove_self_annotation(self) -> Arguments:
        if self.self_arg is None:
            raise ValueError("remove_self_annotation called but self_arg is None")
        a = self.self_arg.argument
        return Arguments(
            pre_self_positional=self.pre_self_positional,
            self_arg=SelfArgument(Argument(name=a.name, type=a.type, default=a.default, annotation=None)),
            post_self_positional=self.post_self_positional,
            pre_tensor_options_kwarg_only=self.pre_tensor_options_kwarg_only,
            tensor_options=self.tensor_options,
            post_tensor_options_kwarg_only=self.post_tensor_options_kwarg_only,
            out=self.out,
        )

    def with_out_args(self, outs: list[Argument]) -> Arguments:
        if len(self.out) != 0:
            raise ValueError(f"with_out_args called but out is not empty: {self.out}")
        return Arguments(
            pre_self_positional=self.pre_self_positional,
            self_arg=self.self_arg,
            post_self_positional=self.post_self_positional,
            pre_tensor_options_kwarg_only=self.pre_tensor_options_kwarg_only,
            tensor_options=self.tensor_options,
            post_tensor_options_kwarg_only=self.post_tensor_options_kwarg_only,
            out=tuple(outs),
        )

    @staticmethod
    def _preparse(args: str, legacy: bool = False) -> tuple[list[Argument], list[Argument], list[Argument]]:
        positional: list[Argument] = []
        kwarg_only: list[Argument] = []
        out: list[Argument] = []
        arguments_acc = positional
        # Like torchgen: a plain split on ", " (defaults such as [1,1] never contain ", ").
        for arg in args.split(", "):
            if not arg:
                continue
            if arg == "*":
                if arguments_acc is not positional:
                    raise ValueError("invalid syntax: kwarg-only specifier * can only occur once")
                arguments_acc = kwarg_only
                continue
            parg = _ARG_CACHE.get((arg, legacy)) or Argument.parse(arg, legacy=legacy)
            # A mutable kwarg-only argument starts the out= arguments (Note [is_out_fn]).
            if parg.annotation is not None and parg.annotation.is_write:
                if arguments_acc is kwarg_only:
                    arguments_acc = out
            elif arguments_acc is out:
                raise ValueError(f"non-mutable argument '{parg.name}' cannot follow mutable out arguments")
            arguments_acc.append(parg)
        return positional, kwarg_only, out

    @staticmethod
    def parse(args: str, *, legacy: bool = False) -> Arguments:
        """Input: 'int x, int y, *, int z'."""
        # Half of native_functions.yaml's argument lists are repeats: share the objects.
        key = (args, legacy)
        r = _ARGUMENTS_CACHE.get(key)
        if r is None:
            r = Arguments._parse(args, legacy)
            _ARGUMENTS_CACHE[key] = r
        return r

    @staticmethod
    def _parse(args: str, legacy: bool) -> Arguments:
        positional, kwarg_only, out = Arguments._preparse(args, legacy)

        self_ix = None
        for i, a in enumerate(positional):
            if a.name == "self":
                self_ix = i
                break
        if self_ix is not None:
            pre_self_positional = positional[:self_ix]
            self_arg: SelfArgument | None = SelfArgument(positional[self_ix])
            post_self_positional = positional[self_ix + 1 :]
        else:
            pre_self_positional = []
            self_arg = None
            post_self_positional = positional

        # Group dtype/layout/device/pin_memory (in this order) into TensorOptions.
        pre_tensor_options_kwarg_only: list[Argument] = []
        tensor_options: TensorOptionsArguments | None = None
        post_tensor_options_kwarg_only: list[Argument] = []
        kwarg_only_acc = pre_tensor_options_kwarg_only
        n = len(_TO_TYPES)
        i = 0
        while i < len(kwarg_only):
            # (a group can only start at an argument named dtype: the cheap test first)
            if (
                kwarg_only[i].name == "dtype"
                and i <= len(kwarg_only) - n
                and all(_is_tensor_options_arg(a, name, ty) for (name, ty), a in zip(_TO_TYPES, kwarg_only[i : i + n]))
            ):
                if kwarg_only_acc is not pre_tensor_options_kwarg_only:
                    raise ValueError("tensor options arguments can only appear once")
                tensor_options = TensorOptionsArguments(
                    dtype=kwarg_only[i],
                    layout=kwarg_only[i + 1],
                    device=kwarg_only[i + 2],
                    pin_memory=kwarg_only[i + 3],
                )
                i += n
                kwarg_only_acc = post_tensor_options_kwarg_only
                continue
            kwarg_only_acc.append(kwarg_only[i])
            i += 1

        r = Arguments(
            pre_self_positional=tuple(pre_self_positional),
            self_arg=self_arg,
            post_self_positional=tuple(post_self_positional),
            pre_tensor_options_kwarg_only=tuple(pre_tensor_options_kwarg_only),
            tensor_options=tensor_options,
            post_tensor_options_kwarg_only=tuple(post_tensor_options_kwarg_only),
            out=tuple(out),
        )
        if not legacy:
            mutable_pre_self = [a for a in r.pre_self_positional if a.is_write]
            if mutable_pre_self:
                raise ValueError(
                    "mutable arguments before self are not supported: " + ", ".join(str(a) for a in mutable_pre_self)
                )
        # The printed form, computed from the parts we already have (cheaper than __str__).
        parts = [str(a) for a in positional]
        if kwarg_only or out:
            parts.append("*")
        parts.extend(str(a) for a in kwarg_only)
        parts.extend(str(a) for a in out)
        object.__setattr__(r, "_str", ", ".join(parts))
        return r

    def __str__(self) -> str:
        s = self._str
        if s is None:
            all_arguments: list[str] = []
            all_arguments.extend(map(str, self.flat_positional))
            if self.flat_kwarg_only or self.out:
                all_arguments.append("*")
            all_arguments.extend(map(str, self.flat_kwarg_only))
            all_arguments.extend(map(str, self.out))
            s = ", ".join(all_arguments)
            object.__setattr__(self, "_str", s)
        return s

    def __post_init__(self) -> None:
        # Structural invariants torchgen also enforces on construction.
        if self.self_arg is None and self.pre_self_positional:
            raise ValueError("pre_self_positional is non-empty but self_arg is None")
        if self.tensor_options is None and self.post_tensor_options_kwarg_only:
            raise ValueError("post_tensor_options_kwarg_only is non-empty but tensor_options is None")


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


@frozen_dataclass
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
                base=base, inplace=inplace, dunder_method=False, functional_overload=functional_overload
            )
            # base + ('_' | '_functional' | '') is `op` by construction: it prints as `op`
            object.__setattr__(r, "_str", op)
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
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass
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
        r = OperatorName(name=BaseOperatorName.parse(name), overload_name=overload_name)
        if overload_name or "." not in op_name:
            # the name prints as `name` (BaseOperatorName.parse checks), so `r` as `op_name`
            object.__setattr__(r, "_str", op_name)
        elif str(r) != op_name:  # a trailing '.': printed without it
            raise ValueError(f"operator name '{op_name}' does not round-trip (got '{r}')")
        return r

    def __str__(self) -> str:
        s = self._str
        if s is None:
            s = f"{self.name}.{self.overload_name}" if self.overload_name else f"{self.name}"
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


# --------------------------------------------------------------------------------------
# Function schemas
# --------------------------------------------------------------------------------------


def parse_returns(return_decl: str, *, legacy: bool = False) -> tuple[Return, ...]:
    """'()' -> (); 'Tensor' -> (Tensor,); '(Tensor a, Tensor b)' -> two returns."""
    key = (return_decl, legacy)
    r = _RETURNS_CACHE.get(key)
    if r is None:
        r = _parse_returns(return_decl, legacy)
        _RETURNS_CACHE[key] = r
    return r


def _parse_returns(return_decl: str, legacy: bool) -> tuple[Return, ...]:
    if return_decl == "()":
        return ()
    if not return_decl:
        raise ValueError("missing return type after '->'")
    if return_decl[0] == "(" and return_decl[-1] == ")":
        return_decl = return_decl[1:-1]
    return tuple(Return.parse(arg, legacy=legacy) for arg in return_decl.split(", "))


def _returns_text(returns: tuple[Return, ...]) -> str:
    """How a schema prints its returns: one without parentheses, else a parenthesized list."""
    if len(returns) == 1:
        return str(returns[0])
    return "(" + ", ".join(map(str, returns)) + ")"


_PLAIN_RETURNS: dict[Type, Return] = {}
# (id(arguments), id(returns), inplace, 'functional' in overload) -> (arguments, returns) that
# FunctionSchema.validate accepted; the values keep the keyed objects alive
_VALID_SCHEMA_PARTS: dict[tuple[int, int, bool, bool], tuple[Arguments, tuple[Return, ...]]] = {}
# (id(arguments), id(returns)) -> (the returns of their signature(), arguments, returns)
_SIGNATURE_RETURNS: dict[tuple[int, int], tuple[tuple[Return, ...], Arguments, tuple[Return, ...]]] = {}
_SIGNATURE_NAMES: dict[tuple[str, bool], OperatorName] = {}


def _plain_return(t: Type) -> Return:
    # an unnamed, unannotated return of type t (shared: signatures are full of them)
    r = _PLAIN_RETURNS.get(t)
    if r is None:
        r = _PLAIN_RETURNS[t] = Return(name=None, type=t, annotation=None)
    return r


def _signature_name(base: str, dunder_method: bool) -> OperatorName:
    key = (base, dunder_method)
    r = _SIGNATURE_NAMES.get(key)
    if r is None:
        r = _SIGNATURE_NAMES[key] = OperatorName(
            name=BaseOperatorName(base=base, inplace=False, dunder_method=dunder_method),
            overload_name="",
        )
    return r


_DECL_RE = re.compile(r"(?P<name>[^\(]+)\((?P<args>.*)\) -> (?P<returns>.*)")


@frozen_dataclass
class FunctionSchema:
    # lazily filled caches (not dataclass fields: no annotation)
    _hash = None
    _str = None
    _signature = None
    _view_signature = None
    _kind = None

    name: OperatorName
    arguments: Arguments
    returns: tuple[Return, ...]

    decl_re = _DECL_RE

    # Equality and hashing go through the printed form, which is lossless (parse and str
    # round-trip exactly): signature() results are dict keys in every grouping step, and
    # comparing cached strings is far cheaper than comparing the nested dataclasses.
    def __eq__(self, other: object) -> bool:
        if self is other:
            return True
        if not isinstance(other, FunctionSchema):
            return NotImplemented
        return str(self) == str(other)

    def __hash__(self) -> int:
        h = self._hash
        if h is None:
            h = hash(str(self))
            object.__setattr__(self, "_hash", h)
        return h

    @property
    def is_mutable(self) -> _CallableBool:
        # torch._C._FunctionSchema.is_mutable: any argument is written to
        return _CallableBool(any(a.is_write for a in self.arguments._flats()[3]))

    def schema_order_arguments(self) -> Iterator[Argument]:
        return itertools.chain(self.arguments.flat_positional, self.arguments.flat_kwarg_only, self.arguments.out)

    @staticmethod
    def parse(func: str, *, legacy: bool = False) -> FunctionSchema:
        """Parse a schema string; raises ValueError (never anything else) on bad input.

        ``legacy=True`` accepts the 2021 grammar and skips the invariant checks."""
        if not isinstance(func, str):
            raise ValueError(f"a schema must be a string, not {type(func).__name__}")
        try:
            decls = _DECL_RE.findall(func)
            if len(decls) != 1:
                raise ValueError(f"invalid function schema: '{func}' (expected 'name(args) -> returns')")
            ops, args, return_decl = decls[0]
            name = OperatorName.parse(ops)
            arguments = Arguments.parse(args, legacy=legacy)
            returns = parse_returns(return_decl, legacy=legacy)
            r = FunctionSchema(name=name, arguments=arguments, returns=returns)
            # The printed form is name(args) -> returns from the parts' printed forms. The name's
            # equals `ops` (OperatorName.parse checks); when the others equal their text too and
            # the three cover `func`, it is `func` itself, which need not be printed again.
            if (
                len(ops) + len(args) + len(return_decl) + 6 == len(func)
                and arguments._str == args
                and _returns_text(returns) == return_decl
            ):
                object.__setattr__(r, "_str", func)
            elif str(r) != func:
                raise ValueError(f"schema does not round-trip: '{func}' was read as '{r}'")
            if not legacy:
                r.validate()
            return r
        except ValueError:
            raise
        except Exception as e:  # never let a malformed schema surface as a crash
            raise ValueError(f"invalid function schema '{func}': {e}") from e

    def validate(self) -> None:
        """torchgen's FunctionSchema.__post_init__ invariants; raises ValueError."""
        # The checks read only the argument list, the returns, whether the name is inplace and
        # whether the overload name says 'functional'. Argument lists and returns are shared
        # objects (see Arguments.parse, parse_returns), so half the schemas repeat a
        # combination already found valid (the referents are kept, so the ids stay theirs).
        args, returns, inplace = self.arguments, self.returns, self.name.name.inplace
        key = (id(args), id(returns), inplace, "functional" in self.name.overload_name)
        if key in _VALID_SCHEMA_PARTS:
            return
        self._validate()
        _VALID_SCHEMA_PARTS[key] = (args, returns)

    def _validate(self) -> None:
        if (
            not self.name.name.inplace
            and not any(a.annotation is not None for a in self.arguments._flats()[3])
            and not any(r.annotation is not None for r in self.returns)
        ):
            # no aliasing anywhere: no out=/inplace/mutable rule can apply, and the kind is
            # functional, so tensor options and 'functional' overload names are fine too
            return
        for arg, ret in zip(self.arguments.out, self.returns):
            if arg.annotation != ret.annotation:
                raise ValueError(
                    "out arguments must have matching return Tensor; furthermore, the ith "
                    f"argument needs to correspond to the ith return (argument '{arg}' vs "
                    f"return '{ret}')"
                )
        for a in self.arguments.post_self_positional_mutable:
            if any(a.annotation == r.annotation for r in self.returns):
                raise ValueError(f"a schema with mutable positional arguments must not return them: '{a}' in {self}")
        out_and_self = list(self.arguments.out) + [arg for arg in self.arguments.flat_positional if arg.name == "self"]
        mutable_returns = [r for r in self.returns if r.is_write]
        immutable_returns = [r for r in self.returns if not r.is_write]
        if mutable_returns and immutable_returns:
            raise ValueError(
                f"native functions must have either only mutable returns, or only immutable returns: {self}"
            )
        for ret in mutable_returns:
            if not any(ret.annotation == arg.annotation for arg in out_and_self):
                raise ValueError(
                    f"mutable return '{ret}' must be aliased either to a keyword argument or "
                    'to "self"; did you forget to mark an out argument as keyword-only?'
                )
        if self.arguments.out:
            if any(a.type != _TENSOR for a in self.arguments.out):
                if len(self.returns) != 0:
                    raise ValueError(
                        "out= ops that accept tensor lists as out arguments are expected to "
                        "have no return type (since you can't do method chaining on them)"
                    )
            else:
                non_scratch = len([a for a in self.arguments.out if not a.name.startswith("_scratch_")])
                if non_scratch != len(self.returns):
                    raise ValueError(
                        "must return as many arguments as there are out arguments, or no "
                        f"return at all; got {non_scratch} non-scratch out arguments and "
                        f"{len(self.returns)} returns"
                    )
        if self.name.name.inplace:
            self_a = self.arguments.self_arg
            if not (self_a and self_a.argument.annotation and self_a.argument.annotation.is_write):
                raise ValueError(
                    f"inplace op {self.name} must have a self argument with a mutable annotation, e.g. Tensor(a!) self"
                )
            if self_a.argument.type == _TENSOR:
                if not (len(self.returns) == 1 and self.returns[0].annotation == self_a.argument.annotation):
                    raise ValueError(f"inplace op {self.name} with Tensor self must return self")
            elif len(self.returns) != 0:
                raise ValueError(f"inplace op {self.name} with non-Tensor self must have no returns")
        if self.arguments.tensor_options is not None and self.kind() != SchemaKind.functional:
            raise ValueError(
                "tensor options arguments (dtype, layout, device, pin_memory) are only allowed "
                f"on functional (factory) operators: {self}"
            )
        if self.is_functional_fn() and self.kind() != SchemaKind.functional:
            raise ValueError(f"overload names containing 'functional' are reserved for functional operators: {self}")

    def returns_are_aliased(self) -> bool:
        return any(r for r in self.returns if r.annotation is not None and r.annotation.is_write)

    def is_functional_fn(self) -> bool:
        return "functional" in self.name.overload_name

    def is_out_fn(self) -> bool:
        # Note [is_out_fn]: out functions are the ones with a mutable kwarg-only argument.
        return bool(self.arguments.out)

    def kind(self) -> SchemaKind:
        k = self._kind
        if k is None:
            k = self._compute_kind()
            object.__setattr__(self, "_kind", k)
        return k

    def _compute_kind(self) -> SchemaKind:
        out = self.arguments.out
        is_out = bool(out)
        is_scratch = is_out and any(arg.name.startswith("_scratch_") for arg in out)
        is_inplace = self.name.name.inplace
        is_mutable = False
        for a in self.arguments.post_self_positional:
            if a.annotation is not None and a.annotation.is_write:
                is_mutable = True
                break
        if is_out and is_inplace:
            raise ValueError(f"a schema cannot be both out= and inplace: {self.name}")
        # out= and inplace take precedence over mutable positional arguments.
        if is_inplace:
            return SchemaKind.inplace
        if is_scratch:
            return SchemaKind.scratch
        if is_out:
            return SchemaKind.out
        if is_mutable:
            return SchemaKind.mutable
        return SchemaKind.functional

    def aliased_return_names(self) -> list[str | None]:
        """For each return: the name of the input it aliases, or None."""
        outs: list[str | None] = []
        for r in self.returns:
            aliased_args = [
                a for a in self.arguments.flat_all if a.annotation is not None and a.annotation == r.annotation
            ]
            if len(aliased_args) == 0:
                outs.append(None)
            elif len(aliased_args) == 1:
                outs.append(aliased_args[0].name)
            else:
                aliased_names = ", ".join(a.name for a in aliased_args)
                raise ValueError(f"found a return ({r.name}) that aliases multiple inputs ({aliased_names})")
        return outs

    def signature(
        self,
        *,
        strip_default: bool = False,
        strip_view_copy_name: bool = False,
        keep_return_names: bool = False,
    ) -> FunctionSchema:
        """The "core" functional signature shared by the functional/inplace/out/mutable
        variants of an op: overload name stripped, not inplace, no out= arguments,
        mutable positional arguments turned into (trailing) returns, annotations and
        return names stripped, TensorOptions dropped; optionally `_copy` stripped from
        the name so view ops pair with their view_copy variants."""
        if not (strip_default or strip_view_copy_name or keep_return_names):
            cached = self._signature
            if cached is not None:
                return cached

        default = not strip_default and not strip_view_copy_name and not keep_return_names
        base_name = self.name.name.base
        if strip_view_copy_name:
            if base_name.endswith("_copy"):
                base_name = base_name.replace("_copy", "")
            elif base_name.endswith("_scatter"):
                base_name = base_name.replace("scatter", "inverse")

        args = self.arguments
        if keep_return_names:
            returns = self._signature_returns(True)
        else:
            # the returns part depends on the (shared) argument list and returns objects only
            key = (id(args), id(self.returns))
            hit = _SIGNATURE_RETURNS.get(key)
            if hit is None:
                hit = _SIGNATURE_RETURNS[key] = (self._signature_returns(False), args, self.returns)
            returns = hit[0]

        args_sig = args.signature(strip_default=strip_default)
        # See Note [bernoulli.p schema] in torchgen
        if self.name.overload_name == "p" and str(self.name) == "bernoulli.p":
            args_sig = Arguments.parse(str(args_sig).replace("float p", "float p=0.5"))

        r = FunctionSchema(
            name=_signature_name(base_name, self.name.name.dunder_method),
            arguments=args_sig,
            returns=returns,
        )
        if default:
            object.__setattr__(self, "_signature", r)
        return r

    def _signature_returns(self, keep_return_names: bool) -> tuple[Return, ...]:
        if keep_return_names:
            original_returns = tuple(
                r if r.annotation is None else Return(name=r.name, type=r.type, annotation=None) for r in self.returns
            )
        else:
            original_returns = tuple(
                r if r.annotation is None and r.name is None else _plain_return(r.type) for r in self.returns
            )
        # mutable inputs that are not returned become (trailing) returns; order matters:
        # inplace-with-mutable-args and out=-with-mutable-args variants must agree
        args = self.arguments
        returns_from_mutable_inputs: list[Return] = []
        for group in (
            (args.self_arg.argument,) if args.self_arg is not None else (),
            args.out,
            args.post_self_positional,
        ):
            for a in group:
                ann = a.annotation
                if ann is not None and ann.is_write and not any(ann == r.annotation for r in self.returns):
                    returns_from_mutable_inputs.append(
                        Return(name=f"{a.name}_out", type=a.type, annotation=None)
                        if keep_return_names
                        else _plain_return(a.type)
                    )
        return original_returns + tuple(returns_from_mutable_inputs)

    def view_signature(self) -> FunctionSchema:
        cached = self._view_signature
        if cached is None:
            base = self.name.name.base
            if base.endswith("_copy") or base.endswith("_scatter"):
                cached = self.signature(strip_view_copy_name=True)
            else:
                cached = self.signature()  # strip_view_copy_name would change nothing
            object.__setattr__(self, "_view_signature", cached)
        return cached

    def with_name(self, name: OperatorName) -> FunctionSchema:
        return FunctionSchema(name=name, arguments=self.arguments, returns=self.returns)

    @property
    def modifies_arguments(self) -> _CallableBool:
        return _CallableBool(self.kind() in (SchemaKind.inplace, SchemaKind.out, SchemaKind.mutable))

    def has_symint(self) -> bool:
        return self.arguments.has_symint_arg()

    @property
    def is_view_op(self) -> bool:
        """The part of NativeFunction.is_view_op a schema alone decides: a non-mutable
        aliased return (``Tensor(a)``) or an input whose alias set becomes a wildcard
        (``Tensor(a -> *)``).  NativeFunction.is_view_op adds the ``inplace_view`` tag rule."""
        for r in self.returns:
            if r.annotation is not None and not r.annotation.is_write:
                return True
        for inp in self.arguments._flats()[3]:
            if inp.annotation is not None and "*" in inp.annotation.alias_set_after:
                return True
        return False

    def __str__(self) -> str:
        s = self._str
        if s is None:
            s = f"{self.name}({self.arguments}) -> {_returns_text(self.returns)}"
            object.__setattr__(self, "_str", s)
        return s
