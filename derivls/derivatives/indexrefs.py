"""Results pickled against a NativeIndex: the objects the index owns travel as references.

Entry results point at objects the NativeIndex owns (NativeFunction, FunctionSchema, the arguments
in bindings) and at the analyzer's Profile, and the loader compares them by identity. `IndexRefs`
pickles them as references (a function by its schema string, an argument by its position in that
function's schema, the profile as "the reader's") and resolves them against the live index when
reading, so what is read shares those objects with the index, as a freshly computed result does.
Used by the entry cache (results kept on disk) and by the forked child of a cold pass (results
sent to the parent). A result holding the index itself, a HeaderIndex or a function the index does
not own raises `Uncacheable`: the caller computes that one itself.

The references go through the pickler's dispatch table (consulted in C, per type: no Python call
per object, about twice as fast as `persistent_id`).
"""

from __future__ import annotations

import copyreg
import io
import pickle
from _thread import _local  # threading.local (threading itself costs `check` ~2 ms to import)

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.aten.schema import Argument, Arguments, FunctionSchema, Return, SelfArgument, TensorOptionsArguments
from derivls.base.safepickle import loads as safe_loads

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from derivls.derivatives.profiles.base import Profile

PROTOCOL = pickle.HIGHEST_PROTOCOL


class Uncacheable(Exception):
    """A result holds something that must not be pickled by value (the index, a foreign function)."""


_reading = _local()  # .refs: the IndexRefs a record is being read against (in this thread)


def _ref(*ref: object) -> object:
    """Pickled in place of an object the index (or the analyzer) owns; resolved against the IndexRefs
    reading the record (a plain Unpickler's find_class is C code: no Python call per class)."""
    refs = getattr(_reading, "refs", None)
    if refs is None:
        raise pickle.UnpicklingError(f"index reference {ref!r} read outside IndexRefs.loads")
    return refs.resolve(*ref)


class IndexRefs:
    """Stable ids of the objects an index and a profile own: what results are pickled against."""

    def __init__(self, index: NativeIndex, profile: Profile) -> None:
        self.index = index
        self.profile = profile
        # id(argument-like object) → its reference, for the functions met so far (the index keeps them alive)
        self._ids: dict[int, tuple] = {}
        self._known: set[str] = set()
        self._table: dict[type, Any] | None = None

    @staticmethod
    def parts(f: NativeFunction) -> tuple[object, ...]:
        """The argument-like objects of a function's schema, in a fixed order (None where absent)."""
        arguments = f.func.arguments
        return (arguments, arguments.self_arg, arguments.tensor_options, *arguments.flat_all, *f.func.returns)

    def schema_of(self, f: NativeFunction) -> str:
        """A function's stable id, its schema string; the arguments of its schema become known (`ids`)."""
        schema = str(f.func)  # cached on the schema
        if self.index.by_schema.get(schema) is not f:
            raise Uncacheable(f"{schema} is not a function of the index")
        if schema not in self._known:
            self._known.add(schema)
            for k, part in enumerate(self.parts(f)):
                if part is not None:
                    self._ids.setdefault(id(part), ("a", schema, k))  # a shared argument list: its first owner
        return schema

    def schema_string(self, func: FunctionSchema) -> str:
        schema = str(func)
        f = self.index.by_schema.get(schema)
        if f is None or f.func is not func:
            raise Uncacheable(f"{schema} is not a schema of the index")
        self.schema_of(f)
        return schema

    def resolve(self, kind: str, schema: str = "", k: int = 0) -> object:
        if kind == "p":
            return self.profile
        f = self.index.by_schema[schema]
        if kind == "f":
            return f
        if kind == "s":
            return f.func
        if kind == "a":
            part = self.parts(f)[k]
            if part is None:
                raise pickle.UnpicklingError(f"no argument {k} in {schema}")
            return part
        raise pickle.UnpicklingError(f"unknown index reference {kind!r}")

    def table(self) -> dict[type, Any]:
        """The pickler's dispatch table: index-owned objects and the profile as references."""
        if self._table is None:
            from derivls.derivatives.formulas.headers import HeaderIndex
            from derivls.derivatives.profiles import LegacyProfile, TorchgenProfile

            ids = self._ids
            protocol = PROTOCOL

            def function(obj: NativeFunction) -> object:  # always the index's own
                return (_ref, ("f", self.schema_of(obj)))

            def schema(obj: FunctionSchema) -> object:
                return (_ref, ("s", self.schema_string(obj)))

            def maybe_owned(obj: object) -> object:  # an argument list or argument: by value when not the index's
                ref = ids.get(id(obj))
                return (_ref, ref) if ref is not None else obj.__reduce_ex__(protocol)

            def profile(obj: object) -> object:
                if obj != self.profile:
                    raise Uncacheable(f"a result of another profile: {obj!r}")
                return (_ref, ("p",))

            def refused(obj: object) -> object:
                raise Uncacheable(f"a result holds a {type(obj).__name__}")

            table: dict[type, Any] = dict(copyreg.dispatch_table)
            table.update({NativeFunction: function, FunctionSchema: schema})
            for cls in (Arguments, Argument, SelfArgument, TensorOptionsArguments, Return):
                table[cls] = maybe_owned
            table.update({TorchgenProfile: profile, LegacyProfile: profile, NativeIndex: refused, HeaderIndex: refused})
            self._table = table
        return self._table

    def dumps(self, value: object) -> bytes:
        out = io.BytesIO()
        pickler = pickle.Pickler(out, protocol=PROTOCOL)
        pickler.dispatch_table = self.table()
        pickler.dump(value)
        return out.getvalue()

    def loads(self, data: bytes) -> object:
        outer = getattr(_reading, "refs", None)
        _reading.refs = self
        try:
            return safe_loads(data)  # derivls's value types and _ref only: a record never runs code
        finally:
            _reading.refs = outer


__all__ = ["PROTOCOL", "IndexRefs", "Uncacheable"]
