"""The member functions a C++ class body declares (at::TensorBase in TensorBase.h, at::Tensor in the
TensorBody.h template): name, parameters, return type — what a formula's `x.sym_size(-1)` can call
besides the methods torchgen generates from native_functions.yaml.

Only what a call needs is read: non-static member functions at the class's top level (constructors,
operators, friends, static and nested types left out), each parameter's type and whether it has a
default, `using Base::name;` declarations (they bring the base's overloads back where the class's own
declaration of that name would hide them), and whether the member is a template (then not judged).
"""

from __future__ import annotations

import re

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas.cparams import has_default, parameter_name, parameter_type, split_top

_COMMENTS = re.compile(r"//[^\n]*|/\*.*?\*/", re.S)
_PREPROCESSOR = re.compile(r"(?m)^[ \t]*#[^\n]*")
_SPECIFIERS = frozenset(
    "inline virtual explicit constexpr TORCH_API C10_NODISCARD C10_ALWAYS_INLINE C10_DEPRECATED "
    "TORCH_INTERNAL_API".split()
)
_ACCESS = re.compile(r"\b(?:public|private|protected)\s*:(?!:)")
_MACRO_CALL = re.compile(r"\b[A-Z][A-Z0-9_]+\([^()]*\)")  # C10_DEPRECATED_MESSAGE("…") and the like


@frozen_dataclass(slots=True)
class Member:
    name: str
    returns: str  # the return type as written (`c10::SymInt`, `const TensorBase&`)
    parameters: tuple[str, ...]  # each parameter's type
    names: tuple[str, ...]  # each parameter's name ("" when unnamed)
    required: int  # parameters without a default
    template: bool
    text: str  # the declaration, whitespace normalised

    @property
    def arity(self) -> tuple[int, int]:
        return self.required, len(self.parameters)


def class_body(text: str, name: str) -> str | None:
    """The text between the braces of `class … name … {`, comments and preprocessor lines removed."""
    clean = _PREPROCESSOR.sub("", _COMMENTS.sub(" ", text))
    m = re.search(rf"\bclass\s+(?:\w+\s+)*{re.escape(name)}\b[^;{{]*\{{", clean)
    if m is None:
        return None
    depth, start = 1, m.end()
    for j in range(start, len(clean)):
        c = clean[j]
        if c == "{":
            depth += 1
        elif c == "}":
            depth -= 1
            if depth == 0:
                return clean[start:j]
    return None


def _statements(body: str) -> list[str]:
    """The class's top-level statements: what stands before each `;` or before a member's `{ … }`."""
    out: list[str] = []
    current: list[str] = []
    depth = 0  # braces
    parens = 0
    for c in body:
        if depth:
            if c == "{":
                depth += 1
            elif c == "}":
                depth -= 1
            continue
        if c == "(":
            parens += 1
        elif c == ")":
            parens -= 1
        if parens == 0 and c == ";":
            out.append("".join(current))
            current = []
        elif parens == 0 and c == "{":
            text = "".join(current)
            # a default member initializer or `= {}` default stays inside the statement
            if re.search(r"[=(,]\s*$", text):
                current.append(c)
                continue
            out.append(text)
            current = []
            depth = 1
        else:
            current.append(c)
    return out


def members(body: str, class_name: str) -> tuple[dict[str, list[Member]], set[str]]:
    """(name → its member function declarations, names of `using Base::name;`) of a class body."""
    found: dict[str, list[Member]] = {}
    using: set[str] = set()
    for statement in _statements(body):
        text = " ".join(_ACCESS.sub(" ", statement).split())
        if not text:
            continue
        m = re.fullmatch(r"using\s+[\w:]+::(\w+)", text)
        if m:
            using.add(m.group(1))
            continue
        template = text.startswith("template")
        if template:
            text = re.sub(r"^template\s*<.*?>\s*(?=[A-Za-z_])", "", text)
        text = _MACRO_CALL.sub(" ", text).strip()
        if re.match(r"(?:friend|static|typedef|using|enum|struct|class|union)\b", text):
            continue
        open_ = text.find("(")
        if open_ <= 0:
            continue
        head = text[:open_].rstrip()
        name_match = re.search(r"(~?\w+)$", head)
        if name_match is None or "operator" in head:
            continue
        name = name_match.group(1)
        words = [w for w in head[: name_match.start()].split() if w not in _SPECIFIERS]
        returns = " ".join(words)
        if not returns or name in (class_name, f"~{class_name}"):
            continue  # a constructor, a destructor
        depth, close = 0, -1
        for j in range(open_, len(text)):
            depth += text[j] == "("
            depth -= text[j] == ")"
            if depth == 0:
                close = j
                break
        if close < 0 or re.search(r"=\s*delete\b", text[close:]):
            continue
        parameters = [p for p in split_top(text[open_ + 1 : close]) if p != "void"]
        member = Member(
            name,
            returns,
            tuple(parameter_type(p) for p in parameters),
            tuple(parameter_name(p) for p in parameters),
            sum(1 for p in parameters if not has_default(p)),
            template,
            text,
        )
        found.setdefault(name, []).append(member)
    return found, using
