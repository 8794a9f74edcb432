"""What of a formula's text may reach a compiler: one rule for `check --compile`, compile-on-save and gradcheck.

torchgen pastes a formula's text verbatim into the generated C++. A formula with a line break (a YAML block
scalar, a quoted `\\n`, an empty line inside a plain scalar) can then put a preprocessor directive at the
start of a line: `%:include "/dev/zero"` (the digraph of `#include`), `#include "/etc/passwd"`. derivls
compiles what it generates, so before a unit is rendered:

- `flatten(formula)`: every line break becomes a space, and a `//` comment (which a line break would have
  ended) becomes spaces too; the length is kept, so positions map back unchanged. A formula is one C++
  expression: nothing in it needs a line of its own.
- `hazards(formula)`: what is refused outright, outside string and character literals: `#` (and the
  digraph `%:`, the trigraph `??=`; no formula needs them), `_Pragma` / `__pragma` (a directive in
  operator form) and `asm` (the assembler's `.include` / `.incbin` read files). A unit with one is not
  compiled; `formula-context` reports it on its token.
- `refusals(text, roots)` / `checked_source`: the one gate for whatever holds workspace text and reaches g++ or
  Cling: the generated units (torchgen's Functions.cpp template, beside the yaml, is pasted in them), the
  precompiled header (the templates' includes), the JIT source. Only `#include` of a file inside torch's
  include folder (or derivls's own header), `#pragma once` and `#ifdef NAME` / `#else` / `#endif` pass; no
  other directive, `_Pragma`, `asm`.
"""

from __future__ import annotations

import bisect
import itertools
import os
import re
from collections.abc import Iterable, Sequence
from pathlib import Path

from derivls.compile.file_templates import PCH_NAME
from derivls.compile.toolchain import SetupError
from derivls.derivatives.formulas.directives import DIRECTIVE_WORDS, Hazard, hazards, hazards_in
from derivls.derivatives.formulas.tokens import Token, tokenize

_COMMENT = re.compile(r"//[^\n\r]*")


def flatten(formula: str) -> str:
    """`formula` on one line, of the same length: `//` comments and line breaks become spaces."""
    if "\n" not in formula and "\r" not in formula:
        return formula
    tokens, _ = tokenize(formula)
    literals = [(t.start, t.end) for t in tokens if t.kind in ("string", "char")]
    chars = list(formula)
    for m in _COMMENT.finditer(formula):
        if not any(a <= m.start() < b for a, b in literals):
            chars[m.start() : m.end()] = " " * (m.end() - m.start())
    return "".join(" " if c in "\r\n" else c for c in chars)


_NAME = re.compile(r"[\w+-][\w./+-]*")
_LINE_BREAK = re.compile(r"[\n\r]")


class RefusedSource(SetupError):
    """Text derivls will not hand to a compiler (refusals): one line."""


def refusals(text: str, roots: Sequence[Path], own: Iterable[str] = ()) -> list[str]:
    """What in `text` may not reach a compiler, each as `line N: what` (never the line's text, a header's name
    included: the message quotes nothing of the workspace's).

    `text` is anything a compiler or Cling gets that holds workspace text: a generated unit (torchgen's
    Functions.cpp template pasted in it), the precompiled header (the templates' includes), a JIT source.
    Allowed: `#include` of a plain relative name that is one of `own` (derivls's precompiled header), a regular
    file inside one of `roots` (torch's include folders, symlinks resolved) or a name they do not hold (the
    compiler's own headers; header_refusals has the same rule), `#pragma once`, and the
    conditionals derivls's codegen writes (`#ifdef NAME`, `#ifndef NAME`, `#else`, `#endif`: they choose text,
    all of it checked). Refused: every other directive (`#import`, `#include_next`, `#embed`, `#line`,
    `#define`, `#if` (`__has_include` probes files), ...), a
    directive in digraph or trigraph form, `_Pragma`, `__pragma`, `asm` / `__asm` / `__asm__`, a backslash
    outside a literal (a line splice), a trigraph, an unterminated literal or comment, and a line starting with
    `import` or `module` (a C++20 header unit). Literals and comments are read as the compiler reads them
    (derivatives/formulas/tokens.py: raw strings, digraphs), so none hides text from this check."""
    tokens, problems = tokenize(text)
    breaks = [m.start() for m in _LINE_BREAK.finditer(text)]

    def line(offset: int) -> int:
        return bisect.bisect_right(breaks, offset - 1) + 1

    def starts_line(k: int) -> bool:
        return k == 0 or bisect.bisect_left(breaks, tokens[k - 1].end) < bisect.bisect_left(breaks, tokens[k].start)

    found = [(p.start, "an unterminated literal or comment") for p in problems if p.code == "unterminated-literal"]
    index = {t.start: k for k, t in enumerate(tokens)}
    for h in hazards_in(text, tokens):
        k = index.get(h.start)
        if h.text == "#" and k is not None and starts_line(k):
            end = bisect.bisect_left(breaks, tokens[k].end)
            eol = breaks[end] if end < len(breaks) else len(text)
            words = []
            for t in itertools.islice(tokens, k + 1, None):
                if t.start >= eol:
                    break
                words.append(t)
            why = _directive_refusal(text, words, roots, frozenset(own))
            if why is not None:
                found.append((h.start, why))
            continue
        found.append((h.start, h.message))
    for k, t in enumerate(tokens):
        if t.kind == "ident" and t.text in ("import", "module") and starts_line(k):
            found.append((t.start, f"'{t.text}' at the start of a line (a C++20 module or header unit)"))
    return [f"line {line(at)}: {why}" for at, why in sorted(found)]


def _directive_refusal(text: str, words: list[Token], roots: Sequence[Path], own: frozenset[str]) -> str | None:
    """Why the directive made of `words` (the tokens after its `#`, on its line) is refused; None: allowed."""
    if not words or words[0].kind != "ident":
        return "a '#' that is no directive derivls writes"
    name = words[0].text
    if name == "pragma" and [w.text for w in words[1:]] == ["once"]:
        return None
    if name in ("ifdef", "ifndef") and len(words) == 2 and words[1].kind == "ident":
        return None  # (derivls's codegen writes `#ifdef _WIN32`, `#ifdef C10_MOBILE`: a name, no expression)
    if name in ("else", "endif") and len(words) == 1:
        return None
    if name != "include":
        return f"'#{name}': a directive derivls never writes"
    rest = words[1:]
    if len(rest) == 1 and rest[0].kind == "string" and rest[0].text.startswith('"'):
        header = rest[0].text[1:-1]
    elif len(rest) >= 2 and rest[0].text == "<" and rest[-1].text == ">":
        header = text[rest[0].end : rest[-1].start]
    else:
        return "an '#include' of something other than a plain header name"
    if _NAME.fullmatch(header) is None or ".." in header.split("/"):
        return "an '#include' of a name outside torch's include folder (absolute, '..' or unusual characters)"
    if header in own or _inside(header, roots):
        return None
    return "an '#include' of a file outside torch's include folder (a link out of it)"


def _inside(header: str, roots: Sequence[Path]) -> bool:
    """The first root that has `header` (the compiler's search order) holds it as a regular file, symlinks
    resolved inside the roots; or no root has it (a header of the compiler's own, `<vector>`, or none: the
    compiler says so. A plain relative name then finds only the system's headers or derivls's own folder's)."""
    real = _resolve(header, [str(r) for r in roots])
    return real is None or _within(real, _bases(roots))


def _resolve(name: str, folders: Sequence[str]) -> str | None:
    """The real path of `name` in the first of `folders` that has it (as the compiler searches), None: none."""
    candidate = next((c for d in folders if os.path.lexists(c := os.path.join(d, name))), None)
    return os.path.realpath(candidate) if candidate is not None else None


def _bases(roots: Sequence[Path]) -> list[str]:
    return [os.path.realpath(r) + os.sep for r in roots]


def _within(real: str, bases: Sequence[str]) -> bool:
    return any(real.startswith(b) for b in bases) and os.path.isfile(real)


# in a header: a directive that reads a file or renames one (at a line's start, or after a comment ends)
_HEADER_DIRECTIVE = re.compile(
    r"(?:^|\*/)[ \t\f\v]*(?:/\*.*?\*/[ \t\f\v]*)*(?:#|%:|\?\?=)[ \t\f\v]*(?:/\*.*?\*/[ \t\f\v]*)*"
    r"(include_next|include|import|embed|line)\b([^\n]*)",
    re.M | re.S,
)
_OPERAND = re.compile(r'[ \t]*(?:"([^"\n]*)"|<([^>\n]*)>)')
MAX_HEADERS = 20_000  # the wheel's 2.13 headers reached from the precompiled header: 4,612 files, 14 MB
MAX_HEADER_BYTES = 256 * 2**20


def header_refusals(header: str, roots: Sequence[Path]) -> list[str]:
    """The headers `header` reaches inside torch's include folders (`roots`: a checkout's `torch/include` beside
    the file is the workspace's), each read once: an `#include` in them must name a plain relative path that is
    a file inside those folders, symlinks resolved, or a header they do not hold (the compiler's own); and none
    may hold `#import`, `#include_next`, `#embed` or `#line`. Each refusal as `PATH line N: what` (PATH inside
    the folders; never the line's text). A directive-like line in a comment or literal counts too."""
    bases = _bases(roots)
    found: list[str] = []
    seen: set[str] = set()
    resolved: dict[tuple[str, str], str | None] = {}  # (the includer's folder or "", name) -> its real path
    budget = MAX_HEADER_BYTES
    todo: list[tuple[str, str, str, int, str]] = [(*m, "") for m in _directives(header)]
    while todo:
        kind, operand, text, at, includer = todo.pop()
        o = _OPERAND.match(operand)
        name = (o.group(1) if o.group(1) is not None else o.group(2)) if o is not None else None
        if kind != "include" or name is None or _NAME.fullmatch(name) is None or ".." in name.split("/"):
            why = f"'#{kind}' of something other than a plain name inside torch's include folder"
            found.append(f"{_where(includer, bases, text, at)}: {why}")
            continue
        here = os.path.dirname(includer) if includer and o is not None and o.group(1) is not None else ""
        if (here, name) not in resolved:
            resolved[here, name] = _resolve(name, ([here] if here else []) + [str(r) for r in roots])
        real = resolved[here, name]
        if real is None or real in seen:
            continue  # (not in torch's folders: a header of the compiler's own, `<vector>`; or read already)
        if not _within(real, bases):
            why = "an '#include' of a file outside torch's include folder (a link out of it)"
            found.append(f"{_where(includer, bases, text, at)}: {why}")
            continue
        seen.add(real)
        if len(seen) > MAX_HEADERS or budget <= 0:
            found.append(f"more than {MAX_HEADERS} headers or {MAX_HEADER_BYTES >> 20} MB reached: not read further")
            break
        try:
            with open(real, "rb") as f:
                content = f.read(budget).decode("utf-8", "replace")
        except OSError:
            continue  # (the compiler will say it cannot read it)
        budget -= len(content)
        todo.extend((*m, real) for m in _directives(content))
    return found


def _directives(text: str) -> list[tuple[str, str, str, int]]:
    """(kind, rest of its line, the text read, offset) of each include-like directive of a header's text, line
    splices joined and CR / CRLF read as line breaks (as the compiler reads them)."""
    if "#" not in text and "%:" not in text and "??=" not in text:
        return []
    text = text.replace("\r\n", "\n").replace("\r", "\n")
    if "\\" in text:
        text = re.sub(r"\\[ \t]*\n", "", text)  # (line numbers then count joined lines as one: close enough)
    return [(m.group(1), m.group(2), text, m.start(1)) for m in _HEADER_DIRECTIVE.finditer(text)]


def _where(path: str, bases: list[str], text: str, at: int) -> str:
    """`PATH line N` of a header (PATH inside torch's folders), `line N` of the precompiled header."""
    line = text.count("\n", 0, at) + 1
    if not path:
        return f"line {line}"
    return f"{next((path[len(b) :] for b in bases if path.startswith(b)), os.path.basename(path))} line {line}"


GENERATED = "the generated code (torchgen's templates/Functions.cpp beside the file is pasted in it)"
HEADER = "the precompiled header (the includes of templates/Functions.cpp and VariableType.cpp beside the file)"


def checked_source(text: str, roots: Sequence[Path], what: str = GENERATED, own: Iterable[str] = (PCH_NAME,)) -> str:
    """`text` when refusals finds nothing in it, else RefusedSource naming `what` and the first refusal."""
    _refuse(what, refusals(text, roots, own))
    return text


def checked_headers(header: str, roots: Sequence[Path]) -> None:
    """RefusedSource when header_refusals finds something in what the precompiled header `header` reaches."""
    _refuse("torch's headers", header_refusals(header, roots))


def _refuse(what: str, refused: list[str]) -> None:
    if refused:
        more = f" (and {len(refused) - 1} more)" if len(refused) > 1 else ""
        raise RefusedSource(f"derivls will not compile {what}: {refused[0]}{more}")


__all__ = [
    "DIRECTIVE_WORDS",
    "Hazard",
    "RefusedSource",
    "checked_headers",
    "checked_source",
    "flatten",
    "header_refusals",
    "hazards",
    "hazards_in",
    "refusals",
]
