"""Unpickling that can never run code: only derivls's own value classes and plain builtins are found.

What derivls reads back from its cache folder (diskcache.py) and from its own forked child
(derivatives/parallel.py, via indexrefs.py) is pickled. A plain `pickle.loads` calls whatever
global a file names (`os.system`, `builtins.open`, ...), so a file planted in the cache folder
would run code. `loads` here looks globals up through `find_class`, which allows:

- a class *defined* (not merely imported) in one of DATA_MODULES, the modules that hold derivls's
  value types (the native index, schemas and types, entry results, diagnostics); a name with a dot
  (`os.path`) is refused, so nothing reachable from such a module's namespace slips in;
- the plain builtins in BUILTINS (containers and scalars), `collections.defaultdict` and
  `collections.OrderedDict`;
- the few functions in FUNCTIONS (indexrefs._ref: a reference resolved against the live index;
  codes.model.lookup: a diagnostic code, the registered object of that name, KeyError for another);
- `builtins.getattr`, as `enum_member`: Python 3.12 and later (and 3.11.0-3.11.4, Debian 12's 3.11.2 among
  them) pickle an Enum member as `getattr(EnumClass, "NAME")`; `enum_member` returns only a member, by
  name, of an Enum class found as above, and refuses any other attribute of anything.

Anything else raises `pickle.UnpicklingError`, which every caller treats as a miss. `find_class` is
called once per distinct global in a pickle (the pickler memoizes them), so the check costs a few
dozen Python calls per load, not one per object (measured in docs/security.md). A check reads one
pickle per cached entry (~690, ~18 globals each): what was allowed once is remembered (`_allowed`;
the rules above depend on the name only), refusals are judged every time.
"""

from __future__ import annotations

import io
import pickle

DATA_MODULES = frozenset(
    {
        "derivls.aten.cpp_types",
        "derivls.aten.legacy_cpp",
        "derivls.aten.native",
        "derivls.aten.native_model",
        "derivls.aten.native_rules",
        "derivls.aten.schema",
        "derivls.aten.schema_args",
        "derivls.aten.schema_names",
        "derivls.aten.schema_types",
        "derivls.codes.model",
        "derivls.derivatives.document",
        "derivls.derivatives.model",
        "derivls.derivatives.results",
        "derivls.base.diagnostics",
        "derivls.project.resultcache",
    }
)
BUILTINS = frozenset(
    {
        "bool",
        "bytearray",
        "bytes",
        "complex",
        "dict",
        "float",
        "frozenset",
        "int",
        "list",
        "set",
        "slice",
        "str",
        "tuple",
    }
)
COLLECTIONS = frozenset({"defaultdict", "OrderedDict"})
FUNCTIONS = frozenset({("derivls.derivatives.indexrefs", "_ref"), ("derivls.codes.model", "lookup")})


def enum_member(cls: object, name: object) -> object:
    """What `getattr` in a pickle may do: a member of an Enum class, by its name (see the module doc)."""
    import enum

    if isinstance(cls, type) and issubclass(cls, enum.Enum) and isinstance(name, str) and name in cls.__members__:
        return cls.__members__[name]
    raise pickle.UnpicklingError(f"getattr({cls!r}, {name!r}) is not an Enum member: refused")


_allowed: dict[tuple[str, str], object] = {}  # (module, name) → what find_class returned for it


class SafeUnpickler(pickle.Unpickler):
    """pickle.Unpickler whose globals are limited to derivls's value types (see the module doc)."""

    def find_class(self, module: str, name: str) -> object:
        found = _allowed.get((module, name))
        if found is None:
            found = _allowed[(module, name)] = self._allowed_class(module, name)
        return found

    def _allowed_class(self, module: str, name: str) -> object:
        if "." not in name:
            if module == "builtins" and name in BUILTINS:
                return super().find_class(module, name)
            if module == "collections" and name in COLLECTIONS:
                return super().find_class(module, name)
            if (module, name) in FUNCTIONS:
                return super().find_class(module, name)
            if module in ("builtins", "__builtin__") and name == "getattr":  # (protocol 2 names it __builtin__)
                return enum_member
            if module in DATA_MODULES:
                found = super().find_class(module, name)
                if isinstance(found, type) and found.__module__ == module:
                    return found
        raise pickle.UnpicklingError(f"{module}.{name} is not a derivls value type: refused")


def loads(data: bytes | bytearray | memoryview) -> object:
    """pickle.loads limited to derivls's value types; UnpicklingError for anything else."""
    return SafeUnpickler(io.BytesIO(data)).load()


__all__ = ["BUILTINS", "DATA_MODULES", "FUNCTIONS", "SafeUnpickler", "enum_member", "loads"]
