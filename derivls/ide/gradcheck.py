"""What the editor offers for gradcheck, as plain data: a "Run gradcheck" lens above each entry that
has a formula the check can run, and the entry a command given a line runs on.

Gradcheck compiles the entry's C++ and runs it: in a workspace the user has not trusted, the lens only says
so (`runs` False) and the command refuses (UNTRUSTED)."""

from __future__ import annotations

from dataclasses import dataclass

from derivls.derivatives.loader import DocumentAnalysis, PlacedEntry
from derivls.ide import facts
from derivls.ide.targets import entry_at

RUN_GRADCHECK = "derivls.runGradcheck"
TITLE = "Run gradcheck"
UNTRUSTED_TITLE = "Gradcheck needs a trusted workspace (it compiles and runs the entry's C++)"
UNTRUSTED = (
    "gradcheck compiles and runs the entry's C++: it runs only in a trusted workspace "
    "(VS Code: trust the folder; other editors: trustedWorkspace: true in the server's initializationOptions)"
)


@dataclass(frozen=True)
class GradcheckLens:
    line: int  # 0-based `- name:` line
    title: str
    runs: bool = True  # False: the lens only says why it cannot run (an untrusted workspace)


def entry_lens(placed: PlacedEntry, trusted: bool = True) -> GradcheckLens | None:
    if placed.entry.name is None or placed.result.canonical is None:
        return None
    if not facts.node_names(placed) and not any(info.forward_derivatives for _, info in placed.infos()):
        return None
    return GradcheckLens(placed.line, TITLE) if trusted else GradcheckLens(placed.line, UNTRUSTED_TITLE, False)


def code_lenses(analysis: DocumentAnalysis, trusted: bool = True) -> list[GradcheckLens]:
    return [lens for placed in analysis.entries if (lens := entry_lens(placed, trusted)) is not None]


def verdict_title(verdict: str) -> str:
    """The lens of an entry gradcheck has judged as it is now: the verdict, and how to run it again."""
    return f"Gradcheck {verdict} · run again"


def entry_line(analysis: DocumentAnalysis, line: int) -> int | None:
    """The `- name:` line of the entry holding `line` (the command's target), None outside entries."""
    placed = entry_at(analysis, line)
    return placed.line if placed is not None and entry_lens(placed) is not None else None


__all__ = [
    "RUN_GRADCHECK",
    "TITLE",
    "UNTRUSTED",
    "UNTRUSTED_TITLE",
    "GradcheckLens",
    "code_lenses",
    "entry_lens",
    "entry_line",
    "verdict_title",
]
