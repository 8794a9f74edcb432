"""Big answers (document symbols, code lenses of the whole file) as pre-serialized JSON, per entry.

pygls turns every answer into JSON through cattrs: for the ~2,000 symbols of the real file that is
~50 ms per request, on the event loop, while the user types. Instead, each entry's part is
serialized once and kept for as long as the core keeps the entry's `PlacedEntry` (it does so for an
unchanged entry at an unchanged place); an answer is the join of those parts.
"""

from __future__ import annotations

import json
from collections.abc import Callable, Iterable
from typing import Any

from pygls.protocol import default_converter

_converter = default_converter()


class RawJSON:
    """A result that is already JSON text (ASCII only); DerivlsProtocol writes it as it is."""

    __slots__ = ("text",)

    def __init__(self, text: str) -> None:
        self.text = text

    def __repr__(self) -> str:
        return f"RawJSON({self.text[:60]!r}…)"


def dumps(value: Any) -> str:
    """JSON of an lsprotocol value (or a list of them), as pygls would write it."""
    return json.dumps(_converter.unstructure(value), separators=(",", ":"))


class FragmentCache:
    """Per-entry JSON fragments of one kind of answer for one document, keyed by the entry object."""

    def __init__(self) -> None:
        self._fragments: dict[int, tuple[object, tuple[Any, ...], str]] = {}

    def join(self, entries: Iterable[Any], context: tuple[Any, ...], make: Callable[[Any], list[Any]]) -> RawJSON:
        """`[...]` of every entry's items; `make(entry)` builds them when the entry (or `context`) is new."""
        fresh: dict[int, tuple[object, tuple[Any, ...], str]] = {}
        parts: list[str] = []
        for entry in entries:
            hit = self._fragments.get(id(entry))
            if hit is None or hit[0] is not entry or hit[1] != context:
                items = make(entry)
                text = dumps(items)[1:-1] if items else ""
                hit = (entry, context, text)
            fresh[id(entry)] = hit
            if hit[2]:
                parts.append(hit[2])
        self._fragments = fresh
        return RawJSON("[" + ",".join(parts) + "]")


__all__ = ["FragmentCache", "RawJSON", "dumps"]
