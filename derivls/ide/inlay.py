"""Inlay hints: the node name(s) after `name:`, and what each backward formula makes the node save."""

from __future__ import annotations

from dataclasses import dataclass

from derivls.derivatives.loader import DocumentAnalysis
from derivls.ide import facts

MAX_SAVED_SHOWN = 6


@dataclass(frozen=True)
class InlayHint:
    """A label shown after (line, column) (0-based code points)."""

    line: int
    column: int
    label: str
    tooltip: str


def inlay_hints(analysis: DocumentAnalysis, first: int, last: int) -> list[InlayHint]:
    """The hints of lines first..last (inclusive), in document order."""
    first = max(first, 0)
    entries = analysis.entries
    i = analysis.entries_from(first)
    hints: list[InlayHint] = []
    for placed in entries[i:]:
        if placed.line > last:
            break
        if placed.end_line < first:
            continue
        name = placed.entry.name
        ops = facts.node_names(placed)
        if name is not None and ops:
            span = name.span.shifted(placed.start_line)
            if first <= span.end_line <= last:
                hints.append(
                    InlayHint(
                        span.end_line,
                        span.end_column,
                        ", ".join(ops),
                        "the autograd node torchgen generates for this entry",
                    )
                )
        for section in placed.result.sections:
            for kr in section.keys:
                saves = facts.derivative_saves(kr)
                if not saves:
                    continue
                span = kr.item.value.span.shifted(placed.start_line)
                if not first <= span.end_line <= last:
                    continue
                labels = [facts.saved_label(s) for s in saves]
                label = ", ".join(labels[:MAX_SAVED_SHOWN])
                if len(labels) > MAX_SAVED_SHOWN:
                    label += f", +{len(labels) - MAX_SAVED_SHOWN}"
                hints.append(InlayHint(span.end_line, span.end_column, "saves " + label, "\n".join(labels)))
    return hints


__all__ = ["MAX_SAVED_SHOWN", "InlayHint", "inlay_hints"]
