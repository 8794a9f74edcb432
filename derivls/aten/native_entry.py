"""native_functions.yaml's entries → NativeFunctions (torchgen.model.NativeFunction.from_yaml, minus
backend checks), and tags.yaml's tag names. The YAML subset is read by derivls.yamlsubset; anything
outside it by PyYAML (here)."""

from __future__ import annotations

import re
import sys

from derivls.aten import cpp
from derivls.aten.native_model import (
    COMPOSITE_EXPLICIT,
    COMPOSITE_EXPLICIT_NF,
    COMPOSITE_IMPLICIT,
    COMPOSITE_IMPLICIT_NT,
    NativeFunction,
    NativeIndexError,
    Variant,
    shared,
)
from derivls.aten.native_rules import (
    NEWEST,
    NativeProblem,
    NativeRules,
    UnknownToRules,
    known_type_names,
    schema_name_of,
    unknown_types,
)
from derivls.aten.native_validate import EntryRejected, closest, validate_dispatch, validate_entry
from derivls.aten.schema import (
    FunctionSchema,
    OperatorName,
)
from derivls.aten.sharing import shared as shared_str
from derivls.aten.sharing import shared_or_none
from derivls.base.safeyaml import safe_load, short_repr
from derivls.codes.native import (
    NATIVE_DEVICE_CHECK,
    NATIVE_DISPATCH_KEY,
    NATIVE_ENTRY_RULE,
    NATIVE_GENERATED,
    NATIVE_SCHEMA,
    NATIVE_STRUCTURED,
    NATIVE_TAGS_YAML,
    NATIVE_UNKNOWN_KEY,
    NATIVE_UNKNOWN_TAG,
    NATIVE_UNKNOWN_TYPE,
    NATIVE_UNKNOWN_VARIANT,
    NATIVE_VALUE_TYPE,
    NATIVE_VARIANTS,
    NATIVE_YAML,
)
from derivls.yamlsubset import ScannedEntry as _Entry
from derivls.yamlsubset import Unsupported, scan_native_entries, scan_tags

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any


def _yaml_loader() -> Any:
    # PyYAML is imported only for files outside the YAML subset the scanners read
    import yaml

    return getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _make_line_loader(base: Any) -> Any:
    class _LineLoader(base):  # type: ignore[misc, valid-type]
        def construct_mapping(self, node: Any, deep: bool = False) -> Any:
            mapping = super().construct_mapping(node, deep=deep)
            mapping["__line__"] = node.start_mark.line + 1
            key_lines: dict[Any, int] = {}
            dups: list[tuple[str, int]] = []
            firsts: dict[Any, Any] = {}
            for k, v in node.value:
                if k.value in key_lines:  # torchgen's YamlLoader rejects a key given twice
                    dups.append((str(k.value), k.start_mark.line + 1))
                    mapping[k.value] = self.construct_object(firsts[k.value], deep=True)  # the first one counts
                    continue
                firsts[k.value] = v
                key_lines[k.value] = k.start_mark.line + 1
                if k.value == "func":
                    mapping["__func_cols__"] = (k.start_mark.column, v.start_mark.column)
            mapping["__key_lines__"] = key_lines
            mapping["__dups__"] = dups
            return mapping

    return _LineLoader


def _yaml_entries(text: str, path: str) -> list[_Entry]:
    import yaml

    try:
        es = safe_load(text, _make_line_loader(_yaml_loader()))  # refuses anchors/aliases
    except yaml.YAMLError as e:
        # where the construct that is not closed starts (a flow sequence), else where the parser stopped
        mark = getattr(e, "context_mark", None) or getattr(e, "problem_mark", None)
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
    for item in es:
        if not isinstance(item, dict):
            raise NativeIndexError(f"expected an entry mapping, got {short_repr(item)}", path=path)
        line = item.pop("__line__")
        key_lines = item.pop("__key_lines__", {})
        cols = item.pop("__func_cols__", (None, None))
        dups = item.pop("__dups__", [])
        for v in item.values():  # nested mappings carry markers too
            if isinstance(v, dict):
                v.pop("__line__", None)
                v.pop("__key_lines__", None)
                v.pop("__func_cols__", None)
                dups += v.pop("__dups__", [])
        out.append(
            _Entry(
                data=item,
                line=line,
                key_lines=key_lines,
                func_key_col=cols[0],
                func_col=cols[1],
                duplicate_keys=sorted(dups, key=lambda d: d[1]),
            )
        )
    return out


def _read_entries(text: str, path: str) -> list[_Entry]:
    try:
        return scan_native_entries(text)
    except Unsupported:
        return _yaml_entries(text, path)


def _parse_tags(text: str, path: str, problems: list[NativeProblem] | None = None) -> set[str]:
    """tags.yaml's tag names (torchgen's parse_tags_yaml). With `problems`, what torchgen rejects in an item is
    recorded there (the tag still counts, so the functions using it are not blamed); without, it raises."""
    try:
        tags = scan_tags(text)
        if tags:  # (none: an empty file, which PyYAML reads as None)
            return set(tags)
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
    if es is None:  # torchgen's parse_tags_yaml_struct: "Expected 'es' to be a list, but got <class 'NoneType'>"
        raise NativeIndexError(
            "no tags: the file is empty (or only comments), torchgen expects a list of tags", path=path, line=1
        )
    if not isinstance(es, list):
        raise NativeIndexError(f"expected a list of tags, got {type(es).__name__}", path=path, line=1)
    lines = text.split("\n")
    rs: set[str] = set()

    def reject(message: str, line: int, key: str | None, token: str | None = None) -> None:
        if problems is None:
            raise NativeIndexError(message, path=path, line=line)
        ln, column, end = locate(lines, line, line, key, token)
        problems.append(
            NativeProblem(
                path, ln, message, None, None, code=NATIVE_TAGS_YAML, column=column, end_column=end, left_out=False
            )
        )

    for item in es:
        if not isinstance(item, dict) or "tag" not in item:
            line = item.get("__line__", 1) if isinstance(item, dict) else 1
            reject(f"expected a mapping with a 'tag' key, got {short_repr(item)}", line, None)
            continue
        line = item.get("__line__", 1)
        key_lines = item.get("__key_lines__", {})
        for key, dup_line in item.get("__dups__", ()):
            reject(
                f"found a duplicate key in the yaml: '{key}' (torchgen's YAML loader rejects it)", dup_line, key, key
            )
        desc = item.get("desc", "")
        if desc == "":  # torchgen: a missing or empty description (an empty `desc:` is None, and accepted)
            reject(
                f"Tag '{item['tag']}' must have a non-empty description",
                key_lines.get("desc", key_lines.get("tag", line)),
                "desc" if "desc" in item else "tag",
            )
        rs.add(str(item["tag"]))
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


def _entry_error(
    ent: _Entry,
    path: str,
    msg: str,
    key: str | None = None,
    code: str = NATIVE_ENTRY_RULE,
    token: str | None = None,
    fix: str | None = None,
) -> EntryRejected:
    line = ent.key_lines.get(key, ent.line) if key else ent.line
    return EntryRejected(msg, code, key, token, fix, path=path, line=line)


def _parse_with_dimname(schema_s: str) -> FunctionSchema:
    """A schema with Dimname, for releases that know it: the 2021 grammar plus the invariants."""
    func = FunctionSchema.parse(schema_s, legacy=True)
    func.validate()
    mutable_pre_self = [a for a in func.arguments.pre_self_positional if a.is_write]
    if mutable_pre_self:
        raise ValueError("mutable arguments before self are not supported: " + ", ".join(map(str, mutable_pre_self)))
    return func


def _problem(
    ent: _Entry, path: str, e: UnknownToRules | EntryRejected, lines: list[str], end_line: int
) -> NativeProblem:
    """The problem of an entry, at its token: the first occurrence of `e.token` from the line of `e.key`
    to the entry's last line (`end_line`), else that line's text."""
    schema = ent.data.get("func")
    text = schema if isinstance(schema, str) else None
    line = ent.key_lines.get(e.key, ent.line) if e.key else ent.line
    if isinstance(e, EntryRejected) and e.line is not None and not e.key:
        line = e.line
    line, column, end = locate(lines, line, end_line, e.key, e.token)
    return NativeProblem(
        path,
        line,
        e.message,
        text,
        schema_name_of(text),
        code=e.code,
        column=column,
        end_column=end,
        unknown=isinstance(e, UnknownToRules) or getattr(e, "unknown", False),
        fix=e.fix,
    )


def locate(lines: list[str], line: int, end_line: int, key: str | None, token: str | None) -> tuple[int, int, int]:
    """(1-based line, 0-based column, end column) of `token` at or after `line` (up to `end_line`); without
    one, the value of `key` on `line`, else the line's text."""
    if token:
        for ln in range(line, min(end_line, len(lines)) + 1):
            text = lines[ln - 1]
            start = 0
            while True:
                col = text.find(token, start)
                if col < 0:
                    break
                before = text[col - 1] if col > 0 else " "
                after = text[col + len(token)] if col + len(token) < len(text) else " "
                if not (before.isalnum() or before == "_") and not (after.isalnum() or after == "_"):
                    return ln, col, col + len(token)
                start = col + 1
    if 1 <= line <= len(lines):
        text = lines[line - 1]
        stripped = text.lstrip(" -")
        col = len(text) - len(stripped)
        if key and stripped.startswith(key + ":"):
            rest = stripped[len(key) + 1 :]
            value = rest.lstrip(" ")
            if value and not value.startswith("#"):
                col += len(key) + 1 + len(rest) - len(value)
        end = len(text.rstrip())
        return line, min(col, end), max(end, col + 1)
    return max(line, 1), 0, 1


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
    frozenset({COMPOSITE_IMPLICIT}),
    frozenset({COMPOSITE_IMPLICIT_NT}),
    frozenset({COMPOSITE_IMPLICIT, COMPOSITE_IMPLICIT_NT}),
)
_VARIANTS: dict[str, frozenset[Variant]] = {
    "function": frozenset({Variant.function}),
    "method": frozenset({Variant.method}),
    "function, method": frozenset({Variant.function, Variant.method}),
    "method, function": frozenset({Variant.function, Variant.method}),
}


def _from_entry(
    ent: _Entry, valid_tags: set[str] | None, path: str, legacy: bool, rules: NativeRules = NEWEST
) -> NativeFunction:
    """torchgen's NativeFunction.from_yaml, minus the backend-index checks. Raises UnknownToRules for
    what the release `rules` do not know (it costs this function only)."""
    get = ent.data.get
    namespace, func = _schema(ent, path, legacy, rules)
    _check_keys(ent, path, legacy, rules)
    use_const_ref = get("use_const_ref_for_mutable_tensors", False)
    structured = get("structured", False)
    if use_const_ref and func.arguments.out and not legacy and rules.const_ref_out:
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
            NATIVE_VALUE_TYPE,
        )
    variants = _variants(ent, path)
    device_check = get("device_check") or "ExactSame"
    if device_check != "ExactSame" and device_check != "NoCheck":
        raise _entry_error(
            ent,
            path,
            f"illegal device_check '{device_check}' (expected ExactSame or NoCheck)",
            "device_check",
            NATIVE_DEVICE_CHECK,
            str(device_check),
            closest(str(device_check), ("ExactSame", "NoCheck")),
        )
    structured_delegate = _operator_name(ent, path, "structured_delegate")
    tags = _tags(ent, path, valid_tags, namespace, func, rules)
    dispatch, raw_keys = _dispatch(ent, path, func, structured or structured_delegate is not None, legacy, rules)
    if not legacy:
        try:
            validate_dispatch(
                ent.data,
                cpp.name(func),
                raw_keys,
                structured,
                structured_delegate,
                rules.supported_dispatch_keys,
            )
        except EntryRejected as e:
            raise _rejected(ent, path, e) from None
    autogen = _autogen(ent, path)
    if func.arguments.out and variants != _VARIANTS["function"] and not legacy:
        raise _entry_error(
            ent,
            path,
            "native functions with out arguments MUST be declared with only the function variant (variants: function)",
            "variants",
            NATIVE_VARIANTS,
            "method",
        )
    f = _native_function(
        ent, path, namespace, func, use_const_ref, structured, cpp_no_default_args, variants, device_check,
        structured_delegate, tags, dispatch, autogen,
    )  # fmt: skip
    if not legacy:
        try:
            validate_entry(ent.data, f, raw_keys, rules.structured_dispatch_keys)
        except EntryRejected as e:
            raise _rejected(ent, path, e) from None
    return f


def _rejected(ent: _Entry, path: str, e: EntryRejected) -> EntryRejected:
    line = ent.key_lines.get(e.key, ent.line) if e.key else ent.line
    return EntryRejected(e.message, e.code, e.key, e.token, e.fix, path=path, line=line, unknown=e.unknown)


def _native_function(
    ent: _Entry,
    path: str,
    namespace: str,
    func: FunctionSchema,
    use_const_ref: bool,
    structured: bool,
    cpp_no_default_args: list[str] | tuple[str, ...],
    variants: frozenset[Variant],
    device_check: str,
    structured_delegate: OperatorName | None,
    tags: set[str],
    dispatch: dict[str, str],
    autogen: tuple[OperatorName, ...],
) -> NativeFunction:
    get = ent.data.get
    return NativeFunction(
        namespace=namespace,
        func=func,
        use_const_ref_for_mutable_tensors=use_const_ref,
        device_guard=get("device_guard", True),
        device_check=shared_str(device_check),
        python_module=shared_or_none(get("python_module")),
        category_override=shared_or_none(get("category_override")),
        variants=shared(variants),
        manual_kernel_registration=get("manual_kernel_registration", False),
        manual_cpp_binding=get("manual_cpp_binding", False),
        autogen=autogen,
        structured=structured,
        structured_delegate=structured_delegate,
        structured_inherits=shared_or_none(get("structured_inherits")),
        cpp_no_default_args=shared(frozenset(cpp_no_default_args)),
        # a structured delegate is always abstract; else unless only implicit composites
        is_abstract=bool(structured_delegate) or dispatch.keys() not in _IMPLICIT_ONLY,
        has_composite_implicit_autograd_kernel=COMPOSITE_IMPLICIT in dispatch,
        has_composite_implicit_autograd_nested_tensor_kernel=COMPOSITE_IMPLICIT_NT in dispatch,
        has_composite_explicit_autograd_kernel=COMPOSITE_EXPLICIT in dispatch,
        has_composite_explicit_autograd_non_functional_kernel=COMPOSITE_EXPLICIT_NF in dispatch,
        tags=shared(frozenset(tags)),
        dispatch=dispatch,
        line=ent.line,
        column=ent.func_key_col,
        func_column=ent.func_col,
        path=path,
        precomputed=get("precomputed"),
        ufunc_inner_loop=get("ufunc_inner_loop"),
    )


def _schema(ent: _Entry, path: str, legacy: bool, rules: NativeRules) -> tuple[str, FunctionSchema]:
    """(namespace, schema) of the `func:` key."""
    funcs = ent.data.get("func")
    if funcs is None:
        raise _entry_error(ent, path, "entry has no 'func' key", code=NATIVE_YAML)
    if not isinstance(funcs, str):
        raise _entry_error(
            ent, path, f"'func' must be a schema string, not {short_repr(funcs)}", "func", NATIVE_VALUE_TYPE
        )
    namespace = "aten"
    schema_s = funcs
    if "::" in funcs:
        names = funcs.split("::")
        if len(names) > 2:
            raise _entry_error(
                ent,
                path,
                f"only one level of namespace is supported, got '{'::'.join(names[:-1])}'",
                "func",
                NATIVE_SCHEMA,
            )
        namespace, schema_s = names[0] or "aten", names[1]
    try:
        func = FunctionSchema.parse(schema_s, legacy=legacy)
    except ValueError as ex:
        if legacy or not rules.accepts_dimname or "Dimname" not in schema_s:
            raise _schema_problem(str(ex), rules) from None
        try:
            func = _parse_with_dimname(schema_s)
        except ValueError as ex2:
            raise _entry_error(ent, path, str(ex2), "func", NATIVE_SCHEMA) from None
    if not legacy and (unknown := unknown_types(func, schema_s, rules)):
        e = UnknownToRules(
            f"type '{unknown[0]}' is not known to {rules.label}", "func", NATIVE_UNKNOWN_TYPE, unknown[0]
        )
        e.fix = closest(unknown[0], known_type_names(rules))
        raise e
    return namespace, func


def _schema_problem(message: str, rules: NativeRules) -> UnknownToRules:
    """A schema that does not parse: a type (with the one known type an edit away), else the schema."""
    m = _UNRECOGNIZED_TYPE.search(message)
    if m is not None:
        name = m.group(1)
        base = _BASE_NAME.match(name)
        token = base.group(0) if base else name
        e = UnknownToRules(f"{message} ({rules.label})", "func", NATIVE_UNKNOWN_TYPE, token)
        e.fix = closest(token, known_type_names(rules))
        return e
    return UnknownToRules(f"{message} ({rules.label})", "func", NATIVE_SCHEMA)


_UNRECOGNIZED_TYPE = re.compile(r"unrecognized type '([^']+)'")
_BASE_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")


def _check_keys(ent: _Entry, path: str, legacy: bool, rules: NativeRules) -> None:
    """Unknown keys (not in the 2021 grammar, which had others) and the types of the typed ones."""
    e = ent.data
    if not legacy and not _KNOWN_KEYS.issuperset(e):
        k = sorted(set(e) - _KNOWN_KEYS, key=lambda k: ent.key_lines.get(k, 0))[0]
        err = UnknownToRules(f"unknown key '{k}' in native function entry ({rules.label})", k, NATIVE_UNKNOWN_KEY, k)
        err.fix = closest(k, _KNOWN_KEYS)
        raise err
    if _TYPED_KEYS.isdisjoint(e):
        return  # (absent keys take their defaults, which are valid)
    for key, default in _BOOL_KEYS:
        v = e.get(key, default)
        if v is not True and v is not False:
            raise _entry_error(ent, path, f"'{key}' must be True or False, not {short_repr(v)}", key, NATIVE_VALUE_TYPE)
    for key in _STR_KEYS:
        v = e.get(key)
        if v is not None and not isinstance(v, str):
            raise _entry_error(ent, path, f"'{key}' must be a string, not {short_repr(v)}", key, NATIVE_VALUE_TYPE)


def _variants(ent: _Entry, path: str) -> frozenset[Variant]:
    variants_s = ent.data.get("variants", "function")
    variants = _VARIANTS.get(variants_s) if isinstance(variants_s, str) else None
    if variants is not None:
        return variants
    if not isinstance(variants_s, str):
        raise _entry_error(
            ent, path, f"variants must be a string, not {short_repr(variants_s)}", "variants", NATIVE_VALUE_TYPE
        )
    vs: set[Variant] = set()
    for v in variants_s.split(", "):
        if v == "function":
            vs.add(Variant.function)
        elif v == "method":
            vs.add(Variant.method)
        else:
            raise _entry_error(
                ent,
                path,
                f"illegal variant '{v}' (expected 'function' and/or 'method')",
                "variants",
                NATIVE_UNKNOWN_VARIANT,
                v or None,
                closest(v, ("function", "method")),
            )
    return frozenset(vs)


def _operator_name(ent: _Entry, path: str, key: str) -> OperatorName | None:
    value = ent.data.get(key)
    if value is None:
        return None
    if "::" in value:
        raise _entry_error(ent, path, f"namespaces are not supported in {key}", key, NATIVE_STRUCTURED)
    try:
        return OperatorName.parse(value)
    except ValueError as ex:
        raise _entry_error(ent, path, f"bad {key}: {ex}", key, NATIVE_STRUCTURED) from None


def _tags(
    ent: _Entry, path: str, valid_tags: set[str] | None, namespace: str, func: FunctionSchema, rules: NativeRules
) -> set[str]:
    tags_inp = ent.data.get("tags")
    if tags_inp is None:
        tags: set[str] = set()
    elif isinstance(tags_inp, str):
        tags = {tags_inp}
    elif isinstance(tags_inp, list):
        tags = set(tags_inp)
    else:
        raise _entry_error(ent, path, f"tags must be a list, not {short_repr(tags_inp)}", "tags", NATIVE_VALUE_TYPE)
    if valid_tags is not None:
        for t in tags:
            if t not in valid_tags:
                err = UnknownToRules(
                    f"illegal tag '{t}' (not defined in tags.yaml)", "tags", NATIVE_UNKNOWN_TAG, str(t)
                )
                err.fix = closest(str(t), valid_tags)
                raise err
        # torchgen adds these implicit tags (when tags.yaml defines them and the release does)
        implicit = rules.implicit_tags
        if namespace == "aten" and "pt2_compliant_tag" in valid_tags and "pt2_compliant_tag" in implicit:
            tags.add("pt2_compliant_tag")
        if func.arguments.out and "out" in valid_tags and "out" in implicit:
            tags.add("out")
        if func.name.name.inplace and "inplace" in valid_tags and "inplace" in implicit:
            tags.add("inplace")
    return tags


def _dispatch(
    ent: _Entry, path: str, func: FunctionSchema, structured: bool, legacy: bool, rules: NativeRules
) -> tuple[dict[str, str], list[tuple[str, str]]]:
    """dispatch key → kernel, as written, plus torchgen's implicit entries; and (key, kernel) as written."""
    raw_dispatch = ent.data.get("dispatch")
    dispatch: dict[str, str] = {}
    raw_keys: list[tuple[str, str]] = []
    if raw_dispatch is not None:
        if not isinstance(raw_dispatch, dict):
            raise _entry_error(
                ent,
                path,
                f"dispatch must be a mapping, not {short_repr(raw_dispatch)}",
                "dispatch",
                NATIVE_VALUE_TYPE,
            )
        for ks, v in raw_dispatch.items():
            if not isinstance(ks, str) or not isinstance(v, str):
                raise _entry_error(
                    ent,
                    path,
                    f"illegal dispatch entry {short_repr(ks)}: {short_repr(v)}",
                    "dispatch",
                    NATIVE_VALUE_TYPE,
                )
            for k in ks.split(",") if "," in ks else (ks,):
                k = sys.intern(k.strip())
                raw_keys.append((k, v))
                dispatch[k] = shared_str(v)
        if not legacy and rules.dispatch_keys is not None and not rules.dispatch_keys.issuperset(dispatch):
            unknown_key = next(k for k, _ in raw_keys if k not in rules.dispatch_keys)
            err = UnknownToRules(
                f"dispatch key '{unknown_key}' is not known to {rules.label}",
                "dispatch",
                NATIVE_DISPATCH_KEY,
                unknown_key,
            )
            err.fix = closest(unknown_key, rules.supported_dispatch_keys or rules.dispatch_keys)
            raise err
    elif not structured:
        # an entry without dispatch is implicitly CompositeImplicitAutograd
        dispatch[COMPOSITE_IMPLICIT] = cpp.name(func)
    if ent.data.get("ufunc_inner_loop"):
        for dk in ("CUDA", "CPU"):  # torchgen programs these from the ufunc loop
            dispatch.setdefault(dk, f"ufunc_{func.name.name}_{dk}")
    return dispatch, raw_keys


def _autogen(ent: _Entry, path: str) -> tuple[OperatorName, ...]:
    autogen_str = ent.data.get("autogen")
    if not autogen_str:
        return ()
    if not isinstance(autogen_str, str):
        raise _entry_error(
            ent, path, f"autogen must be a string, not {short_repr(autogen_str)}", "autogen", NATIVE_VALUE_TYPE
        )
    try:
        return tuple(OperatorName.parse(x) for x in autogen_str.split(", "))
    except ValueError as ex:
        raise _entry_error(ent, path, f"bad autogen entry: {ex}", "autogen", NATIVE_GENERATED) from None
