"""Arguments and returns of JIT schemas (torchgen.model's; see schema.py)."""

from __future__ import annotations

import re
from collections.abc import Sequence

from derivls.aten.schema_types import (
    Annotation,
    BaseTy,
    BaseType,
    OptionalType,
    Type,
    _cached_hash,
)
from derivls.aten.sharing import shared, shared_or_none
from derivls.base.frozen import frozen_dataclass

# --------------------------------------------------------------------------------------
# Arguments and returns
# --------------------------------------------------------------------------------------

_ANNOTATED_TENSOR_RE = re.compile(r"Tensor\((.+)\)(.*)")
_ARG_CACHE: dict[tuple[str, bool], Argument] = {}
_ARGUMENTS_CACHE: dict[tuple[str, bool], Arguments] = {}
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


@frozen_dataclass(slots=True, extra_slots=("_str",), unpickled=("_str",))
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
        r = Argument(name=shared(name), type=type, default=shared_or_none(default), annotation=annotation)
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
            s = shared(s)
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass(slots=True, extra_slots=("_str",), unpickled=("_str",))
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
        r = Return(name=shared_or_none(name), type=type, annotation=annotation)
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
            s = shared(type if self.name is None else f"{type} {self.name}")
            object.__setattr__(self, "_str", s)
        return s


@frozen_dataclass(slots=True)
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


@frozen_dataclass(slots=True, extra_slots=("_hash", "_str", "_signature", "_flat", "_has_symint"), unpickled=("_hash",))
class Arguments:
    # lazily filled caches (not dataclass fields: no annotation); pickled (diskcache) without the
    # per-process cached hash
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
        object.__setattr__(r, "_str", shared(", ".join(parts)))
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
            s = shared(", ".join(all_arguments))
            object.__setattr__(self, "_str", s)
        return s

    def __post_init__(self) -> None:
        # Structural invariants torchgen also enforces on construction.
        if self.self_arg is None and self.pre_self_positional:
            raise ValueError("pre_self_positional is non-empty but self_arg is None")
        if self.tensor_options is None and self.post_tensor_options_kwarg_only:
            raise ValueError("post_tensor_options_kwarg_only is non-empty but tensor_options is None")
