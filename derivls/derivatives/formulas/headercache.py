"""The header index on disk.

A `check` after an edit builds the same HeaderIndex as the process before it (parsing FunctionsManual.h,
TensorBody.h's template and TensorBase.h, and naming every operator of the index: ~23 ms, a tenth of
such a check). It is kept in the native index's persistent cache as plain values (str, int, bool,
tuples, lists, dicts: nothing is unpickled into code, see derivls/base/safepickle.py, and the shape is checked
when read), keyed by the native index's own key, the sources' paths, sizes and modification times and
(diskcache.content_key) the derivls code and version."""

from __future__ import annotations

import itertools
import os
import weakref
from collections.abc import Iterable
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.base.diskcache import DiskCache, content_key
from derivls.derivatives.formulas.declarations import Declaration
from derivls.derivatives.formulas.headers import HeaderIndex, NameTable, build_header_index
from derivls.derivatives.formulas.members import Member
from derivls.derivatives.formulas.sources import Sources

FORMAT = 1  # of the stored value; part of its key


_persisted: dict[int, tuple[weakref.ref[NativeIndex], DiskCache, str]] = {}


def persist_with(index: NativeIndex, disk: DiskCache, index_key: str) -> None:
    """Header indexes built for `index` are read from and written to `disk` (where `index` is kept, under
    `index_key`: project.index_native)."""
    if len(_persisted) > 8:
        for k, (ref, _, _) in list(_persisted.items()):
            if ref() is None:
                del _persisted[k]
    _persisted[id(index)] = (weakref.ref(index), disk, index_key)


def _stamp(path: Path | None) -> str | None:
    if path is None:
        return None
    try:
        st = os.stat(path)
    except OSError:
        return f"{path} (none)"
    return f"{path} {st.st_size} {st.st_mtime_ns}"


def _disk_key(sources: Sources, index: NativeIndex | None) -> tuple[DiskCache, str] | None:
    """Where the header index of `sources` and `index` is kept, and its key; None: it is not kept."""
    found = _persisted.get(id(index)) if index is not None else None
    if found is None or found[0]() is not index or not found[1].enabled:
        return None
    paths = [sources.functions_manual, *sources.tensor_body, sources.tensor_base, *sources.templates]
    return found[1], content_key("headers", str(FORMAT), found[2], str(len(paths)), *(_stamp(p) for p in paths))


def _plain(headers: HeaderIndex) -> dict[str, object]:
    """What build_header_index found, as plain values (_from_plain reads it back)."""

    def members(table: dict[str, list[Member]]) -> dict[str, list[tuple[object, ...]]]:
        return {
            name: [(m.name, m.returns, m.parameters, m.names, m.required, m.template, m.text) for m in found]
            for name, found in table.items()
        }

    return {
        "helpers": [
            (d.name, d.text, d.parameters, d.parameter_texts, d.line, d.path)
            for found in headers.helpers.values()
            for d in found
        ],
        "tensor_methods": sorted(headers.tensor_methods),
        "at_functions": headers.at_functions._names,
        "method_schemas": headers.method_schemas._names,
        "using": sorted(headers.using),
        "forward_namespaces": sorted(headers.forward_namespaces),
        "tensor_members": members(headers.tensor_members),
        "base_members": members(headers.base_members),
        "tensor_using": sorted(headers.tensor_using),
        "problems": headers.problems,
        "native_complete": headers.native_complete,
    }


def _flat(lists: Iterable[list[str]]) -> set[str]:
    return set(itertools.chain.from_iterable(lists))


def _strings(value: object) -> bool:
    return isinstance(value, (tuple, list)) and all(type(x) is str for x in value)


def _from_plain(value: object, sources: Sources, index: NativeIndex) -> HeaderIndex | None:
    """The HeaderIndex `_plain` stored; None when `value` is not of that shape."""
    if not isinstance(value, dict) or set(value) != _PLAIN_KEYS:
        return None
    headers = HeaderIndex(sources)
    for item in value["helpers"]:
        if not (isinstance(item, tuple) and len(item) == 6 and type(item[0]) is str and type(item[1]) is str):
            return None
        name, text, parameters, parameter_texts, line, path = item
        if not (_strings(parameters) and _strings(parameter_texts) and type(line) is int and type(path) is str):
            return None
        headers.helpers.setdefault(name, []).append(Declaration(name, text, parameters, parameter_texts, line, path))
    for key in ("tensor_members", "base_members"):
        table: dict[str, list[Member]] = {}
        for name, found in value[key].items():
            for item in found:
                if not (isinstance(item, tuple) and len(item) == 7 and _strings(item[2]) and _strings(item[3])):
                    return None
                if not (_strings((name, item[0], item[1], item[6])) and type(item[4]) is int and type(item[5]) is bool):
                    return None
                table.setdefault(name, []).append(Member(*item))
        setattr(headers, key, table)
    for key in ("at_functions", "method_schemas"):
        names = value[key]
        if not (isinstance(names, dict) and all(type(n) is str for n in names)):
            return None
        if not (all(type(v) is list for v in names.values()) and index.by_schema.keys() >= _flat(names.values())):
            return None  # (each schema a string of the index's: the key of one of its functions)
        setattr(headers, key, NameTable(index.by_schema, names))
    for key in ("tensor_methods", "using", "forward_namespaces", "tensor_using", "problems"):
        if not _strings(value[key]):
            return None
    headers.tensor_methods = set(value["tensor_methods"])
    headers.using = set(value["using"])
    headers.forward_namespaces = set(value["forward_namespaces"])
    headers.tensor_using = set(value["tensor_using"])
    headers.problems = tuple(value["problems"])
    if type(value["native_complete"]) is not bool:
        return None
    headers.native_complete = value["native_complete"]
    return headers


_PLAIN_KEYS = frozenset(
    "helpers tensor_methods at_functions method_schemas using forward_namespaces tensor_members base_members "
    "tensor_using problems native_complete".split()
)


def load_header_index(sources: Sources, index: NativeIndex | None) -> HeaderIndex:
    """build_header_index, read from the persistent cache when it was kept there (persist_with), else built
    (and kept)."""
    kept = _disk_key(sources, index)
    if kept is None or index is None:
        return build_header_index(sources, index)
    disk, key = kept
    try:
        found = _from_plain(disk.get(key), sources, index)
    except Exception:  # noqa: BLE001 - anything odd in what was read is a miss
        found = None
    if found is not None:
        return found
    headers = build_header_index(sources, index)
    disk.put(key, _plain(headers))
    return headers


_cache: dict[tuple[int, str | None, str | None, str | None], HeaderIndex] = {}


def header_index_for(
    index: NativeIndex | None, native_path: str | None, derivatives_path: str | None = None
) -> HeaderIndex:
    """The workspace's HeaderIndex, built once per (native index, paths) like the native index (and kept on
    disk with it: load_header_index)."""
    from derivls.derivatives.formulas.sources import TORCH_INCLUDE, find_sources

    key = (id(index), native_path, derivatives_path, os.environ.get(TORCH_INCLUDE))
    hit = _cache.get(key)
    if hit is None:
        if len(_cache) > 8:
            _cache.clear()
        hit = load_header_index(find_sources(derivatives_path, native_path), index)
        _cache[key] = hit
    return hit


__all__ = ["FORMAT", "persist_with", "load_header_index", "header_index_for"]
