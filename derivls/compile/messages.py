"""A compiler's text output (gcc or clang) -> errors with their notes and the places they name."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

_LOCATED = re.compile(
    r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+): (?P<kind>fatal error|error|warning|note): (?P<text>.*)$"
)
_CONTEXT = re.compile(r"^(?P<path>.+?):(?P<line>\d+):(?P<column>\d+):\s+(?P<text>(?:required|in ).*)$")
_NO_LOCATION = re.compile(r"^(?P<path>[^:\s][^:]*): (?P<text>In (?:function|member function|instantiation|static).*)$")


@dataclass(frozen=True)
class Place:
    path: str
    line: int  # 1-based
    column: int  # 1-based byte column
    text: str


@dataclass
class CompilerError:
    message: str
    place: Place
    context: list[Place] = field(default_factory=list)  # "required from here", "In instantiation of" lines
    notes: list[Place] = field(default_factory=list)

    def places(self) -> list[Place]:
        """Where to look for the user's code: the error, the innermost context, then the notes."""
        return [self.place, *reversed(self.context), *self.notes]


def parse(output: str) -> list[CompilerError]:
    errors: list[CompilerError] = []
    pending: list[Place] = []
    current: CompilerError | None = None
    for line in output.splitlines():
        m = _LOCATED.match(line)
        if m:
            place = Place(m["path"], int(m["line"]), int(m["column"]), m["text"])
            kind = m["kind"]
            if kind in ("error", "fatal error"):
                current = CompilerError(m["text"], place, pending)
                errors.append(current)
                pending = []
            elif kind == "note" and current is not None:
                current.notes.append(place)
            continue
        m = _CONTEXT.match(line)
        if m:
            pending.append(Place(m["path"], int(m["line"]), int(m["column"]), m["text"].strip()))
            continue
        if line.startswith("In file included from") or line.startswith("                 from"):
            continue
        m = _NO_LOCATION.match(line)
        if m:
            pending = []  # a new function or instantiation context starts
    return errors
