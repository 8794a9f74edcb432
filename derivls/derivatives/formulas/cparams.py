"""Pieces of C++ declarations as written in a header: parameter lists split at their top-level commas, and a
parameter's type, name and default (shared by FunctionsManual.h's helpers and at::Tensor's members)."""

from __future__ import annotations

import re

_BRACKET_OR_SEP = {sep: re.compile("[(<\\[{)>\\]}" + re.escape(sep) + "]") for sep in ",="}


def split_top(text: str, sep: str = ",") -> list[str]:
    """`text` split at the `sep` outside brackets (`()`, `<>`, `[]`, `{}`), parts stripped, empty ones left out."""
    parts, depth, start = [], 0, 0
    # from bracket to bracket (a regex scan, not a Python loop over every character)
    for m in _BRACKET_OR_SEP[sep].finditer(text):
        c = m.group()
        if c in "(<[{":
            depth += 1
        elif c in ")>]}":
            depth -= 1
        elif depth == 0:  # the separator
            i = m.start()
            parts.append(text[start:i])
            start = i + 1
    parts.append(text[start:])
    return [p.strip() for p in parts if p.strip()]


def has_default(param: str) -> bool:
    return "=" in param and len(split_top(param, "=")) > 1


def _head(param: str) -> str:
    return split_top(param, "=")[0] if "=" in param else param.strip()


def parameter_name(param: str) -> str:
    """`grad` of `const Tensor& grad = {}`; "" for an unnamed parameter (`const Tensor&`, `int64_t`)."""
    head = _head(param)
    m = re.search(r"(\w+)\s*(?:\[\s*\d*\s*\])?$", head)
    return m.group(1) if m and len(head.split()) > 1 or (m and head.endswith(("&", "*"))) else ""


def parameter_type(param: str) -> str:
    """`const Tensor&` of `const Tensor& grad = {}`."""
    head = _head(param)
    name = parameter_name(param)
    return head[: head.rfind(name)].rstrip() if name else head
