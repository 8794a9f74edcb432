"""The model of native_functions.yaml: NativeFunction, view groups, variants (torchgen.model's)."""

from __future__ import annotations

from collections.abc import Iterator, Mapping
from dataclasses import field
from enum import Enum, auto

from derivls.aten.schema import (
    BaseOperatorName,
    FunctionSchema,
    OperatorName,
)
from derivls.base.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any


class NativeIndexError(ValueError):
    """A problem with native_functions.yaml / tags.yaml; ``line`` is 1-based when known."""

    def __init__(self, message: str, *, path: str | None = None, line: int | None = None) -> None:
        self.message = message
        self.path = path
        self.line = line
        where = ""
        if path is not None:
            where = f"{path}:{line}: " if line is not None else f"{path}: "
        elif line is not None:
            where = f"line {line}: "
        super().__init__(where + message)


# --------------------------------------------------------------------------------------
# Model
# --------------------------------------------------------------------------------------


@frozen_dataclass
class Location:
    file: str
    line: int

    def __str__(self) -> str:
        return f"{self.file}:{self.line}"


class Variant(Enum):
    __hash__ = object.__hash__  # singletons: identity hashing is valid and cheaper

    function = auto()
    method = auto()


class ViewSchemaKind(Enum):
    __hash__ = object.__hash__

    aliasing = auto()
    aliasing_inplace = auto()
    non_aliasing = auto()


COMPOSITE_IMPLICIT = "CompositeImplicitAutograd"
COMPOSITE_IMPLICIT_NT = "CompositeImplicitAutogradNestedTensor"
COMPOSITE_EXPLICIT = "CompositeExplicitAutograd"
COMPOSITE_EXPLICIT_NF = "CompositeExplicitAutogradNonFunctional"


# eq=False: identity semantics. torchgen's NativeFunction compares by value but cannot be
# hashed (it holds sets); here every object in an index is distinct and usable as a key.
_SHARED: dict[frozenset[Any], frozenset[Any]] = {}


def shared(values: frozenset[Any]) -> frozenset[Any]:
    """One object per distinct set (tags, variants, cpp_no_default_args repeat across ~30k functions)."""
    return _SHARED.setdefault(values, values)


@frozen_dataclass(
    eq=False, slots=True, extra_slots=("_is_view_op",), unpickled=("_is_view_op",)
)  # slots: 31 fields overflow a shared-key dict (~1.3 kB each); no __dict__ (~220 B each, 6 MB at 10x)
class NativeFunction:
    _is_view_op = None  # a lazily filled cache (not a field): is_view_op
    namespace: str
    func: FunctionSchema
    use_const_ref_for_mutable_tensors: bool
    device_guard: bool
    device_check: str  # "ExactSame" / "NoCheck" (torchgen: DeviceCheckType)
    python_module: str | None
    category_override: str | None
    variants: frozenset[Variant]
    manual_kernel_registration: bool
    manual_cpp_binding: bool
    autogen: tuple[OperatorName, ...]
    structured: bool
    structured_delegate: OperatorName | None
    structured_inherits: str | None
    cpp_no_default_args: frozenset[str]
    is_abstract: bool
    has_composite_implicit_autograd_kernel: bool
    has_composite_implicit_autograd_nested_tensor_kernel: bool
    has_composite_explicit_autograd_kernel: bool
    has_composite_explicit_autograd_non_functional_kernel: bool
    tags: frozenset[str]
    # dispatch key -> kernel name, as written (plus torchgen's implicit entries); read-only
    dispatch: Mapping[str, str] = field(default_factory=dict)
    # 1-based line of the `func:` key; None for functions torchgen generates
    line: int | None = None
    # 0-based column of the `func` key, and of the schema text after `func: `
    column: int | None = None
    func_column: int | None = None
    # the yaml file this came from ("<unsaved>" etc. for buffers)
    path: str = "native_functions.yaml"
    # for generated functions: the written function they were generated from
    generated_from: NativeFunction | None = None
    # precomputed / ufunc_inner_loop raw values (not modelled further)
    precomputed: Any = None
    ufunc_inner_loop: Any = None

    @property
    def loc(self) -> Location:
        """torchgen's loc: generated functions report the line of their source function."""
        f: NativeFunction | None = self
        while f is not None and f.line is None:
            f = f.generated_from
        return Location(self.path, f.line if f is not None and f.line is not None else 0)

    @property
    def source_line(self) -> int | None:
        """The line of the yaml entry this function comes from (generated: its source's)."""
        f: NativeFunction | None = self
        while f is not None and f.line is None:
            f = f.generated_from
        return None if f is None else f.line

    @property
    def is_generated(self) -> bool:
        return "generated" in self.tags

    @property
    def has_composite_kernel(self) -> bool:
        return (
            self.has_composite_implicit_autograd_kernel
            or self.has_composite_explicit_autograd_kernel
            or self.has_composite_explicit_autograd_non_functional_kernel
        ) or (self.has_composite_implicit_autograd_kernel and self.has_composite_implicit_autograd_nested_tensor_kernel)

    # computed once, kept in a slot (the grouping passes ask for it ~10k times)
    @property
    def is_view_op(self) -> bool:
        cached = self._is_view_op
        if cached is None:
            cached = self.func.is_view_op or (  # aliased non-mutable return / Tensor(a -> *) input
                # See Note [resize_ in Functionalization]
                "inplace_view" in self.tags and str(self.func.name) != "resize_" and str(self.func.name) != "resize_as_"
            )
            object.__setattr__(self, "_is_view_op", cached)
        return cached

    @property
    def view_schema_kind(self) -> ViewSchemaKind:
        if self.is_view_op and self.func.name.name.inplace:
            if "inplace_view" not in self.tags:
                raise NativeIndexError(
                    f"inplace_view tag missing for {self.func.name}", path=self.path, line=self.source_line
                )
            return ViewSchemaKind.aliasing_inplace
        if self.is_view_op:
            return ViewSchemaKind.aliasing
        return ViewSchemaKind.non_aliasing

    @property
    def root_name(self) -> str:
        return self.func.name.name.base

    @property
    def part_of_structured_group(self) -> bool:
        return self.structured or self.structured_delegate is not None

    def __repr__(self) -> str:
        return f"NativeFunction({self.func}, line={self.line})"


@frozen_dataclass(eq=False)
class NativeFunctionsViewGroup:
    view: NativeFunction
    # optional: no copy variants for CompositeImplicitAutograd views
    view_copy: NativeFunction | None
    view_inplace: NativeFunction | None

    def functions(self, *, include_copy: bool = True) -> Iterator[NativeFunction]:
        yield self.view
        if self.view_inplace is not None:
            yield self.view_inplace
        if self.view_copy is not None and include_copy:
            yield self.view_copy

    @property
    def root_name(self) -> str:
        return self.view.root_name

    @property
    def composite(self) -> bool:
        return self.view.has_composite_implicit_autograd_kernel

    def check(self) -> None:
        """torchgen's NativeFunctionsViewGroup.__post_init__ checks (NativeIndexError)."""
        v = self.view

        def err(msg: str, f: NativeFunction = v) -> NativeIndexError:
            return NativeIndexError(msg, path=f.path, line=f.source_line)

        if not v.is_view_op:
            raise err(f"view is not a view op: {v.func.name}")
        if self.view_copy is None:
            if gets_generated_view_copy(v):
                raise err(
                    f"{v.func.name} appears to be a new operator that aliases its inputs. The "
                    "codegen expects you to add a corresponding operator to "
                    f"native_functions.yaml: {get_view_copy_name(v)!s}. See Note [view_copy "
                    "NativeFunctions] for details."
                )
        else:
            vc = self.view_copy
            if not vc.func.name.name.base.endswith(("_copy", "_scatter")):
                raise err(f"view_copy name must end with '_copy' or '_scatter': {vc.func.name}", vc)
            if v.func.signature() != vc.func.signature(strip_view_copy_name=True):
                raise err(
                    f"view and view_copy signatures don't match: {v.func.signature()} != "
                    f"{vc.func.signature(strip_view_copy_name=True)}",
                    vc,
                )
            if "view_copy" not in vc.tags:
                raise err(
                    f"{vc.func.name} appears to be a view_copy operator; the codegen expects "
                    "view_copy operators to be annotated with the 'view_copy' tag",
                    vc,
                )
        if self.view_inplace is not None:
            vi = self.view_inplace
            if v.func.signature() != vi.func.signature():
                raise err(
                    f"view and view_inplace signatures don't match: {v.func.signature()} != {vi.func.signature()}",
                    vi,
                )
            if v.has_composite_implicit_autograd_kernel and not vi.has_composite_implicit_autograd_kernel:
                raise err(
                    f"{v.func.name} and {vi.func.name} must either both have "
                    "CompositeImplicitAutograd kernels, or both not have composite kernels."
                )
            if (
                v.has_composite_implicit_autograd_nested_tensor_kernel
                and not vi.has_composite_implicit_autograd_nested_tensor_kernel
            ):
                raise err(
                    f"{v.func.name} and {vi.func.name} must either both have "
                    "CompositeImplicitAutogradNestedTensor kernels, or both not have composite kernels."
                )


def gets_generated_view_copy(f: NativeFunction) -> bool:
    if not f.is_view_op:
        return False
    # CompositeImplicitAutograd views decompose into base views: no copy needed
    if f.has_composite_implicit_autograd_kernel:
        return False
    if "inplace_view" in f.tags:
        return False
    # *_inverse ops have hand-written copy variants (slice_inverse -> slice_scatter)
    if f.func.name.name.base.endswith("_inverse"):
        return False
    return True


def get_view_copy_name(f: NativeFunction) -> OperatorName:
    if str(f.func.name) not in ("narrow",) and not gets_generated_view_copy(f):
        raise NativeIndexError(f"{f.func.name} does not have a generated view_copy variant")
    return OperatorName(
        name=BaseOperatorName(
            base=f"{f.func.name.name.base}_copy",
            inplace=False,
            dunder_method=f.func.name.name.dunder_method,
        ),
        overload_name=f.func.name.overload_name,
    )
