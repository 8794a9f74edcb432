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

The classes live in schema_types.py (kinds, annotations, types), schema_args.py (arguments,
returns), schema_names.py (operator names) and here (FunctionSchema); import them from here.
"""

from __future__ import annotations

import itertools
import re
from collections.abc import Iterator

from derivls.aten.schema_args import (
    Argument,
    Arguments,
    Return,
    SelfArgument,
    TensorOptionsArguments,
)
from derivls.aten.schema_names import AUGMENTED_ASSIGNMENT_NAMES, BaseOperatorName, OperatorName
from derivls.aten.schema_types import (
    _TENSOR,
    LEGACY_BASE_TYS,
    Annotation,
    BaseTy,
    BaseType,
    CustomClassType,
    ListType,
    OptionalType,
    SchemaKind,
    Type,
    _CallableBool,
)
from derivls.aten.sharing import shared
from derivls.base.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    pass

_RETURNS_CACHE: dict[tuple[str, bool], tuple[Return, ...]] = {}

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


@frozen_dataclass(
    slots=True, extra_slots=("_hash", "_str", "_signature", "_view_signature", "_kind"), unpickled=("_hash",)
)
class FunctionSchema:
    # lazily filled caches (not dataclass fields: no annotation); pickled (diskcache) without the
    # per-process cached hash
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
                object.__setattr__(r, "_str", shared(func))
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
            s = shared(f"{self.name}({self.arguments}) -> {_returns_text(self.returns)}")
            object.__setattr__(self, "_str", s)
        return s
