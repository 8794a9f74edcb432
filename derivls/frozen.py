"""``@frozen_dataclass``: ``@dataclass(frozen=True)`` with a cheaper ``__init__``.

A frozen dataclass's generated ``__init__`` sets each field through ``object.__setattr__``
(frozen classes forbid plain assignment): one attribute lookup and one call per field.
``derivls check`` builds some 80,000 such objects (spans, schemas, NativeFunctions of 30
fields, …); constructing them this way cuts its instruction count by ~6%. The ``__init__`` made here
writes the fields straight into the instance ``__dict__`` (3-4 times faster) and is
otherwise the same: same parameters, defaults, default factories, ``init=False`` fields and
``__post_init__`` call, same signature and annotations. Everything else (``__eq__``,
``__hash__``, ``__repr__``, frozenness, ``fields()``, ``replace()``) is dataclass's own.
"""

from __future__ import annotations

import dataclasses
import inspect
from typing import Any, TypeVar

__all__ = ["frozen_dataclass"]

T = TypeVar("T", bound=type)


def frozen_dataclass(cls: T | None = None, /, **options: Any) -> Any:
    """``@dataclass(frozen=True, **options)`` with the faster ``__init__``; ``init`` cannot be given."""
    if "init" in options or "frozen" in options or options.get("slots"):
        raise TypeError("frozen_dataclass: init, frozen and slots cannot be given")

    def wrap(cls: T) -> T:
        had_doc = bool(cls.__dict__.get("__doc__"))
        if not had_doc:
            cls.__doc__ = "-"  # dataclass would document the class before it has its __init__
        cls = dataclasses.dataclass(cls, frozen=True, init=False, **options)  # type: ignore[assignment]
        if "__init__" not in cls.__dict__:
            cls.__init__ = _make_init(cls)  # type: ignore[misc]
        if not had_doc:  # as dataclass does: the class documented by its __init__ signature
            cls.__doc__ = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
        return cls

    return wrap if cls is None else wrap(cls)


def _make_init(cls: type) -> Any:
    all_fields = list(cls.__dataclass_fields__.values())  # type: ignore[attr-defined]
    # ClassVars are not fields of __init__; InitVars and keyword-only fields are not supported
    fields = [f for f in all_fields if f._field_type is dataclasses._FIELD]  # type: ignore[attr-defined]
    if any(f._field_type is dataclasses._FIELD_INITVAR for f in all_fields):  # type: ignore[attr-defined]
        raise TypeError(f"frozen_dataclass: {cls.__name__} has an InitVar (not supported)")
    if any(f.kw_only for f in fields):
        raise TypeError(f"frozen_dataclass: {cls.__name__} has keyword-only fields (not supported)")

    # the same rules and the same source shape as dataclasses._init_fn
    names: dict[str, Any] = {"__dataclass_MISSING__": dataclasses.MISSING}
    params: list[str] = []
    body: list[str] = ["__d = self.__dict__"]
    seen_default = False
    for f in fields:
        name = f.name
        has_default = f.default is not dataclasses.MISSING
        has_factory = f.default_factory is not dataclasses.MISSING
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
        body.append(f"__d[{name!r}] = {value}")
    names["__dataclass_HAS_DEFAULT_FACTORY__"] = dataclasses._HAS_DEFAULT_FACTORY  # type: ignore[attr-defined]
    if hasattr(cls, "__post_init__"):
        body.append("self.__post_init__()")

    source = f"def __init__(self, {', '.join(params)}):\n" + "".join(f" {line}\n" for line in body)
    namespace: dict[str, Any] = {}
    exec(compile(source, f"<frozen_dataclass {cls.__qualname__}>", "exec"), names, namespace)
    init = namespace["__init__"]
    init.__qualname__ = f"{cls.__qualname__}.__init__"
    init.__module__ = cls.__module__
    init.__annotations__ = {**{f.name: f.type for f in fields if f.init}, "return": None}
    return init
