"""FunctionsManual.cpp as gradcheck needs it: its helpers, which of them formulas reach, which are edited, and
the C++ that defines the edited ones in an extension's translation unit.

- `parse_manual(text, path)`: every function *definition* of the file (at namespace scope; a struct's members and
  lambdas are not helpers), with its signature and body as written, its lines (0-based) and its namespace;
  file-local helpers (`static`, or inside an anonymous namespace) are kept too, since the public helpers call
  them. The namespace-scope `using` declarations and the `#include` lines come with it.
- `reached_helpers(manual, formulas)`: the helper names the formulas' text calls, and transitively the helpers
  those call (a call graph by identifiers: a name preceded by `.`, `->` or another namespace than the helpers'
  (`at::`, `std::`) is not a call of a helper; overloads are one node, by name).
- `edited_helpers(manual, base)`: the names whose definitions differ from the base text's. Two definitions are
  the same when their C++ tokens are (comments, whitespace and line breaks do not count; a string literal's
  text, a preprocessor line's text and the order of the tokens do). A name is edited when the multiset of its
  definitions' token texts differs from the base's (an overload added, removed, or any overload's signature or
  body changed); moving a definition within the file is not an edit. Without a base every helper is edited.
- `helpers_to_define(manual, reached, edited, declared)`: what an extension must define so the formulas call the
  edited code: each reached helper that is edited or calls (transitively) one that is (a caller of an edited
  helper must call the edited one, as the build's would), and the helpers those call that libtorch does not
  declare (file-local ones, and when `declared` is given, every name FunctionsManual.h does not declare).
- `manual_code(manual, names, ...)`: that C++. The definitions go into a namespace of their own inside
  `torch::autograd::generated::details` (`derivls_manual_<hash>`, unique per text: an extension or a JIT
  definition never defines a name twice); `ManualCode.origin(line)` maps each line of the text back to its
  FunctionsManual.cpp line (the compiler's errors in a helper go on the helper's own lines of that file: no
  `#line` directive, which the source gate, derivls.compile.safety, refuses). Every overload of a defined name is
  defined (a name brought into a scope hides every overload of the enclosing scope), declared first (in the
  header's words when FunctionsManual.h declares it: its default arguments), then defined without defaults.
  `ManualCode.usings()` is what goes inside each namespace holding formulas (the node's and the forward
  kernels'): a using-declaration per defined public name, which hides libtorch's helper of that name there,
  so a formula calls the edited one; a changed signature then gives the formula the compiler error the build
  gives.
"""

from __future__ import annotations

import bisect
import hashlib
import re
from collections.abc import Collection, Iterable, Mapping, Sequence
from pathlib import Path

from derivls.base.frozen import frozen_dataclass

# the namespace of FunctionsManual's helpers (FunctionsManual.h declares them there)
HELPERS_NAMESPACE = "torch::autograd::generated::details"
ANONYMOUS = "(anonymous)"  # an anonymous namespace's name in Helper.namespace

_TOKEN = re.compile(
    r"""
    (?P<comment>//[^\n]*|/\*.*?(?:\*/|\Z))
  | (?P<pp>^[ \t]*\#(?:[^\n\\]|\\.|\\\n)*)
  | (?P<raw>R"(?P<delim>[^()\\\s"]{0,16})\((?:.|\n)*?\)(?P=delim)")
  | (?P<string>(?:u8|[uUL])?"(?:\\.|[^"\\\n])*")
  | (?P<number>\.?\d(?:[\w.]|'(?=\w)|[eEpP][+-])*)
  | (?P<char>(?:u8|[uUL])?'(?:\\.|[^'\\\n])*')
  | (?P<ident>[A-Za-z_]\w*)
  | (?P<space>\s+)
  | (?P<punct>::|->|<<=|>>=|\.\.\.|[-+*/%&|^=!<>]=|&&|\|\||\+\+|--|<<|.)
    """,
    re.S | re.M | re.X,
)
_SKIPPED = frozenset({"comment", "space", "pp"})
_FUNCTION_KEYWORDS = frozenset(
    "if for while switch return sizeof decltype alignof static_assert catch throw new delete operator "
    "using typedef namespace".split()
)
_AGGREGATES = frozenset({"struct", "class", "union", "enum"})
_NESTING = {"<": 1, "[": 1, ">": -1, ">>": -2, "]": -1}  # (outside parentheses: template arguments, arrays)
_BRACKETS = {"(": 1, "[": 1, "{": 1, "<": 1, ")": -1, "]": -1, "}": -1, ">": -1, ">>": -2}


@frozen_dataclass
class Helper:
    """One function definition of FunctionsManual.cpp."""

    name: str
    signature: str  # as written, from its first token (`template`, `static`, the return type) to before `{`
    body: str  # as written, `{` to `}`
    start_line: int  # 0-based: the signature's first line
    end_line: int  # 0-based: the closing brace's line
    name_line: int  # 0-based: the name's line
    name_column: int  # 0-based
    namespace: str  # "torch::autograd::generated::details"; an anonymous namespace is ANONYMOUS
    file_local: bool  # `static`, or inside an anonymous namespace: libtorch has no symbol a formula can reach
    template: bool
    key: str  # the definition's tokens joined by one space (comments and whitespace do not count)
    calls: frozenset[str]  # the helper names its body calls (see the module's doc)
    body_line: int = 0  # 0-based: the line of the body's `{`

    @property
    def text(self) -> str:
        return f"{self.signature} {self.body}"


@frozen_dataclass
class ManualFile:
    """A FunctionsManual.cpp's helpers, in file order."""

    path: str
    helpers: tuple[Helper, ...]
    usings: tuple[str, ...]  # namespace-scope `using` declarations/directives of the helpers' namespace, as written
    includes: tuple[str, ...]  # the `#include` lines, as written
    using_lines: tuple[int, ...] = ()  # the 0-based line of each of `usings`

    @property
    def names(self) -> frozenset[str]:
        return frozenset(h.name for h in self.helpers)

    def by_name(self, name: str) -> tuple[Helper, ...]:
        """Every definition (overload) of `name`, in file order."""
        return tuple(h for h in self.helpers if h.name == name)

    def at_line(self, line: int) -> Helper | None:
        """The helper whose definition holds the 0-based `line`."""
        for h in self.helpers:
            if h.start_line <= line <= h.end_line:
                return h
        return None


@frozen_dataclass
class ManualCode:
    """The C++ that defines some helpers in a translation unit (see the module's doc)."""

    text: str  # goes at global scope, after the includes (the precompiled header) and before the formulas
    namespace: str  # the definitions' namespace, qualified
    names: tuple[str, ...]  # the names defined (sorted)
    public: tuple[str, ...]  # of those, the ones a formula may call (not file-local)
    origins: tuple[int | None, ...]  # per line of `text`: the 0-based FunctionsManual.cpp line it holds, or None

    def origin(self, line: int) -> int | None:
        """The FunctionsManual.cpp line (0-based) of the 0-based `line` of `text` (None: derivls's own line)."""
        return self.origins[line] if 0 <= line < len(self.origins) else None

    def usings(self) -> str:
        """What goes inside a namespace holding formulas: the formulas there call the defined helpers."""
        return "".join(f"using ::{self.namespace}::{name};\n" for name in self.public)


def tokens(text: str) -> list[tuple[str, str, int]]:
    """(kind, text, offset) of each C++ token of `text`: comments, whitespace and preprocessor lines left out."""
    return [(m.lastgroup or "", m.group(), m.start()) for m in _TOKEN.finditer(text) if m.lastgroup not in _SKIPPED]


def _key(toks: Iterable[tuple[str, str, int]]) -> str:
    return " ".join(t for _, t, _ in toks)


def _named_calls(toks: list[tuple[str, str, int]]) -> set[str]:
    """Identifiers of `toks` that may name a helper: not a member (`.x`, `->x`) and not qualified by a namespace
    other than the helpers' (`at::x`, `std::x`; `details::x`, `generated::x` and `::x` are kept)."""
    found = set()
    for i, (kind, text, _) in enumerate(toks):
        if kind != "ident":
            continue
        if i and toks[i - 1][1] in (".", "->"):
            continue
        if i >= 2 and toks[i - 1][1] == "::" and toks[i - 2][1] not in ("details", "generated", "autograd"):
            if toks[i - 2][0] == "ident":
                continue
        found.add(text)
    return found


def formula_names(formula: str) -> set[str]:
    """The identifiers of a formula that may name a helper (see `reached_helpers`)."""
    return _named_calls(tokens(formula))


class _Lines:
    def __init__(self, text: str) -> None:
        self.starts = [0] + [m.end() for m in re.finditer(r"\n", text)]

    def at(self, offset: int) -> tuple[int, int]:
        line = bisect.bisect_right(self.starts, offset) - 1
        return line, offset - self.starts[line]


def parse_manual(text: str, path: str = "FunctionsManual.cpp") -> ManualFile:
    """The helpers of a FunctionsManual.cpp text (see the module's doc). Never raises: text it does not
    understand (an unbalanced brace) ends the scan with what was found."""
    lines = _Lines(text)
    includes = tuple(m.group(0).strip() for m in re.finditer(r"(?m)^[ \t]*#[ \t]*include\b[^\n]*", text))
    toks = tokens(text)
    namespaces: list[str] = []  # the open namespaces ("" for a transparent block: extern "C")
    raw: list[tuple[str, int, int, int, int, bool, list[str]]] = []  # name, start, name index, open, close, ...
    usings: list[str] = []
    using_lines: list[int] = []
    i, n = 0, len(toks)
    stmt = 0  # the statement's first token
    while i < n:
        kind, tok, _ = toks[i]
        if tok == ";":
            if toks[stmt][1] == "using" and _in_helpers(namespaces):
                usings.append(text[toks[stmt][2] : toks[i][2] + 1])
                using_lines.append(lines.at(toks[stmt][2])[0])
            i += 1
            stmt = i
            continue
        if tok == "}":  # a namespace (or extern "C") closes
            if namespaces:
                namespaces.pop()
            i += 1
            stmt = i
            continue
        if tok != "{":
            i += 1
            continue
        head = toks[stmt:i]
        words = [t for _, t, _ in head]
        if words and words[0] == "namespace" or words[:2] == ["inline", "namespace"]:
            names = [t for k, t, _ in head if k == "ident" and t not in ("namespace", "inline")]
            namespaces.append("::".join(names) if names else ANONYMOUS)
            i += 1
            stmt = i
            continue
        if words[:1] == ["extern"] and len(words) == 2 and head[1][0] == "string":
            namespaces.append("")
            i += 1
            stmt = i
            continue
        close = _matching(toks, i)
        if close is None:
            break
        found = _function_name(head)
        if found is None:  # a struct, an initializer, a lambda: its braces are skipped, the statement goes on
            i = close + 1
            continue
        name_index = stmt + found
        file_local = "static" in words[:found] or any(ns == ANONYMOUS for ns in namespaces)
        raw.append((toks[name_index][1], stmt, name_index, i, close, file_local, list(namespaces)))
        i = close + 1
        stmt = i
        if i < n and toks[i][1] == ";":  # (a stray `;` after a body)
            i += 1
            stmt = i
    defined = {r[0] for r in raw}
    helpers = []
    for name, start, name_index, open_, close, file_local, spaces in raw:
        first, brace, end = toks[start][2], toks[open_][2], toks[close][2] + 1
        body_toks = toks[open_ : close + 1]
        name_line, name_column = lines.at(toks[name_index][2])
        helpers.append(
            Helper(
                name=name,
                signature=text[first:brace].rstrip(),
                body=text[brace:end],
                start_line=lines.at(first)[0],
                end_line=lines.at(end - 1)[0],
                name_line=name_line,
                name_column=name_column,
                namespace="::".join(s for s in spaces if s),
                file_local=file_local,
                template=toks[start][1] == "template",
                key=_key(toks[start : close + 1]),
                calls=frozenset(_named_calls(body_toks) & defined),
                body_line=lines.at(brace)[0],
            )
        )
    return ManualFile(path, tuple(helpers), tuple(usings), includes, tuple(using_lines))


def _in_helpers(namespaces: list[str]) -> bool:
    return "::".join(s for s in namespaces if s) == HELPERS_NAMESPACE


def _matching(toks: list[tuple[str, str, int]], open_: int) -> int | None:
    depth = 0
    for j in range(open_, len(toks)):
        t = toks[j][1]
        if t == "{":
            depth += 1
        elif t == "}":
            depth -= 1
            if depth == 0:
                return j
    return None


def _function_name(head: list[tuple[str, str, int]]) -> int | None:
    """The index in `head` (a namespace-scope statement up to a `{`) of a function definition's name, or None:
    the name is the identifier before the first top-level `(`, with a return type before it, no `=` at top
    level before it, and only qualifiers (const, noexcept, `-> T`) after the matching `)`."""
    if not head:
        return None
    words = [t for _, t, _ in head]
    start = 0
    if words[0] == "template":  # template <...>: skip the parameter list
        depth = 0
        for j, w in enumerate(words):
            depth += {"<": 1, ">": -1, ">>": -2}.get(w, 0)
            if j and depth <= 0:
                start = j + 1
                break
        else:
            return None
    if any(w in _AGGREGATES for w in words[start : start + 2]):
        return None
    depth = 0
    for j in range(start, len(words)):
        w = words[j]
        if w == "=" and depth == 0:
            return None
        if w == "(":
            if j == start or head[j - 1][0] != "ident" or words[j - 1] in _FUNCTION_KEYWORDS:
                return None
            if j - 1 == start:  # no return type: a macro's use or a constructor
                return None
            if j >= 2 and words[j - 2] == "operator":
                return None
            return j - 1 if _after_parameters_ok(words, j) else None
        depth += _NESTING.get(w, 0)
    return None


def _after_parameters_ok(words: list[str], open_: int) -> bool:
    depth = 0
    for j in range(open_, len(words)):
        depth += {"(": 1, ")": -1}.get(words[j], 0)
        if depth == 0:
            rest = words[j + 1 :]
            return "=" not in rest and "(" not in rest[:1]
    return False


def reached_helpers(manual: ManualFile, formulas: Iterable[str]) -> frozenset[str]:
    """The helper names the formulas call, and transitively the helpers those call."""
    names = manual.names
    start: set[str] = set()
    for formula in formulas:
        start |= formula_names(formula) & names
    return _closure(manual, start)


def _closure(manual: ManualFile, start: Iterable[str]) -> frozenset[str]:
    calls = _graph(manual)
    seen = set(start)
    todo = list(seen)
    while todo:
        for callee in calls.get(todo.pop(), ()):
            if callee not in seen:
                seen.add(callee)
                todo.append(callee)
    return frozenset(seen)


def _graph(manual: ManualFile) -> dict[str, set[str]]:
    calls: dict[str, set[str]] = {}
    for h in manual.helpers:
        calls.setdefault(h.name, set()).update(h.calls - {h.name})
    return calls


def edited_helpers(manual: ManualFile, base: ManualFile | None) -> frozenset[str]:
    """The names whose definitions differ from `base`'s (see the module's doc); every name without a base."""
    if base is None:
        return manual.names
    before: dict[str, list[str]] = {}
    for h in base.helpers:
        before.setdefault(h.name, []).append(h.key)
    now: dict[str, list[str]] = {}
    for h in manual.helpers:
        now.setdefault(h.name, []).append(h.key)
    return frozenset(name for name, keys in now.items() if sorted(keys) != sorted(before.get(name, ())))


def callers_of(manual: ManualFile, names: Collection[str]) -> frozenset[str]:
    """`names` and every helper that calls one of them, transitively."""
    calls = _graph(manual)
    found = set(names)
    changed = True
    while changed:
        changed = False
        for caller, callees in calls.items():
            if caller not in found and callees & found:
                found.add(caller)
                changed = True
    return frozenset(found)


def helpers_to_define(
    manual: ManualFile,
    reached: Collection[str],
    edited: Collection[str],
    declared: Collection[str] | None = None,
) -> frozenset[str]:
    """The names an extension defines so the formulas reaching `reached` run the `edited` code (see the module's
    doc). `declared`: FunctionsManual.h's names (a helper it does not declare is defined when needed, as a
    file-local one is); None: only file-local helpers are."""
    needed = set(callers_of(manual, edited) & set(reached))
    local = {h.name for h in manual.helpers if h.file_local}
    if declared is not None:
        local |= manual.names - set(declared)
    calls = _graph(manual)
    todo = list(needed)
    while todo:
        for callee in calls.get(todo.pop(), ()):
            if callee in local and callee not in needed:
                needed.add(callee)
                todo.append(callee)
    return frozenset(needed)


def manual_code(
    manual: ManualFile,
    names: Collection[str],
    header: str | None = None,
    namespace: str | None = None,
    include_roots: Sequence[Path] = (),
) -> ManualCode:
    """The C++ that defines every overload of `names` (see the module's doc). `header`: FunctionsManual.h's text
    (its default arguments); `namespace`: the innermost namespace's name (default `derivls_manual_<hash>`);
    `include_roots`: torch's include folders: the file's `#include`s of headers they hold are kept (others are
    left out: the extension has the precompiled header's)."""
    chosen = sorted(set(names) & manual.names)
    helpers = [h for h in manual.helpers if h.name in chosen]
    if not helpers:
        return ManualCode("", "", (), (), ())
    defaults = _header_defaults(header) if header is not None else {}
    digest = hashlib.sha256("\0".join(h.text for h in helpers).encode()).hexdigest()[:12]
    inner = namespace or f"derivls_manual_{digest}"
    qualified = f"{HELPERS_NAMESPACE}::{inner}"
    out: list[tuple[str, int | None]] = [
        ("// derivls gradcheck: FunctionsManual.cpp's helpers, defined from the workspace's text", None)
    ]

    def add(text: str, first: int | None) -> None:
        for k, line in enumerate(text.split("\n")):
            out.append((line, None if first is None else first + k))

    for include in manual.includes:
        m = re.match(r"#\s*include\s*([<\"])([^>\"]+)[>\"]", include)
        if m and any((Path(root) / m.group(2)).is_file() for root in include_roots):
            add(f"#include <{m.group(2)}>", None)
    add(f"namespace {qualified} {{", None)
    for k, using in enumerate(manual.usings):
        add(re.sub(r"\s+", " ", using), manual.using_lines[k] if k < len(manual.using_lines) else None)
    for h in helpers:  # declarations first: a definition may call one defined after it
        add(_declaration(h, defaults) + ";", h.start_line)
    for h in helpers:
        gap = h.body_line - h.start_line - h.signature.count("\n")  # (a `{` on a line of its own)
        add(_without_defaults(h.signature) + ("\n" * gap if gap > 0 else " ") + h.body, h.start_line)
    add(f"}} // namespace {qualified}", None)
    public = tuple(sorted({h.name for h in helpers if not h.file_local}))
    return ManualCode(
        "\n".join(line for line, _ in out) + "\n", qualified, tuple(chosen), public, tuple(o for _, o in out)
    )


def _parameters(signature: str) -> tuple[int, int, list[tuple[int, int]]] | None:
    """The parameter list of a signature: (its `(`, its `)`, each parameter's (start, end)) as offsets, or None."""
    toks = tokens(signature)
    index = _function_name(toks)
    if index is None:
        return None
    open_ = index + 1
    depth = 0
    parts: list[tuple[int, int]] = []
    start = toks[open_][2] + 1
    for j in range(open_, len(toks)):
        t = toks[j][1]
        step = _BRACKETS.get(t, 0)
        depth += step
        if step < 0:
            if depth <= 0:
                parts.append((start, toks[j][2]))
                return toks[open_][2], toks[j][2], [p for p in parts if signature[p[0] : p[1]].strip()]
        elif t == "," and depth == 1:
            parts.append((start, toks[j][2]))
            start = toks[j][2] + 1
    return None


def _without_defaults(signature: str) -> str:
    """The signature with its parameters' default arguments cut (newlines kept: lines stay where they were)."""
    found = _parameters(signature)
    if found is None:
        return signature
    out, last = [], 0
    for start, end in found[2]:
        param = signature[start:end]
        cut = _top_level_equals(param)
        if cut is not None:
            out.append(signature[last : start + cut])
            out.append("\n" * param[cut:].count("\n"))
            last = end
    out.append(signature[last:])
    return "".join(out)


def _top_level_equals(param: str) -> int | None:
    depth = 0
    for _, tok, offset in tokens(param):
        depth += _BRACKETS.get(tok, 0)
        if tok == "=" and depth == 0:
            return offset
    return None


def _parameter_types(signature: str) -> tuple[str, ...] | None:
    found = _parameters(signature)
    if found is None:
        return None
    from derivls.derivatives.formulas.cparams import parameter_type

    out = []
    for start, end in found[2]:
        param = signature[start:end]
        cut = _top_level_equals(param)
        head = param[:cut] if cut is not None else param
        out.append(_key(tokens(parameter_type(head.strip()))).replace("at :: ", ""))
    return tuple(out)


def _header_defaults(header: str) -> Mapping[tuple[str, tuple[str, ...]], tuple[str | None, ...]]:
    """(name, parameter types) -> each parameter's default text (None: none), of FunctionsManual.h's declarations."""
    from derivls.derivatives.formulas.declarations import parse_declarations

    found: dict[tuple[str, tuple[str, ...]], tuple[str | None, ...]] = {}
    for decl in parse_declarations(header):
        types = _parameter_types(decl.text)
        if types is None:
            continue
        defaults = []
        for p in decl.parameter_texts:
            cut = _top_level_equals(p)
            defaults.append(p[cut + 1 :].strip() if cut is not None else None)
        if any(d is not None for d in defaults):
            found[(decl.name, types)] = tuple(defaults)
    return found


def _declaration(h: Helper, defaults: Mapping[tuple[str, tuple[str, ...]], tuple[str | None, ...]]) -> str:
    """The helper's forward declaration: its signature as written, with FunctionsManual.h's default arguments
    where the header declares the same parameters with defaults and the definition gives none."""
    types = _parameter_types(h.signature)
    wanted = defaults.get((h.name, types)) if types is not None else None
    found = _parameters(h.signature)
    if wanted is None or found is None or len(found[2]) != len(wanted):
        return h.signature
    out, last = [], 0
    for (start, end), default in zip(found[2], wanted):
        if default is not None and _top_level_equals(h.signature[start:end]) is None:
            out.append(h.signature[last:end].rstrip() + " = " + default)
            last = end
    out.append(h.signature[last:])
    return "".join(out)


__all__ = [
    "ANONYMOUS",
    "HELPERS_NAMESPACE",
    "Helper",
    "ManualCode",
    "ManualFile",
    "callers_of",
    "edited_helpers",
    "formula_names",
    "helpers_to_define",
    "manual_code",
    "parse_manual",
    "reached_helpers",
    "tokens",
]
