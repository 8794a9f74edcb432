"""native_functions.yaml's entries, scanned line by line into Python values."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from derivls.yamlsubset.scalars import Unsupported, fast_value, flow_value

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any


@dataclass(slots=True)
class ScannedEntry:
    """One `- func: ...` item: its mapping plus where things are."""

    data: dict[str, Any]
    line: int  # 1-based line of the first key
    key_lines: dict[str, int]
    func_key_col: int | None = None
    func_col: int | None = None
    # keys written twice in the entry or one of its mappings (torchgen's YAML loader rejects them): (key, line)
    duplicate_keys: list[tuple[str, int]] = field(default_factory=list)


# `[- ]key: value` / `[- ]key:` lines; keys as native_functions.yaml writes them (dispatch
# keys may be comma-separated lists)
_KV_LINE_RE = re.compile(r"( *)(- +)?([A-Za-z_][A-Za-z0-9_]*(?:, *[A-Za-z_][A-Za-z0-9_]*)*):(?:( +)(.*))?")


def scan_native_entries(text: str) -> list[ScannedEntry]:
    """Read native_functions.yaml's YAML subset line by line; raises Unsupported otherwise."""
    if "\t" in text or text.startswith("\ufeff") or "\r" in text:
        raise Unsupported
    entries: list[ScannedEntry] = []
    cur: ScannedEntry | None = None
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
                    raise Unsupported  # mappings inside nested sequences
                key_indent = len(dash)
                cur = ScannedEntry({}, ln, {})  # data, line, key_lines
                entries.append(cur)
                indent = key_indent
            elif cur is None:
                raise Unsupported
            if raw is None or raw == "" or raw[0] == "#":
                raw_value = None
            else:
                raw_value = raw
            if indent == key_indent:
                if key in cur.data:  # the first one counts; the second is reported
                    if raw_value is None:
                        raise Unsupported  # a second nested block: PyYAML reads it (and records it)
                    cur.duplicate_keys.append((key, ln))
                    block_key, block, block_indent = None, None, -1
                    continue
                cur.key_lines[key] = ln
                if raw_value is None:
                    cur.data[key] = None  # maybe a nested block follows
                    block_key, block, block_indent = key, None, -1
                else:
                    cur.data[key] = fast_value(raw_value)
                    if key == "func":
                        cur.func_key_col = indent
                        cur.func_col = indent + len(key) + 1 + len(sep)
                    block_key, block, block_indent = None, None, -1
                continue
            # a `key: value` line of a nested mapping
            if block_key is None or indent < key_indent or raw_value is None:
                raise Unsupported
            if block is None:
                block_indent = indent
                block = cur.data[block_key] = {}
            if indent != block_indent or not isinstance(block, dict):
                raise Unsupported
            if key in block:
                cur.duplicate_keys.append((key, ln))
                continue
            block[key] = fast_value(raw_value)
            continue
        stripped = line.lstrip(" ")
        if not stripped or stripped[0] == "#":
            continue
        # a `- item` of a nested sequence (at the keys' indent or deeper)
        indent = len(line) - len(stripped)
        if cur is None or block_key is None or indent < key_indent or not stripped.startswith("- "):
            raise Unsupported
        if block is None:
            block_indent = indent
            block = cur.data[block_key] = []
        if indent != block_indent or not isinstance(block, list):
            raise Unsupported
        item = stripped[2:].lstrip(" ")
        if _KV_LINE_RE.fullmatch(item) is not None or item.startswith("- "):
            raise Unsupported  # mappings / sequences inside sequences
        block.append(flow_value(item))
    return entries
