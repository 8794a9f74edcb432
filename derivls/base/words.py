"""How derivls words a count."""

from __future__ import annotations


def plural(n: int, noun: str, nouns: str | None = None) -> str:
    """`1 error`, `2 errors`, `1 batch`, `2 batches`: every count derivls prints."""
    return f"{n} {noun if n == 1 else nouns or noun + 's'}"


__all__ = ["plural"]
