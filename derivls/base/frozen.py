"""``@frozen_dataclass``: ``@dataclass(frozen=True)``, cheaper to define and to construct.

``derivls check`` is a short process, and two costs of frozen dataclasses showed up in it:

* construction: the generated ``__init__`` sets each field through ``object.__setattr__``
  (frozen classes forbid plain assignment), one attribute lookup and one call per field, and
  the command builds ~80,000 such objects (NativeFunction has 30 fields). The ``__init__``
  made here stores into the instance ``__dict__`` instead (3-4x faster per object);
* definition: ``dataclass`` compiles each generated method from source (``__init__``,
  ``__repr__``, ``__eq__``, ``__hash__``, ``__setattr__``, ``__delattr__``), ~0.1 ms per
  ``compile`` call and ~0.6 ms per class, a fifth of the CLI's import time. Here only
  ``__init__`` is compiled (its speed matters); the others are closures over the field
  names.

The class is otherwise what ``@dataclass(frozen=True, **options)`` makes: the same fields
(``fields()``, ``replace()``, ``__match_args__``, ``__dataclass_params__``), and methods that
behave like the generated ones: ``__init__`` with the same parameters, defaults, default
factories, ``init=False`` fields and ``__post_init__`` call, signature and annotations;
``__repr__``, ``__eq__`` (fields compared as tuples, NotImplemented for other classes) and
``__hash__`` (hash of the fields' tuple) over the same fields; the same
FrozenInstanceError on assignment or deletion; the same rules for an explicit ``__hash__``
or ``__eq__`` and for inheriting from frozen dataclasses. tests/unit/test_frozen.py compares
the two.
"""

from __future__ import annotations

import _thread
import abc
import dataclasses
import inspect
from dataclasses import MISSING, Field, FrozenInstanceError
from operator import attrgetter

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any, TypeVar

    from typing_extensions import dataclass_transform

    T = TypeVar("T", bound=type)
else:

    def dataclass_transform(**_: object):  # type checkers only: at run time a no-op decorator
        return lambda f: f


__all__ = ["frozen_dataclass"]

_SUPPORTED_OPTIONS = frozenset({"repr", "eq", "match_args", "slots", "extra_slots", "unpickled"})


@dataclass_transform(frozen_default=True)  # type checkers see the dataclass it makes
def frozen_dataclass(cls: T | None = None, /, **options: Any) -> Any:
    """``@dataclass(frozen=True, **options)``; options: repr, eq, match_args, slots, extra_slots.

    ``slots=True``: the fields are slots (no instance ``__dict__``, ~100 bytes less per object);
    ``extra_slots``: more slot names: lazily filled caches the class declares as class attributes
    (``_str = None``: each instance starts with that value), ``"__dict__"`` for ``cached_property``;
    ``unpickled``: those of them a pickle (or copy) leaves out (a cached ``hash()``: str hashes differ
    between processes)."""
    unsupported = set(options) - _SUPPORTED_OPTIONS
    if unsupported:
        raise TypeError(f"frozen_dataclass: unsupported options {sorted(unsupported)}")

    def wrap(cls: T) -> T:
        extra = tuple(options.get("extra_slots", ())) if options.get("slots", False) else None
        if options.get("unpickled"):
            cls.__frozen_unpickled__ = frozenset(options["unpickled"])  # type: ignore[attr-defined]
        return _process(cls, options.get("repr", True), options.get("eq", True), options.get("match_args", True), extra)

    return wrap if cls is None else wrap(cls)


def _process(cls: T, with_repr: bool, with_eq: bool, match_args: bool, slots: tuple[str, ...] | None = None) -> T:
    own = cls.__dict__
    class_hash = own.get("__hash__", MISSING)
    has_explicit_hash = not (class_hash is MISSING or (class_hash is None and "__eq__" in own))
    for name in ("__setattr__", "__delattr__"):
        if name in own:
            raise TypeError(f"Cannot overwrite attribute {name} in class {cls.__name__}")
    had_doc = bool(own.get("__doc__"))
    if not had_doc:
        cls.__doc__ = "-"  # documented below, once the class has its __init__

    # dataclass without any generated method: it only collects (and checks) the fields. Its
    # inheritance check would compare our frozen=False with the (frozen) dataclass bases, so
    # they pass as non-frozen for the duration.
    bases = [b.__dict__["__dataclass_params__"] for b in cls.__mro__[1:] if "__dataclass_params__" in b.__dict__]
    if any(not p.frozen for p in bases):
        raise TypeError("cannot inherit frozen dataclass from a non-frozen one")
    for p in bases:
        p.frozen = False
    try:
        cls = dataclasses.dataclass(  # type: ignore[assignment]
            cls, init=False, repr=False, eq=False, frozen=False, match_args=match_args
        )
    finally:
        for p in bases:
            p.frozen = True
    if slots is not None:
        cls = _with_slots(cls, slots)
    params = cls.__dataclass_params__  # type: ignore[attr-defined]
    params.init, params.repr, params.eq, params.frozen = True, with_repr, with_eq, True

    all_fields: list[Field[Any]] = list(cls.__dataclass_fields__.values())  # type: ignore[attr-defined]
    if any(f._field_type is dataclasses._FIELD_INITVAR for f in all_fields):  # type: ignore[attr-defined]
        raise TypeError(f"frozen_dataclass: {cls.__name__} has an InitVar (not supported)")
    fields = [f for f in all_fields if f._field_type is dataclasses._FIELD]  # type: ignore[attr-defined]

    _set(cls, "__init__", _make_init(cls, fields))
    if with_repr:
        _set(cls, "__repr__", _make_repr([f.name for f in fields if f.repr]))
    if with_eq:
        _set(cls, "__eq__", _make_eq([f.name for f in fields if f.compare]))
        if not has_explicit_hash:  # frozen and eq: dataclass adds __hash__ (over __eq__'s None)
            hashed = [f.name for f in fields if (f.compare if f.hash is None else f.hash)]
            cls.__hash__ = _qualify(cls, _make_hash(hashed))  # type: ignore[method-assign]
    names = tuple(f.name for f in fields)
    if "__frozen_slot_defaults__" in cls.__dict__:
        _set(cls, "__reduce__", _make_reduce(cls, fields))
        _set(cls, "__setstate__", _set_slot_state)
    _set(cls, "__setattr__", _make_setattr(cls, names))
    _set(cls, "__delattr__", _make_delattr(cls, names))
    if not had_doc:  # as dataclass does: the class documented by its __init__ signature
        cls.__doc__ = cls.__name__ + _signature_text(cls, fields).replace(" -> None", "")
    abc.update_abstractmethods(cls)
    return cls


def _with_slots(cls: T, extra: tuple[str, ...]) -> T:
    """`cls` (processed by dataclass) remade with __slots__: its own fields and `extra` (as
    dataclasses' slots=True does; the class attributes of those names become each instance's start)."""
    own = dict(cls.__dict__)
    if "__slots__" in own:
        raise TypeError(f"frozen_dataclass: {cls.__name__} already defines __slots__")
    inherited = {f.name for b in cls.__mro__[1:] for f in getattr(b, "__dataclass_fields__", {}).values()}
    fields = tuple(f.name for f in dataclasses.fields(cls) if f.name not in inherited)  # type: ignore[arg-type]
    caches = {name: own.pop(name) for name in extra if name in own and name not in ("__dict__", "__weakref__")}
    for name in fields:
        own.pop(name, None)  # a default: __init__ has it
    own.pop("__dict__", None)
    own.pop("__weakref__", None)
    own["__slots__"] = fields + extra
    own["__frozen_slot_defaults__"] = caches
    slotted = type(cls)(cls.__name__, cls.__bases__, own)
    slotted.__qualname__ = cls.__qualname__
    return slotted  # type: ignore[return-value]


def _make_reduce(cls: type, fields: list[Field[Any]]) -> Any:
    """__reduce__ of a slotted class (pickle, copy): the class called with its init fields (no field
    names in the pickle, and the compiled __init__ rebuilds it), then the state the call does not set:
    fields without init, caches that are filled, the instance dict (cached_property) if any."""
    values = _fields_tuple([f.name for f in fields if f.init])
    defaults = cls.__dict__["__frozen_slot_defaults__"]
    unpickled = cls.__dict__.get("__frozen_unpickled__", ())
    others = [f.name for f in fields if not f.init] + [name for name in defaults if name not in unpickled]

    def __reduce__(self: Any) -> tuple[Any, ...]:
        state = {}
        for name in others:
            value = getattr(self, name, defaults.get(name))
            if value is not defaults.get(name, MISSING):
                state[name] = value
        extra = getattr(self, "__dict__", None)
        if extra:
            state.update(extra)
        return (self.__class__, values(self), state) if state else (self.__class__, values(self))

    return __reduce__


def _set_slot_state(self: Any, state: dict[str, Any]) -> None:
    for name, value in state.items():
        object.__setattr__(self, name, value)


def _signature_text(cls: type, fields: list[Field[Any]]) -> str:
    """str(inspect.signature(cls)), formatted here for string annotations (all of derivls's)."""
    params = []
    for f in fields:
        if not f.init:
            continue
        if not isinstance(f.type, str):
            return str(inspect.signature(cls))
        text = f"{f.name}: {f.type!r}"
        if f.default is not MISSING:
            text += f" = {f.default!r}"
        elif f.default_factory is not MISSING:
            text += f" = {dataclasses._HAS_DEFAULT_FACTORY!r}"  # type: ignore[attr-defined]
        params.append(text)
    return "(" + ", ".join(params) + ") -> None"


def _qualify(cls: type, fn: Any) -> Any:
    fn.__qualname__ = f"{cls.__qualname__}.{fn.__name__}"
    return fn


def _set(cls: type, name: str, fn: Any) -> None:
    # like dataclass's _set_new_attribute: never replaces what the class body defines
    if name not in cls.__dict__:
        setattr(cls, name, _qualify(cls, fn))


def _make_init(cls: type, fields: list[Field[Any]]) -> Any:
    if any(f.kw_only for f in fields):
        raise TypeError(f"frozen_dataclass: {cls.__name__} has keyword-only fields (not supported)")
    # the same rules as dataclasses._init_fn / _field_init, storing into __dict__
    names: dict[str, Any] = {"__dataclass_HAS_DEFAULT_FACTORY__": dataclasses._HAS_DEFAULT_FACTORY}  # type: ignore[attr-defined]
    params: list[str] = []
    slotted = "__frozen_slot_defaults__" in cls.__dict__
    body: list[str] = [] if slotted else ["__d = self.__dict__"]
    if slotted:  # no __dict__: each slot is set through its descriptor (frozen: __setattr__ refuses)
        for name, value in cls.__dict__["__frozen_slot_defaults__"].items():
            names[f"__set_{name}__"] = cls.__dict__[name].__set__
            names[f"__cache_{name}__"] = value
            body.append(f"__set_{name}__(self, __cache_{name}__)")
    seen_default = False
    for f in fields:
        name = f.name
        has_default = f.default is not MISSING
        has_factory = f.default_factory is not MISSING
        if f.init:
            if has_default:
                names[f"__dflt_{name}__"] = f.default
                params.append(f"{name}=__dflt_{name}__")
                seen_default = True
                value = name
            elif has_factory:
                names[f"__dflt_{name}__"] = f.default_factory
                params.append(f"{name}=__dataclass_HAS_DEFAULT_FACTORY__")
                seen_default = True
                value = f"__dflt_{name}__() if {name} is __dataclass_HAS_DEFAULT_FACTORY__ else {name}"
            else:
                if seen_default:
                    raise TypeError(f"non-default argument {name!r} follows default argument")
                params.append(name)
                value = name
        elif has_factory:
            names[f"__dflt_{name}__"] = f.default_factory
            value = f"__dflt_{name}__()"
        else:
            continue  # init=False without a factory: the class attribute (if any) serves
        if slotted:
            names[f"__set_{name}__"] = cls.__dict__[name].__set__
            body.append(f"__set_{name}__(self, {value})")
        else:
            body.append(f"__d[{name!r}] = {value}")
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")

    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f" {line}\n" for line in body or ["pass"])
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<frozen_dataclass {cls.__qualname__}>", "exec"), names, namespace)
    init = namespace["__init__"]
    init.__module__ = cls.__module__
    init.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
    return init


def _fields_tuple(names: list[str]) -> Any:
    """self -> the tuple of those fields (attrgetter returns a bare value for one name)."""
    if not names:
        return lambda self: ()
    if len(names) == 1:
        get = attrgetter(names[0])
        return lambda self: (get(self),)
    return attrgetter(*names)


def _make_eq(names: list[str]) -> Any:
    values = _fields_tuple(names)

    def __eq__(self: Any, other: Any) -> Any:
        if other.__class__ is self.__class__:
            return values(self) == values(other)
        return NotImplemented

    return __eq__


def _make_hash(names: list[str]) -> Any:
    values = _fields_tuple(names)

    def __hash__(self: Any) -> int:
        return hash(values(self))

    return __hash__


def _make_repr(names: list[str]) -> Any:
    getters = [(f"{name}=", attrgetter(name)) for name in names]
    running: set[tuple[int, int]] = set()

    def __repr__(self: Any) -> str:
        key = id(self), _thread.get_ident()
        if key in running:  # as dataclasses' _recursive_repr
            return "..."
        running.add(key)
        try:
            return (
                self.__class__.__qualname__ + "(" + ", ".join(label + repr(get(self)) for label, get in getters) + ")"
            )
        finally:
            running.discard(key)

    return __repr__


def _make_setattr(cls: type, names: tuple[str, ...]) -> Any:
    def __setattr__(self: Any, name: str, value: Any) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot assign to field {name!r}")
        super(cls, self).__setattr__(name, value)  # type: ignore[arg-type]  # cls is a class (mypy: `type`)

    return __setattr__


def _make_delattr(cls: type, names: tuple[str, ...]) -> Any:
    def __delattr__(self: Any, name: str) -> None:
        if type(self) is cls or name in names:
            raise FrozenInstanceError(f"cannot delete field {name!r}")
        super(cls, self).__delattr__(name)  # type: ignore[arg-type]  # cls is a class (mypy: `type`)

    return __delattr__
