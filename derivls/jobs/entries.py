"""What identifies an entry for a background job, and its results kept by it (spans relative to the entry's line)."""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from derivls.base.diagnostics import Diagnostic


def entry_key(placed: Any) -> str:
    """What identifies an entry's compiled code: a change to it means the entry must be compiled again."""
    # The parsed entry (spans relative to its own first line, so moving it changes nothing) and
    # its node names: a change to either changes what the compiler sees.
    return repr(placed.result.entry) + repr(placed.ops)


def placed_diagnostics(stored: Mapping[str, list[Diagnostic]], analysis: Any) -> list[Diagnostic]:
    """Diagnostics kept per entry (by entry_key, spans relative to the entry's first line), at each
    unchanged entry's place in `analysis` now: what a background check found stays on the entries it checked."""
    out: list[Diagnostic] = []
    for placed in analysis.entries:
        relative = stored.get(entry_key(placed))
        if relative:
            out.extend(d.shifted(placed.line) for d in relative)  # (its fixes' edits too)
    return out
