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
- `foreign_directives(text)`: the last look at a whole generated translation unit: a directive line that
  derivls's templates never write (an absolute or `..` include, a digraph or trigraph form) refuses it.
"""

from __future__ import annotations

import re

from derivls.derivatives.formulas.directives import DIRECTIVE_WORDS, Hazard, hazards, hazards_in
from derivls.derivatives.formulas.tokens import tokenize

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


_DIRECTIVE_LINE = re.compile(r"^[ \t]*(?:#|%:|\?\?=)(.*)$", re.M)
_OWN_INCLUDE = re.compile(r'[ \t]*include[ \t]+(?:"[\w./+-]+"|<[\w./+-]+>)[ \t]*$')


def foreign_directives(text: str) -> list[str]:
    """Directive lines of a generated translation unit that derivls's templates never write."""
    out = []
    for m in _DIRECTIVE_LINE.finditer(text):
        line = m.group(0).strip()
        if not line.startswith("#"):
            out.append(line)  # a digraph or trigraph form: never derivls's
            continue
        rest = m.group(1)
        if rest.lstrip().startswith("include") and (
            not _OWN_INCLUDE.fullmatch(rest) or ".." in rest or re.search(r'["<]/', rest)
        ):
            out.append(line)
        elif rest.lstrip().startswith(("embed", "line")):
            out.append(line)
    return out


__all__ = ["DIRECTIVE_WORDS", "Hazard", "flatten", "foreign_directives", "hazards", "hazards_in"]
