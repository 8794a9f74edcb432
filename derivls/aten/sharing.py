"""Equal strings of a NativeIndex made one object while it is built (pickle keeps the sharing).

The index's strings are slices of native_functions.yaml and the printed forms its objects cache
(`_str`): `Tensor` as an overload name, `ExactSame`, `Tensor self, Tensor other` as an argument
list, a kernel name in two dispatch tables, a signature's printed schema equal to its function's.
Each was its own object: on the 10x scaled file 150,000 duplicates, 12 MB of a loaded index's
~110 MB. Inside `sharing()` (NativeIndex.from_text) the places that make them pass them through
`shared()`, a dict look-up each (~20 ms on the 10x file); outside, `shared` returns its argument.
The dict is dropped at the end: nothing stays interned for the life of the process.
"""

from __future__ import annotations

import contextlib
from _thread import _local  # threading.local itself, without importing threading (the CLI's start-up)
from collections.abc import Iterator


class _State(_local):
    memo: dict[str, str] | None = None  # per thread: the server builds indexes in a worker thread


_state = _State()


def shared(s: str) -> str:
    """The string equal to `s` seen first inside this thread's current `sharing()` block (else `s`)."""
    memo = _state.memo
    return s if memo is None else memo.setdefault(s, s)


def shared_or_none(s: str | None) -> str | None:
    """`shared(s)` for a string; anything else as it is."""
    return shared(s) if s.__class__ is str else s


@contextlib.contextmanager
def sharing() -> Iterator[None]:
    """Equal strings made inside share one object (nested blocks share the outer one's)."""
    outer = _state.memo
    if outer is None:
        _state.memo = {}
    try:
        yield
    finally:
        _state.memo = outer


__all__ = ["shared", "shared_or_none", "sharing"]
