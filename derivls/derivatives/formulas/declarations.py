"""C++ declarations read out of a header's text (FunctionsManual.h, TensorBody.h, TensorBase.h, the
Functions.cpp template): each overload with its declaration text, parameters and line; method names;
`using` declarations."""

from __future__ import annotations

import re

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas.cparams import has_default, parameter_name, split_top

_DECL_NAME = re.compile(r"(?:operator\s*\S+|~?\w+)\s*$")


_METHOD_LINE = re.compile(r"^\s*(?:template\s*<[^>]*>\s*)?(?:[\w:]+(?:<[^;{}()]*>)?[\s&*]+)+(\w+)\s*\(")


_NOT_NEWLINE = re.compile(r"[^\n]")


_NOT_A_TYPE = frozenset({"return", "if", "else", "case", "throw", "delete", "new", "goto", "sizeof"})


@frozen_dataclass
class Declaration:
    """One helper overload of FunctionsManual.h."""

    name: str
    text: str  # the declaration, whitespace normalised, without TORCH_API and the body
    parameters: tuple[str, ...]  # parameter names in order
    parameter_texts: tuple[str, ...]  # each parameter as written (type, name, default)
    line: int  # 0-based line in the header
    path: str

    @property
    def arity(self) -> tuple[int, float]:
        """(fewest, most) arguments a call of this overload may pass: parameters with a default may be
        left out; a `...` parameter takes any number."""
        if any("..." in p for p in self.parameter_texts):
            return sum(1 for p in self.parameter_texts if "..." not in p and not has_default(p)), float("inf")
        params = [p for p in self.parameter_texts if p != "void"]
        return sum(1 for p in params if not has_default(p)), len(params)


_TEMPLATE_PARAMETER = re.compile(r"\b(?:typename|class)\s*(?:\.\.\.\s*)?(\w+)")


def non_dependent(declaration: Declaration, types: list[str]) -> tuple[str, ...]:
    """`types` of a helper's parameters, "" (no known type) for those of a template that name one of its
    template parameters (`T other`, `const std::vector<T>&`)."""
    if not declaration.text.startswith("template"):
        return tuple(types)
    head = declaration.text[: declaration.text.find("(")]
    names = _TEMPLATE_PARAMETER.findall(head)
    return tuple("" if any(re.search(rf"\b{re.escape(n)}\b", t) for n in names) else t for t in types)


def _strip_comments(text: str) -> str:
    """Comments and preprocessor lines blanked out, keeping every offset and newline."""

    def blank(m: re.Match[str]) -> str:
        found = m.group(0)
        if "\n" not in found:  # `//` comments, one-line `/* */` and preprocessor lines: no regex
            return " " * len(found)
        return _NOT_NEWLINE.sub(" ", found)

    text = re.sub(r"//[^\n]*|/\*.*?\*/", blank, text, flags=re.S)
    return re.sub(r"(?m)^[ \t]*#[^\n]*", blank, text)


def parse_declarations(text: str, path: str = "FunctionsManual.h") -> list[Declaration]:
    """Function declarations (and inline definitions) at namespace level of a header."""
    clean = _strip_comments(text)
    line_of = _LineCounter(clean)
    decls: list[Declaration] = []
    depth = 0
    start = 0
    initializers = 0  # open `{` of default arguments (`std::optional<T> x = {}`): not bodies
    n = len(clean)
    # jump from delimiter to delimiter (a regex scan, not a loop over every character)
    for m in _DELIMITER.finditer(clean):
        i = m.start()
        c = clean[i]
        if depth == 0 and (initializers or (c == "{" and _inside_parentheses(clean, start, i))):
            initializers += 1 if c == "{" else -1 if c == "}" else 0
            continue
        if c == "{":
            stmt = clean[start:i]
            if depth == 0 and "namespace" in stmt and re.search(r"\bnamespace\b", stmt):
                start = i + 1
                continue  # a namespace's braces do not nest declarations
            if depth == 0:
                decl = _declaration(stmt, line_of, start, path)
                if decl is not None:
                    decls.append(decl)
            depth += 1
        elif c == "}":
            if depth > 0:
                depth -= 1
            if depth == 0:
                start = i + 1
                if i + 1 < n and clean[i + 1] == ";":
                    start = i + 2
        elif depth == 0:  # ";"
            decl = _declaration(clean[start:i], line_of, start, path)
            if decl is not None:
                decls.append(decl)
            start = i + 1
    return decls


_DELIMITER = re.compile(r"[{};]")


def _inside_parentheses(text: str, start: int, end: int) -> bool:
    """Whether text[start:end] leaves a `(` open (a `{` there is in a parameter list)."""
    return text.count("(", start, end) > text.count(")", start, end)


class _LineCounter:
    """0-based line of an offset; offsets asked in increasing order cost only the text between them."""

    def __init__(self, text: str) -> None:
        self.text = text
        self.offset = 0
        self.line = 0

    def __call__(self, offset: int) -> int:
        if offset < self.offset:
            return self.text.count("\n", 0, offset)
        self.line += self.text.count("\n", self.offset, offset)
        self.offset = offset
        return self.line


def _normalized(text: str) -> str:
    """Whitespace runs → one space (text already in that form, the usual case, is returned as is)."""
    if "  " not in text and text.replace(" ", "").isprintable():  # every other whitespace is unprintable
        return text
    return _WHITESPACE.sub(" ", text)


_WHITESPACE = re.compile(r"\s+")


def _declaration(stmt: str, line_of: _LineCounter, offset: int, path: str) -> Declaration | None:
    if re.match(r"\s*extern\b", stmt) and "(" not in stmt:
        m = re.search(r"(\w+)\s*$", stmt)  # extern const char* kCudnnDoubleBackwardMsg;
        if m is None:
            return None
        line = line_of(offset + len(stmt) - len(stmt.lstrip()))
        return Declaration(m.group(1), re.sub(r"\s+", " ", stmt.strip()), (), (), line, path)
    if "(" not in stmt or re.match(r"\s*(struct|class|using|typedef|extern)\b", stmt):
        return None
    lead = len(stmt) - len(stmt.lstrip())
    body = stmt.strip()
    paren = body.find("(")
    m = _DECL_NAME.search(body[:paren])
    if m is None or not re.match(r"[\w~]", m.group(0)):
        return None
    name = m.group(0).strip()
    if not body[:paren].strip() or name == body[:paren].strip():
        return None  # a call or constructor, not a declaration with a return type
    close = body.rfind(")")
    params = split_top(body[paren + 1 : close])
    text = re.sub(r"\s+", " ", re.sub(r"\bTORCH_API\s+", "", body))
    line = line_of(offset + lead)
    names = tuple(parameter_name(p) for p in params)
    return Declaration(name, text, names, tuple(_normalized(p) for p in params), line, path)


def method_names(text: str) -> set[str]:
    """Names declared as functions/methods in a C++ header (class members and free functions alike)."""
    names = set()
    for line in _strip_comments(text).splitlines():
        if "(" not in line:  # what _METHOD_LINE needs: most lines go without trying it
            continue
        m = _METHOD_LINE.match(line)
        if m is None:
            continue
        first = line.split()[0] if line.split() else ""
        if first in _NOT_A_TYPE:
            continue
        names.add(m.group(1))
    return names


# `using namespace …;` of 2.x's VariableType.cpp template (2.1 to 2.15 alike), when it cannot be read
FORWARD_NAMESPACES = frozenset({"at", "torch::autograd::generated", "torch::autograd::generated::details"})


# ATen functions whose unqualified name VariableType.cpp's lookup finds twice: through `using namespace at;`
# and, from torch::autograd, as something c10 declares — g++: "reference to 'complex' is ambiguous"
# (every ATen function name of 2.13 tried there: tests/compile/test_variable_type_lookup.py).
FORWARD_AMBIGUOUS = {
    "complex": "the class template c10::complex",
    "is_complex": "the type trait c10::is_complex",
    "std": "the namespace std",
}


def using_names(text: str) -> tuple[set[str], set[str]]:
    """(names of `using ns::Name;`, namespaces of `using namespace ns;`) in a source file."""
    names = set(re.findall(r"(?m)^\s*using\s+(?!namespace\b)[\w:]*::(\w+)\s*;", text))
    namespaces = set(re.findall(r"(?m)^\s*using\s+namespace\s+([\w:]+)\s*;", text))
    return names, namespaces


__all__ = ["Declaration", "parse_declarations", "method_names", "FORWARD_AMBIGUOUS", "using_names"]
