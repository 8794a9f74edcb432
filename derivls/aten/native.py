"""native_functions.yaml as torchgen sees it, without torch: the function list, view groups
and lookup tables that torchgen's autograd loader builds.

``NativeIndex.functions`` equals ``torchgen.gen.parse_native_yaml(...).native_functions``
(same schemas, same order, including the functions torchgen generates: out= / functional
variants, ``autogen:`` ones); ``loader_functions`` is the order
``torchgen/packaged/autograd/load_derivatives.py`` iterates (view groups flattened).

Speed: PyYAML, even with libyaml, spends ~0.35 s on the 16k-line file; native_functions.yaml
only uses a tiny, regular YAML subset, so a line scanner reads it (``_scan_entries``) and
anything outside that subset falls back to PyYAML for the whole file.

torchgen's backend/dispatch validation is out of scope; only what the function list, the
view groups and the C++ signatures need is parsed (dispatch keys are kept for hovers).
"""

from __future__ import annotations

import os
import re
import string
from collections import defaultdict
from collections.abc import Iterator, Mapping, Sequence
from dataclasses import dataclass, field
from enum import Enum, auto
from functools import cached_property
from pathlib import Path

from derivls.aten import cpp
from derivls.aten.schema import (
    Annotation,
    Argument,
    BaseOperatorName,
    BaseTy,
    BaseType,
    FunctionSchema,
    OperatorName,
    Return,
    SchemaKind,
)
from derivls.frozen import frozen_dataclass
from derivls.gcpolicy import paused_gc
from derivls.limits import read_regular_file
from derivls.safeyaml import safe_load, short_repr
from derivls.yamlsubset import Unsupported, resolve_plain, scan_tags

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

__all__ = [
    "Location",
    "NativeFunction",
    "NativeFunctionsViewGroup",
    "NativeIndex",
    "NativeIndexError",
    "Variant",
    "ViewSchemaKind",
    "gets_generated_view_copy",
    "get_view_copy_name",
]


def _yaml_loader() -> Any:
    # PyYAML is imported only for files outside the YAML subset the scanners read
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


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


_COMPOSITE_IMPLICIT = "CompositeImplicitAutograd"
_COMPOSITE_IMPLICIT_NT = "CompositeImplicitAutogradNestedTensor"
_COMPOSITE_EXPLICIT = "CompositeExplicitAutograd"
_COMPOSITE_EXPLICIT_NF = "CompositeExplicitAutogradNonFunctional"


# eq=False: identity semantics. torchgen's NativeFunction compares by value but cannot be
# hashed (it holds sets); here every object in an index is distinct and usable as a key.
@frozen_dataclass(eq=False)
class NativeFunction:
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

    # cached_property: computed once, then read from the instance dict like a field (the
    # grouping passes ask for it ~10k times)
    @cached_property
    def is_view_op(self) -> bool:
        return self.func.is_view_op or (  # aliased non-mutable return / Tensor(a -> *) input
            # See Note [resize_ in Functionalization]
            "inplace_view" in self.tags and str(self.func.name) != "resize_" and str(self.func.name) != "resize_as_"
        )

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


# --------------------------------------------------------------------------------------
# Reading the yaml
# --------------------------------------------------------------------------------------


@dataclass
class _Entry:
    """One `- func: ...` item: its mapping plus where things are."""

    data: dict[str, Any]
    line: int  # 1-based line of the first key
    key_lines: dict[str, int]
    func_key_col: int | None = None
    func_col: int | None = None


class _NotSimple(Exception):
    """The text uses YAML beyond the subset the scanner handles: use PyYAML."""


_BOOL_TRUE = {"yes", "true", "on"}
_KEY_RE = re.compile(r"[A-Za-z_][A-Za-z0-9_]*(?:, *[A-Za-z_][A-Za-z0-9_]*)*")
_SPECIAL_START = set("'\"[]{}&*!|>%@`#,?:-")
# first characters of plain scalars the YAML 1.1 resolver can only read as strings
# (bool/null/int/float start with one of yYnNtTfFoO~+-.0-9)
_PLAIN_STR_START = frozenset(set(string.ascii_letters + "_(") - set("yYnNtTfFoO"))


def _plain(value: str) -> Any:
    """A plain YAML scalar (comment already removed) -> Python value, as SafeLoader would."""
    if not value:
        return None
    q = value[0]
    if q in "'\"":
        # simple quoted scalars only: no escapes, no embedded quotes
        inner = value[1:-1]
        if len(value) < 2 or value[-1] != q or q in inner or "\\" in inner or "\n" in inner:
            raise _NotSimple
        return inner
    if q in _PLAIN_STR_START and ": " not in value and not value.endswith(":"):
        return value  # cannot resolve to bool/null/number: a string
    if value[0] in _SPECIAL_START:
        # '-' / '?' / ':' start plain scalars only if followed by a non-space; keep it simple
        if value[0] in "-?:" and len(value) > 1 and value[1] != " " and value[0] != ":":
            pass
        else:
            raise _NotSimple
    if ": " in value or value.endswith(":"):
        raise _NotSimple
    tag = resolve_plain(value)  # PyYAML's implicit resolution (None: maybe a number, …)
    if tag == "tag:yaml.org,2002:str":
        return value
    if tag == "tag:yaml.org,2002:bool":
        return value.lower() in _BOOL_TRUE
    if tag == "tag:yaml.org,2002:null":
        return None
    raise _NotSimple  # ints, floats, timestamps...: let PyYAML convert them


def _strip_comment(value: str) -> str:
    if value.startswith("#"):
        return ""
    i = value.find(" #")
    if i >= 0:
        value = value[:i]
    return value.rstrip(" ")


def _value(raw: str) -> Any:
    v = _strip_comment(raw)
    if v == "{}":
        return {}
    if v.startswith("["):
        if not v.endswith("]"):
            raise _NotSimple
        inner = v[1:-1].strip()
        if not inner:
            return []
        return [_plain(x.strip()) for x in inner.split(",")]
    return _plain(v)


def _split_kv(s: str) -> tuple[str, str] | None:
    """'key: value' / 'key:' -> (key, raw value); None if not a mapping line."""
    i = s.find(": ")
    if i < 0:
        if s.endswith(":") and not s.endswith("::"):
            i = len(s) - 1
        else:
            return None
    key = s[:i]
    if not _KEY_RE.fullmatch(key):
        raise _NotSimple
    return key, s[i + 2 :] if i + 2 <= len(s) else ""


# `[- ]key: value` / `[- ]key:` lines; keys as native_functions.yaml writes them (dispatch
# keys may be comma-separated lists)
_KV_LINE_RE = re.compile(r"( *)(- +)?([A-Za-z_][A-Za-z0-9_]*(?:, *[A-Za-z_][A-Za-z0-9_]*)*):(?:( +)(.*))?")


def _fast_value(raw: str) -> Any:
    # the common case (a schema, a name, a list of names) without the general path
    if raw and "#" not in raw and ": " not in raw and raw[-1] != ":":
        first = raw[0]
        if first in _PLAIN_STR_START:
            return raw.rstrip(" ")
        if first in "yYnNtTfFoO":  # a string unless a bool or null word (what _plain decides)
            value = raw.rstrip(" ")
            if resolve_plain(value) == "tag:yaml.org,2002:str":
                return value
    return _value(raw)


def _scan_entries(text: str) -> list[_Entry]:
    """Read native_functions.yaml's YAML subset line by line; raises _NotSimple otherwise."""
    if "\t" in text or text.startswith("\ufeff") or "\r" in text:
        raise _NotSimple
    entries: list[_Entry] = []
    cur: _Entry | None = None
    key_indent = -1
    # the entry key whose value is a nested block, and that block
    block_key: str | None = None
    block: dict[str, Any] | list[Any] | None = None
    block_indent = -1
    kv_match = _KV_LINE_RE.fullmatch
    for ln, line in enumerate(text.split("\n"), 1):
        if not line or line[0] == "#":
            continue
        m = kv_match(line)
        if m is not None:
            indent_s, dash, key, sep, raw = m.groups()
            indent = len(indent_s)
            if dash is not None:
                if indent != 0:
                    raise _NotSimple  # mappings inside nested sequences
                key_indent = len(dash)
                cur = _Entry({}, ln, {})  # data, line, key_lines
                entries.append(cur)
                indent = key_indent
            elif cur is None:
                raise _NotSimple
            if raw is None or raw == "" or raw[0] == "#":
                raw_value = None
            else:
                raw_value = raw
            if indent == key_indent:
                if key in cur.data:
                    raise _NotSimple  # duplicate key: let PyYAML decide
                cur.key_lines[key] = ln
                if raw_value is None:
                    cur.data[key] = None  # maybe a nested block follows
                    block_key, block, block_indent = key, None, -1
                else:
                    cur.data[key] = _fast_value(raw_value)
                    if key == "func":
                        cur.func_key_col = indent
                        cur.func_col = indent + len(key) + 1 + len(sep)
                    block_key, block, block_indent = None, None, -1
                continue
            # a `key: value` line of a nested mapping
            if block_key is None or indent < key_indent or raw_value is None:
                raise _NotSimple
            if block is None:
                block_indent = indent
                block = cur.data[block_key] = {}
            if indent != block_indent or not isinstance(block, dict) or key in block:
                raise _NotSimple
            block[key] = _fast_value(raw_value)
            continue
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        # a `- item` of a nested sequence (at the keys' indent or deeper)
        indent = len(line) - len(stripped)
        if cur is None or block_key is None or indent < key_indent or not stripped.startswith("- "):
            raise _NotSimple
        if block is None:
            block_indent = indent
            block = cur.data[block_key] = []
        if indent != block_indent or not isinstance(block, list):
            raise _NotSimple
        item = stripped[2:].lstrip(" ")
        if _KV_LINE_RE.fullmatch(item) is not None or item.startswith("- "):
            raise _NotSimple  # mappings / sequences inside sequences
        block.append(_value(item))
    return entries


def _make_line_loader(base: Any) -> Any:
    class _LineLoader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            mapping = super().construct_mapping(node, deep=deep)
            mapping["__line__"] = node.start_mark.line + 1
            key_lines = {}
            for k, v in node.value:
                key_lines[k.value] = k.start_mark.line + 1
                if k.value == "func":
                    mapping["__func_cols__"] = (k.start_mark.column, v.start_mark.column)
            mapping["__key_lines__"] = key_lines
            return mapping

    return _LineLoader


def _yaml_entries(text: str, path: str) -> list[_Entry]:
    import yaml

    try:
        es = safe_load(text, _make_line_loader(_yaml_loader()))  # refuses anchors/aliases
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None) or getattr(e, "context_mark", None)
        line = mark.line + 1 if mark is not None else None
        problem = getattr(e, "problem", None) or str(e)
        raise NativeIndexError(f"YAML error: {problem}", path=path, line=line) from None
    if es is None:
        return []
    if not isinstance(es, list):
        raise NativeIndexError(
            f"expected a list of entries at the top level, got {type(es).__name__}", path=path, line=1
        )
    out: list[_Entry] = []
    for e in es:
        if not isinstance(e, dict):
            raise NativeIndexError(f"expected an entry mapping, got {short_repr(e)}", path=path)
        line = e.pop("__line__")
        key_lines = e.pop("__key_lines__", {})
        cols = e.pop("__func_cols__", (None, None))
        for v in e.values():  # nested mappings carry markers too
            if isinstance(v, dict):
                v.pop("__line__", None)
                v.pop("__key_lines__", None)
                v.pop("__func_cols__", None)
        out.append(_Entry(data=e, line=line, key_lines=key_lines, func_key_col=cols[0], func_col=cols[1]))
    return out


def _read_entries(text: str, path: str) -> list[_Entry]:
    try:
        return _scan_entries(text)
    except _NotSimple:
        return _yaml_entries(text, path)


def _parse_tags(text: str, path: str) -> set[str]:
    try:
        return set(scan_tags(text))
    except Unsupported:  # outside the subset, or a mistake: PyYAML reads it (and reports it)
        pass
    import yaml

    try:
        es = safe_load(text, _make_line_loader(_yaml_loader()))  # refuses anchors/aliases
    except yaml.YAMLError as e:
        mark = getattr(e, "problem_mark", None)
        raise NativeIndexError(
            f"YAML error: {getattr(e, 'problem', None) or e}", path=path, line=mark.line + 1 if mark else None
        ) from None
    if es is None:
        es = []
    if not isinstance(es, list):
        raise NativeIndexError(f"expected a list of tags, got {type(es).__name__}", path=path, line=1)
    rs: set[str] = set()
    for e in es:
        if not isinstance(e, dict) or "tag" not in e:
            raise NativeIndexError(f"expected a mapping with a 'tag' key, got {short_repr(e)}", path=path)
        line = e.get("__line__")
        if not e.get("desc"):
            raise NativeIndexError(f"Tag '{e['tag']}' must have a non-empty description", path=path, line=line)
        rs.add(str(e["tag"]))
    return rs


# --------------------------------------------------------------------------------------
# Building NativeFunctions (torchgen.model.NativeFunction.from_yaml, minus backend checks)
# --------------------------------------------------------------------------------------

_KNOWN_KEYS = frozenset(
    {
        "func",
        "cpp_no_default_args",
        "use_const_ref_for_mutable_tensors",
        "variants",
        "manual_kernel_registration",
        "manual_cpp_binding",
        "device_guard",
        "device_check",
        "structured",
        "structured_delegate",
        "structured_inherits",
        "python_module",
        "category_override",
        "precomputed",
        "tags",
        "dispatch",
        "autogen",
        "ufunc_inner_loop",
    }
)


def _entry_error(ent: _Entry, path: str, msg: str, key: str | None = None) -> NativeIndexError:
    line = ent.key_lines.get(key, ent.line) if key else ent.line
    return NativeIndexError(msg, path=path, line=line)


_BOOL_KEYS = (
    ("use_const_ref_for_mutable_tensors", False),
    ("manual_kernel_registration", False),
    ("manual_cpp_binding", False),
    ("device_guard", True),
    ("structured", False),
)
_STR_KEYS = ("device_check", "structured_delegate", "structured_inherits", "python_module", "category_override")
_TYPED_KEYS = frozenset(k for k, _ in _BOOL_KEYS) | frozenset(_STR_KEYS)
_IMPLICIT_ONLY = (
    frozenset({_COMPOSITE_IMPLICIT}),
    frozenset({_COMPOSITE_IMPLICIT_NT}),
    frozenset({_COMPOSITE_IMPLICIT, _COMPOSITE_IMPLICIT_NT}),
)
_VARIANTS: dict[str, frozenset[Variant]] = {
    "function": frozenset({Variant.function}),
    "method": frozenset({Variant.method}),
    "function, method": frozenset({Variant.function, Variant.method}),
    "method, function": frozenset({Variant.function, Variant.method}),
}


def _from_entry(ent: _Entry, valid_tags: set[str] | None, path: str, legacy: bool) -> NativeFunction:
    """torchgen's NativeFunction.from_yaml, minus the backend-index checks."""
    e = ent.data
    get = e.get
    funcs = get("func")
    if funcs is None:
        raise _entry_error(ent, path, "entry has no 'func' key")
    if not isinstance(funcs, str):
        raise _entry_error(ent, path, f"'func' must be a schema string, not {short_repr(funcs)}", "func")
    namespace = "aten"
    schema_s = funcs
    if "::" in funcs:
        names = funcs.split("::")
        if len(names) > 2:
            raise _entry_error(
                ent, path, f"only one level of namespace is supported, got '{'::'.join(names[:-1])}'", "func"
            )
        namespace, schema_s = names[0] or "aten", names[1]
    try:
        func = FunctionSchema.parse(schema_s, legacy=legacy)
    except ValueError as ex:
        raise _entry_error(ent, path, str(ex), "func") from None

    if not legacy and not _KNOWN_KEYS.issuperset(e):
        k = sorted(set(e) - _KNOWN_KEYS, key=lambda k: ent.key_lines.get(k, 0))[0]
        raise _entry_error(ent, path, f"unknown key '{k}' in native function entry", k)

    if not _TYPED_KEYS.isdisjoint(e):  # (absent keys take their defaults, which are valid)
        for key, default in _BOOL_KEYS:
            v = get(key, default)
            if v is not True and v is not False:
                raise _entry_error(ent, path, f"'{key}' must be True or False, not {short_repr(v)}", key)
        for key in _STR_KEYS:
            v = get(key)
            if v is not None and not isinstance(v, str):
                raise _entry_error(ent, path, f"'{key}' must be a string, not {short_repr(v)}", key)
    use_const_ref = get("use_const_ref_for_mutable_tensors", False)
    structured = get("structured", False)
    if use_const_ref and func.arguments.out and not legacy:
        raise _entry_error(
            ent,
            path,
            "use_const_ref_for_mutable_tensors is not allowed on out= functions "
            "(see https://github.com/pytorch/pytorch/issues/145522)",
            "use_const_ref_for_mutable_tensors",
        )

    cpp_no_default_args = get("cpp_no_default_args", ())
    if not isinstance(cpp_no_default_args, (list, tuple)):
        raise _entry_error(
            ent,
            path,
            f"cpp_no_default_args must be a list, not {short_repr(cpp_no_default_args)}",
            "cpp_no_default_args",
        )

    variants_s = get("variants", "function")
    variants = _VARIANTS.get(variants_s) if isinstance(variants_s, str) else None
    if variants is None:
        if not isinstance(variants_s, str):
            raise _entry_error(ent, path, f"variants must be a string, not {short_repr(variants_s)}", "variants")
        vs: set[Variant] = set()
        for v in variants_s.split(", "):
            if v == "function":
                vs.add(Variant.function)
            elif v == "method":
                vs.add(Variant.method)
            else:
                raise _entry_error(
                    ent, path, f"illegal variant '{v}' (expected 'function' and/or 'method')", "variants"
                )
        variants = frozenset(vs)

    device_check = get("device_check") or "ExactSame"
    if device_check != "ExactSame" and device_check != "NoCheck":
        raise _entry_error(ent, path, f"illegal device_check '{device_check}'", "device_check")
    structured_delegate_s = get("structured_delegate")
    structured_delegate: OperatorName | None = None
    if structured_delegate_s is not None:
        if "::" in structured_delegate_s:
            raise _entry_error(ent, path, "namespaces are not supported in structured_delegate", "structured_delegate")
        try:
            structured_delegate = OperatorName.parse(structured_delegate_s)
        except ValueError as ex:
            raise _entry_error(ent, path, f"bad structured_delegate: {ex}", "structured_delegate") from None

    tags_inp = get("tags")
    if tags_inp is None:
        tags: set[str] = set()
    elif isinstance(tags_inp, str):
        tags = {tags_inp}
    elif isinstance(tags_inp, list):
        tags = set(tags_inp)
    else:
        raise _entry_error(ent, path, f"tags must be a list, not {short_repr(tags_inp)}", "tags")
    if valid_tags is not None:
        for t in tags:
            if t not in valid_tags:
                raise _entry_error(ent, path, f"illegal tag '{t}' (not defined in tags.yaml)", "tags")
        # torchgen adds these implicit tags (when tags.yaml defines them)
        if namespace == "aten" and "pt2_compliant_tag" in valid_tags:
            tags.add("pt2_compliant_tag")
        if func.arguments.out and "out" in valid_tags:
            tags.add("out")
        if func.name.name.inplace and "inplace" in valid_tags:
            tags.add("inplace")

    raw_dispatch = get("dispatch")
    dispatch: dict[str, str] = {}
    if raw_dispatch is not None:
        if not isinstance(raw_dispatch, dict):
            raise _entry_error(ent, path, f"dispatch must be a mapping, not {short_repr(raw_dispatch)}", "dispatch")
        for ks, v in raw_dispatch.items():
            if not isinstance(ks, str) or not isinstance(v, str):
                raise _entry_error(ent, path, f"illegal dispatch entry {short_repr(ks)}: {short_repr(v)}", "dispatch")
            if "," in ks:
                for k in ks.split(","):
                    dispatch[k.strip()] = v
            else:
                dispatch[ks.strip()] = v
    elif not structured and structured_delegate is None:
        # an entry without dispatch is implicitly CompositeImplicitAutograd
        dispatch[_COMPOSITE_IMPLICIT] = cpp.name(func)
    ufunc_inner_loop = get("ufunc_inner_loop")
    if ufunc_inner_loop:
        for dk in ("CUDA", "CPU"):  # torchgen programs these from the ufunc loop
            dispatch.setdefault(dk, f"ufunc_{func.name.name}_{dk}")

    autogen_str = get("autogen")
    autogen: tuple[OperatorName, ...] = ()
    if autogen_str:
        if not isinstance(autogen_str, str):
            raise _entry_error(ent, path, f"autogen must be a string, not {short_repr(autogen_str)}", "autogen")
        try:
            autogen = tuple(OperatorName.parse(x) for x in autogen_str.split(", "))
        except ValueError as ex:
            raise _entry_error(ent, path, f"bad autogen entry: {ex}", "autogen") from None

    if func.arguments.out and variants != _VARIANTS["function"] and not legacy:
        raise _entry_error(
            ent,
            path,
            "native functions with out arguments MUST be declared with only the function variant (variants: function)",
            "variants",
        )

    return NativeFunction(
        namespace=namespace,
        func=func,
        use_const_ref_for_mutable_tensors=use_const_ref,
        device_guard=get("device_guard", True),
        device_check=device_check,
        python_module=get("python_module"),
        category_override=get("category_override"),
        variants=variants,
        manual_kernel_registration=get("manual_kernel_registration", False),
        manual_cpp_binding=get("manual_cpp_binding", False),
        autogen=autogen,
        structured=structured,
        structured_delegate=structured_delegate,
        structured_inherits=get("structured_inherits"),
        cpp_no_default_args=frozenset(cpp_no_default_args),
        # a structured delegate is always abstract; else unless only implicit composites
        is_abstract=bool(structured_delegate) or dispatch.keys() not in _IMPLICIT_ONLY,
        has_composite_implicit_autograd_kernel=_COMPOSITE_IMPLICIT in dispatch,
        has_composite_implicit_autograd_nested_tensor_kernel=_COMPOSITE_IMPLICIT_NT in dispatch,
        has_composite_explicit_autograd_kernel=_COMPOSITE_EXPLICIT in dispatch,
        has_composite_explicit_autograd_non_functional_kernel=_COMPOSITE_EXPLICIT_NF in dispatch,
        tags=frozenset(tags),
        dispatch=dispatch,
        line=ent.line,
        column=ent.func_key_col,
        func_column=ent.func_col,
        path=path,
        precomputed=get("precomputed"),
        ufunc_inner_loop=ufunc_inner_loop,
    )


# --------------------------------------------------------------------------------------
# torchgen.native_function_generation
# --------------------------------------------------------------------------------------

# See torchgen Note: [Out ops with functional variants that don't get grouped properly]
OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY = [
    "adaptive_avg_pool3d_backward.grad_input",
    "_slow_conv2d_backward.grad_input",
]
# Note: [Mutable ops that cannot get an out variant]
MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = ["_cummax_helper", "_cummin_helper"]
# operators without tensor-like returns
FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT = [
    "_assert_async",
    "_assert_async.msg",
    "_assert_tensor_metadata",
    "_cslt_sparse_mm_search",
    "_assert_scalar",
    "_dimI",
    "_dimV",
    "_has_same_storage_numel",
    "_linalg_check_errors",
    "_local_scalar_dense",
    "_nested_tensor_from_mask_left_aligned",
    "_nnz",
    "_use_cudnn_ctc_loss",
    "_use_cudnn_ctc_loss.Tensor",
    "_use_miopen_ctc_loss",
    "_use_miopen_ctc_loss.Tensor",
    "_validate_compressed_sparse_indices",
    "allclose",
    "dense_dim",
    "equal",
    "is_coalesced",
    "is_pinned",
    "is_same_size",
    "is_set_to",
    "q_per_channel_axis",
    "q_scale",
    "q_zero_point",
    "qscheme",
    "record_stream",
    "sparse_dim",
    "sym_constrain_range",
    "sym_constrain_range_for_size",
    "_nested_tensor_storage_offsets",
    "_chunk_grad_outputs_efficient_attention",
    "_fused_sdp_choice",
    "_print",
    "_sink_tokens",
    "_nested_get_ragged_idx",
]
INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY = ["polygamma_"]


def pre_group_native_functions(
    native_functions: Sequence[NativeFunction],
) -> dict[FunctionSchema, dict[SchemaKind, NativeFunction]]:
    """Group the variants of one op (add.Tensor, add_.Tensor, add.out) by signature()."""
    pre: dict[FunctionSchema, dict[SchemaKind, NativeFunction]] = defaultdict(dict)
    for f in native_functions:
        d = pre[f.func.signature()]
        kind = f.func.kind()
        if kind in d:
            raise NativeIndexError(
                f"duplicate schema kind {kind.name} for {f.func} (same signature as "
                f"{d[kind].func}, line {d[kind].source_line})",
                path=f.path,
                line=f.source_line,
            )
        d[kind] = f
    return pre


def get_expected_out_variant_overload_name(overload_name: str | None) -> str:
    return "out" if not overload_name else f"{overload_name}_out"


def self_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    """inplace schema -> out= schema (self's annotation moves to a new `out` argument)."""
    assert func.arguments.self_arg is not None
    return FunctionSchema(
        name=func.name.remove_inplace().with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.remove_self_annotation().with_out_args(
            [
                Argument(
                    name="out",
                    type=func.arguments.self_arg.argument.type,
                    default=None,
                    annotation=func.arguments.self_arg.argument.annotation,
                )
            ]
        ),
        returns=func.returns,
    )


def functional_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    new_returns, new_out_args = generate_out_args_from_schema(func)
    return FunctionSchema(
        name=func.name.with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.signature().with_out_args(new_out_args),
        returns=tuple(new_returns),
    )


def generate_out_args_from_schema(func: FunctionSchema) -> tuple[list[Return], list[Argument]]:
    if any(r.annotation is not None and r.annotation.is_write for r in func.returns):
        raise ValueError("mutable schema kinds should not return mutable arguments")
    tensorlike_rets = [r for r in func.returns if r.type.is_tensor_like()]
    if len(tensorlike_rets) == 0:
        raise ValueError("expected at least one tensor-like return")
    used_annotations = [x for a in func.arguments.flat_all if a.annotation is not None for x in a.annotation.alias_set]
    valid_annotations = [x for x in string.ascii_lowercase if x not in used_annotations]
    all_rets_are_tensors = all(r.type == BaseType(BaseTy.Tensor) for r in func.returns)
    new_out_args: list[Argument] = []
    new_returns: list[Return] = []
    for i, r in enumerate(func.returns):
        if r.type.is_tensor_like():
            new_out = Argument(
                name="out" if len(func.returns) == 1 else f"out{i}",
                type=r.type,
                default=None,
                annotation=Annotation.parse(f"{valid_annotations[i]}!"),
            )
            new_out_args.append(new_out)
            if all_rets_are_tensors:
                # out= schemas return their out arguments only when all are plain Tensors
                new_returns.append(Return(name=None, type=new_out.type, annotation=new_out.annotation))
        else:
            new_returns.append(r)
    return new_returns, new_out_args


def mutable_to_out_signature(func: FunctionSchema) -> FunctionSchema:
    new_returns, new_out_args = generate_out_args_from_schema(func)
    return FunctionSchema(
        name=func.name.remove_inplace().with_overload(get_expected_out_variant_overload_name(func.name.overload_name)),
        arguments=func.arguments.with_out_args(new_out_args),
        returns=tuple(new_returns),
    )


def generate_function(f: NativeFunction, k: SchemaKind) -> NativeFunction:
    """A functional or out= variant of f, as torchgen generates it."""
    if k == SchemaKind.functional:
        # mutable arguments become returns; `_functional` base name if f is "mutable"
        func = f.func.signature(keep_return_names=True).with_name(
            OperatorName(
                name=BaseOperatorName(
                    base=f.func.name.name.base,
                    inplace=False,
                    dunder_method=f.func.name.name.dunder_method,
                    functional_overload=f.func.kind() == SchemaKind.mutable,
                ),
                overload_name=f.func.name.overload_name,
            )
        )
    elif k == SchemaKind.out:
        fk = f.func.kind()
        if fk == SchemaKind.inplace:
            func = self_to_out_signature(f.func)
        elif fk == SchemaKind.mutable:
            func = mutable_to_out_signature(f.func)
        elif fk == SchemaKind.functional:
            func = functional_to_out_signature(f.func)
        else:
            raise ValueError("out= functions are only generated from inplace, mutable or functional ones")
    else:
        raise ValueError("only functional or out= functions are generated")

    kernel_name = func.name.unambiguous_name() if func.kind() == SchemaKind.out else cpp.name(func)
    if f.func.has_symint():
        kernel_name += "_symint"
    tags = {"generated"} | set(f.tags & {"nondeterministic_seeded", "view_copy", "pt2_compliant_tag"})
    if func.is_out_fn():
        tags.add("out")
    if func.name.name.inplace:
        tags.add("inplace")
    return NativeFunction(
        namespace=f.namespace,
        func=func,
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        device_guard=False,
        device_check="NoCheck",
        python_module=None,
        category_override=None,
        variants=frozenset({Variant.function}),  # generated functions are not methods
        manual_kernel_registration=False,
        manual_cpp_binding=False,
        autogen=(),
        structured=False,
        structured_delegate=None,
        structured_inherits=None,
        cpp_no_default_args=frozenset(),
        is_abstract=f.is_abstract,
        has_composite_implicit_autograd_kernel=False,
        has_composite_implicit_autograd_nested_tensor_kernel=False,
        has_composite_explicit_autograd_kernel=True,
        has_composite_explicit_autograd_non_functional_kernel=False,
        tags=frozenset(tags),
        dispatch={_COMPOSITE_EXPLICIT: kernel_name},
        line=None,
        path=f.path,
        generated_from=f,
    )


def add_generated_native_functions(rs: list[NativeFunction]) -> None:
    """torchgen.native_function_generation.add_generated_native_functions (appends to rs)."""
    for d in pre_group_native_functions(rs).values():
        if len(d) == 1 and SchemaKind.functional in d:
            # The usual group, a lone functional op: torchgen generates nothing for it unless
            # `autogen:` asks, and (below) only complains if it has no tensor-like return.
            f = d[SchemaKind.functional]
            if not f.autogen and any(r.type.is_tensor_like() for r in f.func.returns):
                continue
        has_functional = SchemaKind.functional in d
        has_inplace = SchemaKind.inplace in d
        has_mutable = SchemaKind.mutable in d
        has_out = SchemaKind.out in d
        if not (has_mutable or has_inplace or has_out or has_functional):
            continue
        # (one pass over the variants for torchgen's four any/all tests)
        is_core = has_view_ops = False
        are_manual = are_composite_implicit = True
        for variant in d.values():
            is_core = is_core or "core" in variant.tags
            are_manual = are_manual and variant.manual_cpp_binding
            # set_ is an inplace_view but treated as a normal inplace op here
            has_view_ops = has_view_ops or (variant.is_view_op and str(variant.func.name.name) != "set_")
            are_composite_implicit = are_composite_implicit and variant.has_composite_implicit_autograd_kernel
        if are_manual or has_view_ops or (are_composite_implicit and not is_core):
            continue
        if has_out and len(d) == 1:
            out_f = d[SchemaKind.out]
            if str(out_f.func.name) not in OUT_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
                raise NativeIndexError(
                    f"found an out= operator that we could not find any other variants of: {out_f.func}",
                    path=out_f.path,
                    line=out_f.source_line,
                )
            continue
        if has_inplace and str(d[SchemaKind.inplace].func.name) in INPLACE_OPS_THAT_DONT_GET_GROUPED_PROPERLY:
            continue

        base_fn = (
            d[SchemaKind.mutable]
            if has_mutable
            else d[SchemaKind.inplace]
            if has_inplace
            else d[SchemaKind.out]
            if has_out
            else d[SchemaKind.functional]
        )
        base_fn_valid = base_fn.func.kind() == SchemaKind.inplace or any(
            r.type.is_tensor_like() for r in base_fn.func.returns
        )
        # torchgen: only generate out= when an `autogen:` entry asks for it
        needs_out = any("out" in str(op_name) for op_name in base_fn.autogen)
        gets_out_variant = not has_out and base_fn_valid and needs_out
        if not has_out and not base_fn_valid:
            if (
                str(base_fn.func.name) not in MUTABLE_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
                and str(base_fn.func.name) not in FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT
            ):
                raise NativeIndexError(
                    f"found an operator that we could not generate an out= variant for: {base_fn.func}. "
                    "Operators without tensor-like returns can't get a proper out= variant; "
                    "torchgen keeps a list of the known ones (FUNCTIONAL_OPS_THAT_CANNOT_GET_AN_OUT_VARIANT)",
                    path=base_fn.path,
                    line=base_fn.source_line,
                )
        try:
            if gets_out_variant:
                fn = generate_function(base_fn, SchemaKind.out)
                d[SchemaKind.out] = fn
                rs.append(fn)
            if not has_functional and (has_out or gets_out_variant):
                fn = generate_function(base_fn, SchemaKind.functional)
                d[SchemaKind.functional] = fn
                rs.append(fn)
        except ValueError as ex:
            if isinstance(ex, NativeIndexError):
                raise
            raise NativeIndexError(
                f"cannot generate variants of {base_fn.func}: {ex}", path=base_fn.path, line=base_fn.source_line
            ) from None


def get_grouped_by_view_native_functions(
    native_functions: Sequence[NativeFunction],
) -> list[NativeFunction | NativeFunctionsViewGroup]:
    """torchgen.gen.get_grouped_by_view_native_functions."""
    grouped: dict[FunctionSchema, dict[Any, NativeFunction]] = defaultdict(dict)
    for f in native_functions:
        schema = f.func.view_signature()
        view_kind = f.view_schema_kind
        d = grouped[schema]
        key: Any = f.func.kind() if view_kind == ViewSchemaKind.non_aliasing else view_kind
        if key in d:
            raise NativeIndexError(
                f"{f.func} and {d[key].func} (line {d[key].source_line}) have the same view "
                f"signature and kind ({key.name})",
                path=f.path,
                line=f.source_line,
            )
        d[key] = f

    out: list[NativeFunction | NativeFunctionsViewGroup] = []
    for d in grouped.values():
        if ViewSchemaKind.aliasing in d:
            d = dict(d)
            g = NativeFunctionsViewGroup(
                view=d.pop(ViewSchemaKind.aliasing),
                view_copy=d.pop(SchemaKind.functional, None),
                view_inplace=d.pop(ViewSchemaKind.aliasing_inplace, None),
            )
            g.check()
            out.append(g)
        out.extend(d.values())
    return out


# --------------------------------------------------------------------------------------
# The index
# --------------------------------------------------------------------------------------


class NativeIndex:
    """Everything derivls needs from native_functions.yaml.

    functions         torchgen's parse_native_yaml(...).native_functions, same order
    loader_functions  load_derivatives' order (view groups flattened, include_copy=True)
    view_groups       the NativeFunctionsViewGroups
    by_schema         str(f.func) -> f          (load_derivatives' functions_by_schema)
    by_signature      f.func.signature() -> fs  (load_derivatives' functions_by_signature)
    by_name           str(f.func.name) -> f     ("add.Tensor" -> f)
    """

    def __init__(
        self,
        functions: list[NativeFunction],
        grouped: list[NativeFunction | NativeFunctionsViewGroup],
        *,
        path: str,
        tags: frozenset[str] | None,
        legacy: bool,
    ) -> None:
        self.path = path
        self.tags = tags
        self.legacy = legacy
        self.functions: list[NativeFunction] = functions
        self.grouped = grouped
        self.loader_functions: list[NativeFunction] = [
            x for g in grouped for x in ([g] if isinstance(g, NativeFunction) else g.functions(include_copy=True))
        ]
        self.view_groups: list[NativeFunctionsViewGroup] = [
            g for g in grouped if isinstance(g, NativeFunctionsViewGroup)
        ]
        self.by_schema: dict[str, NativeFunction] = {}
        self.by_signature: dict[FunctionSchema, list[NativeFunction]] = defaultdict(list)
        self.by_name: dict[str, NativeFunction] = {}
        for f in self.loader_functions:
            s = str(f.func)
            prev = self.by_schema.get(s)
            if prev is not None:
                raise NativeIndexError(
                    f"duplicate function schema: {s} (also at line {prev.source_line})",
                    path=f.path,
                    line=f.source_line,
                )
            self.by_schema[s] = f
            self.by_signature[f.func.signature()].append(f)
            self.by_name.setdefault(str(f.func.name), f)

    def __len__(self) -> int:
        return len(self.functions)

    def __iter__(self) -> Iterator[NativeFunction]:
        return iter(self.functions)

    def line_of(self, schema_str: str) -> int | None:
        """1-based line of the `func:` of a written function; None if unknown or generated."""
        f = self.by_schema.get(schema_str)
        return None if f is None else f.line

    @staticmethod
    def load(
        native_path: str | os.PathLike[str],
        tags_path: str | os.PathLike[str] | None = None,
        *,
        legacy: bool | None = None,
    ) -> NativeIndex:
        """Read native_functions.yaml (and tags.yaml: given, else the sibling file if any).

        legacy=None: legacy (2021-era) mode iff there is no tags.yaml. Legacy mode accepts
        the 2021 grammar and, like that era's torchgen, generates no functions and has no
        view groups."""
        native_path = os.fspath(native_path)
        try:
            text = read_regular_file(native_path, "native functions file")
        except (OSError, UnicodeDecodeError) as e:
            raise NativeIndexError(f"cannot read native functions file: {e}", path=native_path) from None
        tags_text: str | None = None
        tags_file: str | None = None
        if tags_path is None:
            sibling = Path(native_path).with_name("tags.yaml")
            if sibling.is_file():
                tags_path = sibling
        if tags_path is not None:
            tags_file = os.fspath(tags_path)
            try:
                tags_text = read_regular_file(tags_file, "tags file")
            except (OSError, UnicodeDecodeError) as e:
                raise NativeIndexError(f"cannot read tags file: {e}", path=tags_file) from None
        return NativeIndex.from_text(text, tags_text, path=native_path, tags_path=tags_file, legacy=legacy)

    @staticmethod
    def from_text(
        native_text: str,
        tags_text: str | None = None,
        path: str = "native_functions.yaml",
        *,
        tags_path: str = "tags.yaml",
        legacy: bool | None = None,
    ) -> NativeIndex:
        """Build from text (e.g. an unsaved editor buffer). See load() for `legacy`."""
        # The load allocates ~100k small objects and no cycles: pausing the cyclic GC
        # meanwhile saves a third of the time.
        with paused_gc():
            return NativeIndex._from_text(native_text, tags_text, path, tags_path, legacy)

    @staticmethod
    def _from_text(
        native_text: str,
        tags_text: str | None,
        path: str,
        tags_path: str,
        legacy: bool | None,
    ) -> NativeIndex:
        if legacy is None:
            legacy = tags_text is None
        valid_tags: set[str] | None = None
        if tags_text is not None:
            valid_tags = _parse_tags(tags_text, tags_path or "tags.yaml")
        entries = _read_entries(native_text, path)
        rs = [_from_entry(ent, valid_tags, path, legacy) for ent in entries]
        if legacy:
            # 2021-era torchgen generated nothing and had no view groups
            grouped: list[NativeFunction | NativeFunctionsViewGroup] = list(rs)
        else:
            try:
                add_generated_native_functions(rs)
                grouped = get_grouped_by_view_native_functions(rs)
            except NativeIndexError:
                raise
            except ValueError as e:  # e.g. kind() of a schema both out= and inplace
                raise NativeIndexError(str(e), path=path) from None
        return NativeIndex(
            rs,
            grouped,
            path=path,
            tags=frozenset(valid_tags) if valid_tags is not None else None,
            legacy=legacy,
        )
