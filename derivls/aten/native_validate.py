"""What torchgen's parse_native_yaml rejects beyond reading an entry: the rest of
`NativeFunction.from_yaml` (the dispatch table, structured kernels, ufuncs), `NativeFunction.__post_init__`,
`BackendIndex.grow_index` and `error_check_native_functions`.

Each check raises (per entry) or returns (across entries) an `EntryRejected`: the message, the code it is
reported under (derivls.codes.native), the entry key and the token it is about. The index leaves an entry
rejected by `validate_entry` out; what `validate_functions` finds is reported and the functions stay.
"""

from __future__ import annotations

import keyword
from collections import defaultdict
from collections.abc import Sequence

from derivls.aten.native_model import (
    COMPOSITE_EXPLICIT,
    COMPOSITE_EXPLICIT_NF,
    COMPOSITE_IMPLICIT,
    COMPOSITE_IMPLICIT_NT,
    NativeFunction,
    NativeIndexError,
    Variant,
)
from derivls.aten.schema import Argument, BaseOperatorName, OperatorName, SchemaKind
from derivls.codes.native import (
    NATIVE_DISPATCH_KEY,
    NATIVE_DISPATCH_TABLE,
    NATIVE_DUPLICATE,
    NATIVE_ENTRY_RULE,
    NATIVE_PYTHON_KEYWORD,
    NATIVE_STRUCTURED,
    NATIVE_TAG_RULE,
    NATIVE_VALUE_TYPE,
    NATIVE_VARIANTS,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

__all__ = ["EntryRejected", "closest", "validate_entry", "validate_functions"]

# torchgen.model: the keys structured kernels are generated for, and the ufunc ones
STRUCTURED_DISPATCH_KEYS = frozenset({"MPS", "CUDA", "CPU", "XPU", "MTIA"})
UFUNC_DISPATCH_KEYS = ("CUDA", "CPU")
UFUNC_KEYS = frozenset(
    {
        "CUDAFunctor",
        "CUDAFunctorOnOther",
        "CUDAFunctorOnSelf",
        "CPUScalar",
        "CPUVector",
        "ScalarOnly",
        "Generic",
    }
)
_COMPOSITES = (COMPOSITE_EXPLICIT, COMPOSITE_EXPLICIT_NF, COMPOSITE_IMPLICIT, COMPOSITE_IMPLICIT_NT)
# error_check_native_functions' exclusion list
_KEYWORD_EXCLUSIONS = frozenset(
    {("_has_compatible_shallow_copy_type", "from"), ("random_.from", "from"), ("uniform_", "from")}
)
_KEYWORDS = frozenset(keyword.kwlist)


class EntryRejected(NativeIndexError):
    """torchgen rejects an entry: `code` (derivls.codes.native), the entry `key` and the `token` it is about,
    and `fix`, the token's replacement when one is clear."""

    def __init__(
        self,
        message: str,
        code: str,
        key: str | None = None,
        token: str | None = None,
        fix: str | None = None,
        *,
        path: str | None = None,
        line: int | None = None,
        unknown: bool = False,
    ) -> None:
        super().__init__(message, path=path, line=line)
        self.code = code
        self.key = key
        self.token = token
        self.fix = fix
        self.unknown = unknown  # what a newer release may accept (see native_report)


def closest(word: str, candidates: Sequence[str] | frozenset[str] | set[str]) -> str | None:
    """The one candidate one edit (insert, delete, substitute, swap two neighbours) away from `word`;
    None when there is none or more than one."""
    found = [c for c in candidates if c != word and _one_edit(word, c)]
    return found[0] if len(found) == 1 else None


def _one_edit(a: str, b: str) -> bool:
    la, lb = len(a), len(b)
    if abs(la - lb) > 1:
        return False
    if la == lb:
        diff = [i for i in range(la) if a[i] != b[i]]
        if len(diff) == 1:
            return True
        return len(diff) == 2 and diff[1] == diff[0] + 1 and a[diff[0]] == b[diff[1]] and a[diff[1]] == b[diff[0]]
    if la > lb:
        a, b = b, a
    i = 0
    while i < len(a) and a[i] == b[i]:
        i += 1
    return a[i:] == b[i + 1 :]


def validate_dispatch(
    data: dict[str, Any],
    func_cpp_name: str,
    raw_keys: list[tuple[str, str]],
    structured: bool,
    structured_delegate: OperatorName | None,
    supported: frozenset[str] | None,
) -> None:
    """from_yaml's dispatch-table rules. raw_keys: (key, kernel) as written, comma lists split."""
    raw_dispatch = data.get("dispatch")
    if raw_dispatch is not None:
        if data.get("manual_kernel_registration", False):
            raise EntryRejected(
                "cannot specify both manual_kernel_registration and dispatch; with manual registration, "
                "dispatch has no effect",
                NATIVE_DISPATCH_TABLE,
                "dispatch",
            )
        redundant = False
        for k, v in raw_keys:
            if supported is not None and k not in supported:
                raise EntryRejected(
                    f"dispatch key {k} of kernel {v} is not a supported dispatch key",
                    NATIVE_DISPATCH_KEY,
                    "dispatch",
                    k,
                    closest(k, supported),
                    unknown=True,
                )
            if v.count("::") > 3:
                raise EntryRejected(
                    f"kernel {v}: at most 3 levels of namespace are supported", NATIVE_DISPATCH_TABLE, "dispatch", v
                )
            if k == COMPOSITE_IMPLICIT and v == func_cpp_name:
                redundant = True
        if len(raw_keys) == 1 and redundant:
            raise EntryRejected(
                "unnecessary dispatch table for this function; just delete the dispatch key entirely",
                NATIVE_DISPATCH_TABLE,
                "dispatch",
            )
        keys = {k for k, _ in raw_keys}
        if structured_delegate is None and keys == {COMPOSITE_IMPLICIT} and len(raw_keys) == 1:
            kernel = raw_keys[0][1].split("::")[-1]
            if "_symint" not in kernel:
                raise EntryRejected(
                    f"unexpected name for singleton CompositeImplicitAutograd dispatch entry: expected "
                    f"{func_cpp_name} but got {kernel}. Rename your implementation to the expected name, then "
                    "delete the dispatch table",
                    NATIVE_DISPATCH_TABLE,
                    "dispatch",
                    kernel,
                )


def validate_entry(
    data: dict[str, Any],
    f: NativeFunction,
    raw_keys: list[tuple[str, str]],
    structured_keys: frozenset[str] = STRUCTURED_DISPATCH_KEYS,
) -> None:
    """The rest of from_yaml and __post_init__ for an entry read into `f` (raises EntryRejected)."""
    func = f.func
    name = str(func.name)
    if f.structured_inherits is not None and "::" in f.structured_inherits:
        raise EntryRejected(
            "namespace is not supported in structured_inherits", NATIVE_STRUCTURED, "structured_inherits"
        )
    if f.python_module is not None and Variant.method in f.variants:
        raise EntryRejected("functions in modules cannot be methods", NATIVE_VARIANTS, "variants", "method")
    if data.get("precomputed") is not None and not f.structured:
        raise EntryRejected(
            f"precomputed requires structured: True, got structured: {f.structured}", NATIVE_STRUCTURED, "precomputed"
        )
    if data.get("precomputed"):
        _validate_precomputed(data["precomputed"])
    if data.get("dispatch") is None and not f.structured and f.structured_delegate is None:
        base = str(func.name.name)
        if (
            base.startswith("new_")
            or base.endswith("_like")
            or (func.arguments.tensor_options and not func.arguments.has_tensor_arg())
        ):
            raise EntryRejected(
                f"expected {base} to have a CompositeExplicitAutograd dispatch entry, but there was no dispatch "
                "table. Factory functions should not have implicit dispatch as they should not be decomposed for "
                "__torch_dispatch__",
                NATIVE_DISPATCH_TABLE,
                "func",
            )
    composites = [d for d in f.dispatch if d in _COMPOSITES]
    if not (
        len(composites) <= 1
        or (len(composites) == 2 and COMPOSITE_EXPLICIT_NF not in composites and COMPOSITE_IMPLICIT_NT in composites)
    ):
        raise EntryRejected(
            "cannot specify more than one of CompositeExplicitAutograd, CompositeExplicitAutogradNonFunctional, "
            "or CompositeImplicitAutograd on a single kernel; each strictly subsumes the other",
            NATIVE_DISPATCH_TABLE,
            "dispatch",
        )
    _validate_ufunc(data, f, raw_keys)
    if f.structured_delegate is not None and func.kind() == SchemaKind.out:
        raise EntryRejected(  # (torchgen finds the delegated dispatch keys first; this is the mistake)
            "structured_delegate is not allowed on out= functions; did you mean structured?",
            NATIVE_STRUCTURED,
            "structured_delegate",
        )
    if f.structured_delegate is not None:
        for k, _ in raw_keys:
            if k in structured_keys:
                raise EntryRejected(
                    f"if structured_delegate, then must not have {k} in dispatch dictionary (it is delegated!)",
                    NATIVE_STRUCTURED,
                    "dispatch",
                    k,
                )
    # NativeFunction.__post_init__
    kind = func.kind()
    if f.structured:
        if kind != SchemaKind.out:
            raise EntryRejected(
                "put structured on the out= variant of a function; did you mean structured_delegate?",
                NATIVE_STRUCTURED,
                "structured",
            )
        if not f.device_guard:
            raise EntryRejected(
                "device_guard: False is not respected by structured kernels", NATIVE_STRUCTURED, "device_guard"
            )
    if f.structured_delegate is not None:
        if kind == SchemaKind.out:
            raise EntryRejected(
                "structured_delegate is not allowed on out= functions; did you mean structured?",
                NATIVE_STRUCTURED,
                "structured_delegate",
            )
        if not f.device_guard:
            raise EntryRejected(
                "device_guard: False is not respected by structured kernels", NATIVE_STRUCTURED, "device_guard"
            )
    if f.cpp_no_default_args:
        defaulted = {a.name for a in func.schema_order_arguments() if a.default is not None}
        invalid = sorted(f.cpp_no_default_args - defaulted)
        if invalid:
            raise EntryRejected(
                f"invalid cpp_no_default_args: {', '.join(invalid)} (not an argument with a default)",
                NATIVE_ENTRY_RULE,
                "cpp_no_default_args",
                invalid[0],
            )
    if f.structured_inherits is not None and not f.structured:
        raise EntryRejected(
            "structured_inherits must also imply structured: True", NATIVE_STRUCTURED, "structured_inherits"
        )
    if name.startswith("_foreach") and f.device_check != "NoCheck":
        raise EntryRejected(
            "foreach kernels fall back to slow path when tensors are on different devices: device_check must be "
            "NoCheck",
            NATIVE_ENTRY_RULE,
            "device_check" if "device_check" in data else "func",
        )
    check_seeded(f)


def _validate_precomputed(src: object) -> None:
    """torchgen.model.Precompute.parse: `param -> decl, ...` lines, then optionally a line of added decls."""

    def bad(message: str, token: str | None = None) -> EntryRejected:
        return EntryRejected(message, NATIVE_STRUCTURED, "precomputed", token)

    if not isinstance(src, list):
        raise bad(f"precomputed must be a list, got {type(src).__name__}")
    current: str | None = None
    try:
        items = list(src)
        added = []
        if items and isinstance(items[-1], str) and " -> " not in items[-1]:
            current = items[-1]
            added = [Argument.parse(name.strip()) for name in items[-1].split(",")]
            items = items[:-1]
        replaced = []
        for item in items:
            if not isinstance(item, str):
                raise bad(f"precomputed item must be a string, got {item!r}")
            if " -> " not in item:
                raise bad(f"precomputed parameters without replacement are allowed only in the last line: {item}", item)
            current = item
            param, _, decls = item.partition(" -> ")
            if " -> " in decls:
                raise bad(f"illegal precomputed line: {item}", item)
            if " " in param:
                raise bad(f"illegal kernel param name '{param}' in precomputed parameters", param)
            args = [Argument.parse(name.strip()) for name in decls.split(",")]
            if f"{param} -> {', '.join(str(a) for a in args)}" != item:
                raise bad(f"precomputed line is not in torchgen's form 'param -> type name, ...': {item}", item)
            replaced.extend(args)
    except ValueError as e:
        if isinstance(e, EntryRejected):
            raise
        raise bad(f"bad precomputed parameter: {e}", current) from None
    for a in (*added, *replaced):
        if a.name.upper() == a.name:
            raise bad(f"precomputed argument name must not be all uppercase: {a.name}", a.name)


def check_seeded(f: NativeFunction) -> None:
    """__post_init__'s nondeterministic_seeded rule (generated functions too)."""
    if "nondeterministic_seeded" in f.tags:
        return
    func = f.func
    text = str(func)  # (cached) every name and type is in it: most functions are done after three searches
    if "rand" not in text and "dropout" not in text and "Generator" not in text:
        return
    name = str(func.name)
    if (
        ("rand" in name and "_philox_" not in name)  # (2.15: the stateless _philox_ ops; earlier releases had none)
        or (
            ("dropout" in name or any("dropout" in a.name for a in func.arguments.flat_all))
            and "backward" not in name
            and str(func.name.name) != "_cudnn_init_dropout_state"
        )
        or func.arguments.has_generator_arg()
    ):
        raise EntryRejected(
            f"nondeterministic_seeded tag missing for {func.name}", NATIVE_TAG_RULE, "tags" if f.tags else "func"
        )


def _validate_ufunc(data: dict[str, Any], f: NativeFunction, raw_keys: list[tuple[str, str]]) -> None:
    if "ufunc_inner_loop" not in data:
        return
    raw = data["ufunc_inner_loop"]
    if raw == {}:
        return
    loops: list[tuple[str, object]] = []
    if isinstance(raw, str):
        loops.append(("Generic", raw))
    elif isinstance(raw, dict):
        loops.extend(raw.items())
    else:
        raise EntryRejected("ufunc_inner_loop is not a string or a mapping", NATIVE_VALUE_TYPE, "ufunc_inner_loop")
    for k, v in loops:
        if not isinstance(k, str) or k not in UFUNC_KEYS:
            raise EntryRejected(
                f"unknown ufunc key {k!r}", NATIVE_STRUCTURED, "ufunc_inner_loop", str(k), closest(str(k), UFUNC_KEYS)
            )
        if not isinstance(v, str):
            raise EntryRejected(f"ufunc_inner_loop value is not a string: {v!r}", NATIVE_VALUE_TYPE, "ufunc_inner_loop")
        _validate_inner_loop(v)
    if not f.structured:
        raise EntryRejected("ufunc must be structured", NATIVE_STRUCTURED, "ufunc_inner_loop")
    for dk in UFUNC_DISPATCH_KEYS:
        if any(k == dk for k, _ in raw_keys):
            raise EntryRejected(
                f"ufunc should not have explicit dispatch entry for {dk}", NATIVE_STRUCTURED, "dispatch", dk
            )


# torchgen.model.ScalarType and DTYPE_CLASSES (the dtypes a ufunc inner loop may name)
_SCALAR_TYPES = frozenset(
    """Byte Char Short Int Long Half Float Double ComplexHalf ComplexFloat ComplexDouble Bool BFloat16 Float8_e5m2
    Float8_e5m2fnuz Float8_e4m3fn Float8_e4m3fnuz Float8_e8m0fnu""".split()
)
_DTYPE_CLASSES = frozenset({"Integral", "Floating", "Complex", "All", "AllAndComplex", "FloatingAndComplex"})


def _validate_inner_loop(value: str) -> None:
    """torchgen.model.UfuncInnerLoop.parse: `name (dtype, dtype class, ...)`."""
    name, sep, dtypes = value.partition(" ")
    if not sep or not dtypes or dtypes[0] != "(" or dtypes[-1] != ")":
        raise EntryRejected(
            f"ufunc inner loop '{value}': expected 'name (dtypes)'", NATIVE_STRUCTURED, "ufunc_inner_loop", name or None
        )
    for dtype in dtypes[1:-1].split(", "):
        if dtype not in _DTYPE_CLASSES and dtype not in _SCALAR_TYPES:
            raise EntryRejected(
                f"unknown dtype '{dtype}' in ufunc inner loop '{value}'",
                NATIVE_STRUCTURED,
                "ufunc_inner_loop",
                dtype or None,
                closest(dtype, _SCALAR_TYPES | _DTYPE_CLASSES),
            )


def validate_functions(
    funcs: Sequence[NativeFunction], python_keywords: bool = True
) -> list[tuple[NativeFunction, EntryRejected]]:
    """error_check_native_functions and BackendIndex.grow_index over the written functions."""
    found: list[tuple[NativeFunction, EntryRejected]] = []
    func_map: dict[OperatorName, NativeFunction] = {}
    base_func_map: dict[BaseOperatorName, list[NativeFunction]] = defaultdict(list)
    for f in funcs:
        # BackendIndex.grow_index: an operator twice for one dispatch key (ufunc / implicit entries included)
        earlier = func_map.get(f.func.name)
        func_map[f.func.name] = f
        base_func_map[f.func.name.name].append(f)
        if earlier is None:
            continue
        for first in base_func_map[f.func.name.name][:-1]:
            k = next((k for k in f.dispatch if first.func.name == f.func.name and k in first.dispatch), None)
            if k is not None:
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"duplicate operator {f.func.name} for dispatch key {k} (first declared at line "
                            f"{first.source_line})",
                            NATIVE_DUPLICATE,
                            "func",
                            str(f.func.name),
                        ),
                    )
                )
                break
    for f in funcs:
        delegate = f.structured_delegate
        if delegate is not None:
            target = func_map.get(delegate)
            if target is None:
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"{f.func.name} is marked as a structured_delegate pointing to {delegate}, but {delegate} "
                            "is missing",
                            NATIVE_STRUCTURED,
                            "structured_delegate",
                            str(delegate),
                            closest(str(delegate), [str(n) for n in func_map if func_map[n].structured]),
                        ),
                    )
                )
            elif not target.structured:
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"{f.func.name} is marked as a structured_delegate pointing to {delegate}, but {delegate} "
                            "is not marked as structured (add 'structured: True' to it)",
                            NATIVE_STRUCTURED,
                            "structured_delegate",
                            str(delegate),
                        ),
                    )
                )
        for arg in f.func.arguments.flat_all if python_keywords else ():
            if arg.name in _KEYWORDS and (str(f.func.name), arg.name) not in _KEYWORD_EXCLUSIONS:
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"argument name '{arg.name}' in function '{f.func.name}' is a reserved Python keyword",
                            NATIVE_PYTHON_KEYWORD,
                            "func",
                            arg.name,
                        ),
                    )
                )
                break
        name = str(f.func.name)
        if "inplace_view" in f.tags and name not in ("resize_", "resize_as_") and str(f.func.name.name) != "set_":
            base_name = f.func.name.name
            if not base_name.inplace:
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"{f.func.name} is marked with tag: inplace_view, but it doesn't follow the naming "
                            "convention for inplace ops: the base name must end with an underscore",
                            NATIVE_TAG_RULE,
                            "tags",
                            "inplace_view",
                        ),
                    )
                )
                continue
            out_of_place = BaseOperatorName(base_name.base, False, base_name.dunder_method)
            if not base_func_map.get(out_of_place):
                found.append(
                    (
                        f,
                        EntryRejected(
                            f"{f.func.name} is marked with tag: inplace_view, but there is no out-of-place view op "
                            f"named '{out_of_place}'",
                            NATIVE_TAG_RULE,
                            "tags",
                            "inplace_view",
                        ),
                    )
                )
    return found
