"""The usual repairs of a formula gradcheck rejects, as plain text (no torch, no compiler).

`candidates(formula, ...)` makes from a failing formula's text the formulas a person would try first:

- **sign**: the whole formula negated (one candidate: a minus dropped where it stands, or put on the first
  factor), the argument of a call negated (`exp(x)` -> `exp(-(x))`), a minus inside dropped;
- **conj**: a `.conj()` dropped, or added on a factor (a tensor, a call, a parenthesised sum);
- **swap**: two inputs of the op exchanged everywhere, or one occurrence of an input replaced by another;
- **scale**: the formula times 2 or 0.5;
- **result**: the op's recomputed value (`self.exp()`, `at::exp(self)`) replaced by `result`, and back.

Candidates that are the same formula written another way (`-grad * x`, `grad * -x`, `(2 * r).conj()` and
`2 * r.conj()`) are one candidate: `canonical()` pushes signs and conjugations to the leaves. The engine
checks them all in one extension; `choose()` keeps a repair only when exactly one candidate passes every
check of every sample and dtype.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass

# calls whose result changes sign with one argument's sign (negating that argument = negating the formula),
# and calls a sign never enters sensibly: no "negate the argument" candidate for them
_SIGN_TRANSPARENT = frozenset(
    "handle_r_to_c maybe_multiply sin tan atan asin sinh tanh asinh atanh erf erfinv sgn sign mul div "
    "neg expand expand_symint expand_as sum sum_to sum_to_size reshape view flip cumsum mm mv matmul bmm dot "
    "ger outer to masked_fill masked_fill_ where conj transpose mT mH t narrow select index_select".split()
)
# members whose value is not a tensor (no `.conj()` after them; their arguments are not negated)
_NOT_TENSOR_MEMBERS = frozenset(
    "sym_sizes sizes size sym_size dim numel sym_numel scalar_type options dtype device is_complex "
    "is_floating_point defined strides sym_strides layout toFloat toDouble toComplexDouble item".split()
)
_KEYWORDS = frozenset({"auto_element_wise", "auto_linear", "not_implemented", "non_differentiable"})


@dataclass(frozen=True)
class Candidate:
    formula: str
    how: str  # "sign" | "conj" | "swap" | "scale" | "result"


# --- a small expression parser: enough of C++ for derivatives.yaml formulas


@dataclass
class Node:
    kind: str  # num id paren call member index unary binary ternary brace
    start: int
    end: int
    name: str = ""  # the identifier, operator or member name
    children: tuple[Node, ...] = ()
    has_args: bool = False  # a member call (`.conj()`) rather than a field


class ParseError(ValueError):
    pass


_TOKEN = re.compile(
    r"\s+|/\*.*?\*/|//[^\n]*"  # space and comments (skipped)
    r"|(?P<num>(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?[fFlLuU]*)"
    r"|(?P<id>(?:::)?[A-Za-z_]\w*(?:::[A-Za-z_]\w*)*)"
    r"|(?P<str>\"(?:\\.|[^\"\\])*\"|'(?:\\.|[^'\\])*')"
    r"|(?P<op>->|==|!=|<=|>=|&&|\|\||<<|>>|[-+*/%<>!~&|^?:,.()\[\]{}])",
    re.DOTALL,
)
_BINARY = {
    "||": 1,
    "&&": 2,
    "|": 3,
    "^": 4,
    "&": 5,
    "==": 6,
    "!=": 6,
    "<": 7,
    ">": 7,
    "<=": 7,
    ">=": 7,
    "<<": 8,
    ">>": 8,
    "+": 9,
    "-": 9,
    "*": 10,
    "/": 10,
    "%": 10,
}


def _tokens(text: str) -> list[tuple[str, str, int, int]]:
    out = []
    i = 0
    while i < len(text):
        m = _TOKEN.match(text, i)
        if m is None:
            raise ParseError(f"unexpected {text[i]!r}")
        kind = m.lastgroup
        if kind is not None:
            out.append((kind, m.group(), m.start(), m.end()))
        i = m.end()
    return out


class _Parser:
    def __init__(self, text: str) -> None:
        self.toks = _tokens(text)
        self.i = 0

    def peek(self, offset: int = 0) -> tuple[str, str, int, int] | None:
        j = self.i + offset
        return self.toks[j] if j < len(self.toks) else None

    def take(self, value: str | None = None) -> tuple[str, str, int, int]:
        tok = self.peek()
        if tok is None or (value is not None and tok[1] != value):
            raise ParseError(f"expected {value or 'more'}")
        self.i += 1
        return tok

    def at(self, value: str) -> bool:
        tok = self.peek()
        return tok is not None and tok[0] in ("op",) and tok[1] == value

    def parse(self) -> Node:
        node = self.expression()
        if self.peek() is not None:
            raise ParseError("trailing text")
        return node

    def expression(self) -> Node:
        cond = self.binary(0)
        if self.at("?"):
            self.take("?")
            yes = self.expression()
            self.take(":")
            no = self.expression()
            return Node("ternary", cond.start, no.end, "?", (cond, yes, no))
        return cond

    def binary(self, level: int) -> Node:
        left = self.unary()
        while True:
            tok = self.peek()
            if tok is None or tok[0] != "op" or tok[1] not in _BINARY or _BINARY[tok[1]] <= level:
                return left
            self.take()
            right = self.binary(_BINARY[tok[1]])
            left = Node("binary", left.start, right.end, tok[1], (left, right))

    def unary(self) -> Node:
        tok = self.peek()
        if tok is not None and tok[0] == "op" and tok[1] in ("-", "+", "!", "~", "&", "*"):
            self.take()
            operand = self.unary()
            return Node("unary", tok[2], operand.end, tok[1], (operand,))
        return self.postfix(self.primary())

    def arguments(self, close: str) -> tuple[list[Node], int]:
        args: list[Node] = []
        if not self.at(close):
            while True:
                args.append(self.expression())
                if not self.at(","):
                    break
                self.take(",")
        end = self.take(close)[3]
        return args, end

    def primary(self) -> Node:
        tok = self.take()
        kind, value, start, end = tok
        if kind == "num" or kind == "str":
            return Node("num", start, end, value)
        if kind == "id":
            if self.at("("):
                self.take("(")
                args, end = self.arguments(")")
                return Node("call", start, end, value, tuple(args), True)
            return Node("id", start, end, value)
        if value == "(":
            inner = self.expression()
            end = self.take(")")[3]
            return Node("paren", start, end, "", (inner,))
        if value == "{":
            args, end = self.arguments("}")
            return Node("brace", start, end, "", tuple(args))
        raise ParseError(f"unexpected {value!r}")

    def postfix(self, node: Node) -> Node:
        while True:
            if self.at(".") or self.at("->"):
                self.take()
                name = self.take()
                if name[0] != "id":
                    raise ParseError("a member name")
                if self.at("("):
                    self.take("(")
                    args, end = self.arguments(")")
                    node = Node("member", node.start, end, name[1], (node, *args), True)
                else:
                    node = Node("member", node.start, name[3], name[1], (node,))
            elif self.at("["):
                self.take("[")
                index = self.expression()
                end = self.take("]")[3]
                node = Node("index", node.start, end, "", (node, index))
            else:
                return node


def parse(text: str) -> Node:
    """The expression tree of a formula; ParseError when it is not one this parser reads."""
    return _Parser(text).parse()


def _walk(node: Node) -> Iterable[Node]:
    yield node
    for child in node.children:
        yield from _walk(child)


# --- the same formula written another way


def canonical(text: str) -> str | None:
    """A formula with signs and `.conj()` pushed to its leaves and spaces removed: two texts with the same
    canonical form compute the same thing (None: not parsed)."""
    try:
        node = parse(text)
    except ParseError:
        return None
    sign, key = _canon(text, node, False)
    return ("-" if sign < 0 else "") + key


def _signed(sign: int, key: str) -> str:
    return ("-" if sign < 0 else "") + key


def _canon(text: str, node: Node, conj: bool) -> tuple[int, str]:
    kind = node.kind
    if kind == "num":
        return 1, node.name.rstrip("fFlLuU") if not node.name.startswith(("'", '"')) else node.name
    if kind == "id":
        return 1, node.name + ("~" if conj else "")
    if kind == "paren":
        return _canon(text, node.children[0], conj)
    if kind == "unary" and node.name in "-+":
        sign, key = _canon(text, node.children[0], conj)
        return (-sign if node.name == "-" else sign), key
    if kind == "member" and node.name == "conj" and node.has_args and len(node.children) == 1:
        return _canon(text, node.children[0], not conj)
    if kind == "binary" and node.name in "*/":
        factors = _chain(node, "*/")
        sign, keys = 1, []
        for op, factor in factors:
            s, k = _canon(text, factor, conj)
            sign *= s
            keys.append(op + k)
        return sign, "(" + "".join(keys) + ")"
    if kind == "binary" and node.name in "+-":
        terms = _chain(node, "+-")
        signed = []
        for op, term in terms:
            s, k = _canon(text, term, conj)
            signed.append((s * (-1 if op == "-" else 1), k))
        overall = 1
        if signed[0][0] < 0:
            overall = -1
            signed = [(-s, k) for s, k in signed]
        return overall, "(" + "".join(("-" if s < 0 else "+") + k for s, k in signed) + ")"
    inner = ",".join(_signed(*_canon(text, c, False)) for c in node.children)
    key = f"{kind}:{node.name}[{inner}]"
    return 1, f"conj[{key}]" if conj else key


def _chain(node: Node, ops: str) -> list[tuple[str, Node]]:
    """The operands of a left-associative chain of `ops` (a * b / c), each with the operator before it."""
    if node.kind == "binary" and node.name in ops and len(node.name) == 1:
        left, right = node.children
        return [*_chain(left, ops), (node.name, right)]
    return [("", node)]


# --- the candidates


def candidates(
    formula: str,
    inputs: Sequence[str] = (),
    tensors: Iterable[str] = (),
    recompute: Sequence[str] = (),
    result: str | None = "result",
) -> list[Candidate]:
    """The usual repairs of `formula`, each written once (equivalent rewrites dropped), never the formula itself.

    inputs: the op's tensor inputs (swap candidates exchange them); tensors: names that hold tensors or Scalars
    (a `.conj()` may follow them: inputs, `grad`, `result`, the op's Scalar arguments); recompute: the texts
    that compute the op's output again (`self.exp()`, `at::exp(self)`; the first is used for `result`)."""
    if formula.strip() in _KEYWORDS:
        return []
    try:
        root = parse(formula)
    except ParseError:
        return []
    if any(n.kind == "call" and n.name.split("::")[-1] == "not_implemented" for n in _walk(root)):
        return []  # not a formula to repair: the op has none (the check says not checkable)
    tensor_names = {"grad", *(inputs or ()), *tensors} | ({result} if result else set())
    if _writes_in_place(root):
        # `self_t.copy_(e)` (an in-place op's forward formula): its value is the tangent it writes; a repair
        # outside the call (`-self_t.copy_(-e)`) would leave the written tangent wrong: repairs of `e` only
        arg = root.children[1]
        inner = formula[arg.start : arg.end]
        raw = [
            Candidate(_splice(formula, arg.start, arg.end, f"({c.formula})" if _loose(c.formula) else c.formula), c.how)
            for c in candidates(inner, inputs, tensors, recompute, result)
        ]
    else:
        raw = _all_candidates(formula, root, tensor_names, inputs, recompute, result)
    seen = {canonical(formula)}
    out = []
    for c in raw:
        key = canonical(c.formula)
        if key is None or key in seen:
            continue
        seen.add(key)
        out.append(c)
    return out


def _writes_in_place(root: Node) -> bool:
    """Is the formula one call of an in-place member (`self_t.copy_(...)`, `mul_`) on a tensor with one argument?"""
    return root.kind == "member" and root.has_args and root.name.endswith("_") and len(root.children) == 2


def _loose(text: str) -> bool:
    """Would `text` need parentheses as an argument (a comma at its top level)? (A ternary or a braced list.)"""
    try:
        node = parse(text)
    except ParseError:
        return True
    return node.kind == "ternary"


def _all_candidates(
    formula: str,
    root: Node,
    tensor_names: set[str],
    inputs: Sequence[str],
    recompute: Sequence[str],
    result: str | None,
) -> list[Candidate]:
    raw: list[Candidate] = []
    raw += [Candidate(t, "sign") for t in _sign_candidates(formula, root, tensor_names)]
    raw += [Candidate(t, "conj") for t in _conj_candidates(formula, root, tensor_names)]
    raw += [Candidate(t, "swap") for t in _swap_candidates(formula, root, list(inputs))]
    whole = _grouped(formula, root)
    raw += [Candidate(f"2 * {whole}", "scale"), Candidate(f"0.5 * {whole}", "scale")]
    raw += [Candidate(t, "result") for t in _result_candidates(formula, root, recompute, result)]
    return raw


def _splice(text: str, start: int, end: int, new: str) -> str:
    return text[:start] + new + text[end:]


def _grouped(text: str, node: Node) -> str:
    """The node's text, in parentheses when an operator outside would bind into it."""
    own = text[node.start : node.end]
    return f"({own})" if node.kind in ("binary", "ternary", "unary") else own


def _negated(text: str, node: Node, parens_for_calls: bool) -> str:
    """The text of `-node` (a minus dropped when it has one)."""
    if node.kind == "unary" and node.name == "-":
        return text[node.children[0].start : node.end]
    own = text[node.start : node.end]
    if node.kind in ("binary", "ternary", "unary") or (parens_for_calls and node.kind in ("member", "call")):
        return f"-({own})"
    return "-" + own


def _mentions(node: Node, names: set[str]) -> bool:
    return any(n.kind == "id" and n.name in names for n in _walk(node))


def _sign_candidates(text: str, root: Node, tensors: set[str]) -> list[str]:
    out = []
    # the whole formula: a minus dropped where it stands, or put where a person writes it
    if root.kind == "binary" and root.name in "*/":
        factors = [f for _, f in _chain(root, "*/")]
        minus = next((f for f in factors if f.kind == "unary" and f.name == "-"), None)
        if minus is not None:
            out.append(_splice(text, minus.start, minus.end, text[minus.children[0].start : minus.end]))
        elif factors[0].kind == "num":
            out.append(_splice(text, factors[0].start, factors[0].start, "-"))
        elif factors[0].kind == "id" and factors[0].name == "grad" and len(factors) > 1:
            second = factors[1]
            out.append(_splice(text, second.start, second.end, _negated(text, second, False)))
        else:
            out.append(_splice(text, factors[0].start, factors[0].end, _negated(text, factors[0], False)))
    else:
        out.append(_negated(text, root, False))
    # a call's argument negated (not for calls a sign passes through: that is the whole formula negated)
    for node in _walk(root):
        if node.kind in ("call", "member") and node.has_args:
            name = node.name.split("::")[-1]
            if name in _SIGN_TRANSPARENT or name in _NOT_TENSOR_MEMBERS or name.endswith("_backward"):
                continue
            args = node.children[1:] if node.kind == "member" else node.children
            for arg in args:
                if arg.kind != "num" and _mentions(arg, tensors):
                    out.append(_splice(text, arg.start, arg.end, _negated(text, arg, True)))
    # a minus inside dropped
    for node in _walk(root):
        if node.kind == "unary" and node.name == "-" and node is not root:
            out.append(_splice(text, node.start, node.end, text[node.children[0].start : node.end]))
    return out


def _tensorish(node: Node, tensors: set[str]) -> bool:
    """May `.conj()` follow this node (a tensor or Scalar value, not already conjugated)?"""
    if node.kind == "id":
        return node.name in tensors
    if node.kind == "member":
        if node.name == "conj" or node.name in _NOT_TENSOR_MEMBERS or not node.has_args:
            return False
        return _tensorish(node.children[0], tensors)
    if node.kind == "call":
        return _mentions(node, tensors) and node.name.split("::")[-1] not in _NOT_TENSOR_MEMBERS
    if node.kind == "paren":
        inner = node.children[0]
        # (a * b).conj() is a.conj() * b.conj(): the factors get their own candidates
        return not (inner.kind == "binary" and inner.name in "*/") and _mentions(inner, tensors)
    if node.kind == "index":
        return _tensorish(node.children[0], tensors)
    return False


def _conj_candidates(text: str, root: Node, tensors: set[str]) -> list[str]:
    out = []
    for node in _walk(root):
        if node.kind == "member" and node.name == "conj" and node.has_args and len(node.children) == 1:
            out.append(_splice(text, node.children[0].end, node.end, ""))
    places: list[Node] = [root]
    for node in _walk(root):
        if node.kind == "binary" and node.name in "*/+-":
            places += list(node.children)
        elif node.kind in ("call", "member") and node.has_args:
            name = node.name.split("::")[-1]
            if name not in _NOT_TENSOR_MEMBERS:
                places += list(node.children[1:] if node.kind == "member" else node.children)
        elif node.kind in ("paren", "ternary"):
            places += list(node.children[1:] if node.kind == "ternary" else node.children)
        elif node.kind == "unary" and node.name == "-":
            places.append(node.children[0])
    done: set[tuple[int, int]] = set()
    for node in places:
        if (node.start, node.end) in done or not _tensorish(node, tensors):
            continue
        done.add((node.start, node.end))
        out.append(_splice(text, node.end, node.end, ".conj()"))
    return out


def _swap_candidates(text: str, root: Node, inputs: list[str]) -> list[str]:
    if len(inputs) < 2:
        return []
    uses = [n for n in _walk(root) if n.kind == "id" and n.name in inputs]
    out = []
    present = [name for name in inputs if any(u.name == name for u in uses)]
    for i, a in enumerate(present):  # two inputs exchanged everywhere
        for b in present[i + 1 :]:
            swapped = text
            for u in sorted(uses, key=lambda n: -n.start):
                if u.name in (a, b):
                    swapped = _splice(swapped, u.start, u.end, b if u.name == a else a)
            out.append(swapped)
    if len(uses) <= 8:  # one occurrence of an input replaced by another input
        for u in uses:
            for other in inputs:
                if other != u.name:
                    out.append(_splice(text, u.start, u.end, other))
    return out


def _result_candidates(text: str, root: Node, recompute: Sequence[str], result: str | None) -> list[str]:
    if not result or not recompute:
        return []
    forms = {canonical(r) for r in recompute} - {None}
    out = []
    for node in _walk(root):
        if node.kind in ("call", "member") and canonical(text[node.start : node.end]) in forms:
            out.append(_splice(text, node.start, node.end, result))
        elif node.kind == "id" and node.name == result:
            out.append(_splice(text, node.start, node.end, f"({recompute[0]})"))
    return out


# --- the choice


@dataclass(frozen=True)
class Outcome:
    """What the child found for one candidate: passed every check it ran (and ran some), on `samples` samples."""

    candidate: Candidate
    passed: bool
    samples: int = 0


def choose(outcomes: Sequence[Outcome]) -> Outcome | None:
    """The repair to offer: the one candidate that passed; none passed or several did: None (no suggestion)."""
    passed = [o for o in outcomes if o.passed]
    return passed[0] if len(passed) == 1 else None
