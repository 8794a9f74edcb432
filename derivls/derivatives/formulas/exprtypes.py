"""The expression typing the formula rules share: what a formula declares, its calls (`_Calls`, the shared
context of the rules on calls), the type of an argument, an operand, a call's result or a member, the
overloads a call can mean, and the argument lists of a call."""

from __future__ import annotations

import re
from collections.abc import Iterator

from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.formulas import argtypes, operators, returns, savedcalls
from derivls.derivatives.formulas.headers import HeaderIndex, TypedOverload
from derivls.derivatives.formulas.known import (
    ARRAYREF_METHODS,
    KEYWORDS,
    KNOWN_C10,
    KNOWN_STD,
    MATH_MACROS,
    OPTIONAL_METHODS,
    SCALAR_METHODS,
    VECTOR_METHODS,
)
from derivls.derivatives.formulas.scope import (
    ARRAYREF,
    OPTIONAL_TENSOR,
    OPTIONAL_VALUE,
    PRIMITIVE,
    SCALAR,
    TENSOR,
    VECTOR,
    Local,
    Scope,
)
from derivls.derivatives.formulas.tokens import Token
from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS

# Tensor methods whose result is not a Tensor (so it gives no argument-dependent lookup into at::).
NON_TENSOR_METHODS = frozenset(
    "options sizes sym_sizes size sym_size strides sym_strides stride sym_stride dim numel sym_numel scalar_type dtype "
    "device layout is_complex is_floating_point defined requires_grad is_contiguous item toDouble toLong has_value "
    "is_sparse is_meta is_cuda storage_offset sym_storage_offset ndimension element_size nbytes".split()
)


_NOT_DECL_BEFORE = frozenset({"return", "else", "case", "new", "delete", "throw", "typename", "template", "operator"})


_SUFFIX = re.compile(r"^(\w+)_([tp])$")


def declared_names(tokens: list[Token], pairs: dict[int, int]) -> set[str]:
    """Lambda parameters and local declarations (`auto x = …`, `const Tensor& t`) inside the formula."""
    names: set[str] = set()
    for i, t in enumerate(tokens):
        if t.kind == "punct" and t.text == "[" and i in pairs:
            prev = tokens[i - 1] if i else None
            if prev is not None and (prev.kind in ("ident", "string") or prev.text in (")", "]")):
                continue  # a subscript
            close = pairs[i]
            if close + 1 < len(tokens) and tokens[close + 1].text == "(" and close + 1 in pairs:
                end = pairs[close + 1]
                segment: list[Token] = []
                depth = 0
                for tok in tokens[close + 2 : end + 1]:
                    if tok.text in ("(", "[", "{", "<"):
                        depth += 1
                    elif tok.text in (")", "]", "}", ">") and depth:
                        depth -= 1
                    if (tok.text == "," and depth == 0) or tok is tokens[end]:
                        idents = [x for x in segment if x.kind == "ident"]
                        if "=" in [x.text for x in segment]:
                            idents = [x for x in segment[: [x.text for x in segment].index("=")] if x.kind == "ident"]
                        if len(idents) >= 2:
                            names.add(idents[-1].text)
                        segment = []
                    else:
                        segment.append(tok)
        if t.kind != "ident" or i == 0:
            continue
        prev = tokens[i - 1]
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if nxt not in ("=", ";", "{", ",", ")", ":"):
            continue
        if prev.kind == "ident" and prev.text not in _NOT_DECL_BEFORE:
            names.add(t.text)
        elif prev.text in ("&", "*", "&&") and i >= 2 and tokens[i - 2].kind == "ident":
            # `const T& x`, `{ T* x = …`; after `(` or `,` only a type's name makes it one: `(a * b)` and
            # `f(x, a * b)` are products (lambda parameters are taken above)
            before = tokens[i - 3].text if i >= 3 else "("
            if before == "const" and nxt in ("=", ",", ")", ";"):
                names.add(t.text)
            elif before in ("{", ";") and nxt == "=":
                names.add(t.text)
            elif before in ("(", ",") and nxt in ("=", ",", ")", ";") and _names_a_type(tokens[i - 2].text):
                names.add(t.text)
        elif prev.text == ">" and nxt == "=":
            names.add(t.text)  # std::vector<Tensor> v = …
    return names


def _names_a_type(name: str) -> bool:
    """Whether `name` reads as a type's name (`Tensor`, `int64_t`, `auto`), not a variable's."""
    return name in KEYWORDS or name[:1].isupper() and not name.isupper() or name.endswith("_t")


def _whole_call(c: _Calls) -> tuple[int | None, returns.Shape | None]:
    """(index of the callee, the shape of what it returns) when the whole formula is one call of a FunctionsManual
    helper (every declaration that takes that many arguments returns one type) or of an ATen operator (`at::f(…)`,
    `f(…)` found by argument-dependent lookup, `x.f(…)` on a local Tensor; every C++ overload that takes that many
    arguments returns the same); (None, None) when it is no such call."""
    tokens, n = c.tokens, len(c.tokens)
    for i in (0, 2):
        if n < i + 3 or tokens[i].kind != "ident" or tokens[i + 1].text != "(" or c.pairs.get(i + 1) != n - 1:
            continue
        count = _argument_count(tokens, i + 1, n - 1)
        if count is None:
            return i, None
        name = tokens[i].text
        if i == 0 and c.headers.only_helper(name):
            return i, _call_shape(c.headers, name, None, count)
        method = next((m for j, m in c.sites if j == i), None)
        if method is None or (i == 0 and method):
            return i, None
        if i == 2 and not method and (tokens[0].text, tokens[1].text) != ("at", "::"):
            return i, None
        if i == 2 and method:
            receiver = _known_receiver(tokens, i, c.scope, c.headers, c.declared)
            if tokens[1].text != "." or receiver is None or receiver.holds != TENSOR:
                return i, None
        return i, _call_shape(c.headers, name, method, count)
    return None, None


_shapes: dict[tuple[int, str, bool | None, int], tuple[HeaderIndex, returns.Shape | None]] = {}


def _call_shape(headers: HeaderIndex, name: str, method: bool | None, count: int) -> returns.Shape | None:
    """What a call of `name` with `count` arguments returns, when every overload that takes them returns the same
    shape: a FunctionsManual helper's (`method` None: its declared return type) or an ATen operator's (a Tensor
    method or an at:: function: its schema's returns). Memoised per header index."""
    key = (id(headers), name, method, count)
    hit = _shapes.get(key)
    if hit is not None and hit[0] is headers:
        return hit[1]
    shapes: set[returns.Shape | None] = set()
    if method is None:
        for d in headers.only_helper(name):
            low, high = d.arity
            if low <= count <= high:
                shapes.add(returns.of_type(d.text[: d.text.find(name + "(")].strip()))
    else:
        for low, high, sig in headers.aten_overloads(name, method):
            if low <= count <= high:
                shapes.add(returns.of_returns(tuple(sig.func.returns)))
    shape = shapes.pop() if len(shapes) == 1 else None
    if len(_shapes) > 20_000:
        _shapes.clear()
    _shapes[key] = (headers, shape)
    return shape


def _may_hold_a_culprit(c: _Calls) -> bool:
    """Whether the formula names something _argument_kind may type as an operand no operator takes (operators.CULPRITS):
    a local of such a type (a list's elements too), a hand-written Tensor member returning one; else no operation
    of it is unmatched (a cheap test: most formulas have none)."""
    locals_, members, culprits = c.scope.locals, _culprit_members(c.headers), operators.CULPRITS
    for t in c.tokens:
        if t.kind == "ident":
            local = locals_.get(t.text)
            if t.text in members or (local is not None and argtypes.category(local.cpp_type) in culprits):
                return True
    return False


_members_memo: dict[int, tuple[HeaderIndex, frozenset[str]]] = {}


def _culprit_members(headers: HeaderIndex) -> frozenset[str]:
    """The members at::Tensor / at::TensorBase write by hand that return an operators.CULPRITS type (`sizes`)."""
    hit = _members_memo.get(id(headers))
    if hit is not None and hit[0] is headers:
        return hit[1]
    found = frozenset(
        name
        for table in (headers.tensor_members, headers.base_members)
        for name, members in table.items()
        if any(argtypes.category(m.returns) in operators.CULPRITS for m in members)
    )
    _members_memo.clear()
    _members_memo[id(headers)] = (headers, found)
    return found


_HAS_VALUE = frozenset({argtypes.OPTIONAL_NUMBER, argtypes.OPTIONAL_VALUE})


# load_derivatives' calls of an argument it saves instead (saved.py's rules `name\({}\)`): `zeros_like(self)`
# → `self_info.zeros()`, `TensorGeometry(self)` → `self_geometry`, `to_args_sizes(xs)` → `xs_args_sizes`…
SAVED_CALLS_OF_ARGUMENTS = {
    m.group(1): rule for rule in TORCHGEN_REPLACEMENTS if (m := re.fullmatch(r"(\w+)\\\(\{\}\\\)", rule.pattern))
}


@frozen_dataclass(slots=True)
class _Calls:
    """A formula's calls of ATen operators, members and helpers (see _call_sites), with what the rules on them
    read."""

    tokens: list[Token]
    pairs: dict[int, int]
    scope: Scope
    headers: HeaderIndex
    declared: set[str]
    sites: list[tuple[int, bool]]  # (index of the called name, whether it is a method)
    # indices of `x.f(` where `f` is a member TensorBody.h/TensorBase.h write by hand and `x` a known Tensor
    members: list[int]
    helpers: list[int]  # indices of `f(` that can only be a FunctionsManual helper (HeaderIndex.only_helper)


# What a SymInt list is in the generated code: a forward formula's `SymInt[]` (the kernel's
# c10::SymIntArrayRef), a backward one's (the node's std::vector<c10::SymInt>, also what the saved
# `x.sym_sizes()` becomes), and the methods that return one.
_SYMINT_LISTS = frozenset({"c10::SymIntArrayRef", "std::vector<c10::SymInt>"})


_SYMINT_LIST_METHODS = frozenset({"sym_sizes", "sym_strides"})


# ... and an int list: a forward formula's `int[]` (at::IntArrayRef), a backward one's (std::vector<int64_t>).
# (`x.sizes()` and `x.strides()` are refused by load_derivatives before the formula is judged.)
_INT_LISTS = frozenset({"at::IntArrayRef", "std::vector<int64_t>"})


_INT_LIST_METHODS: frozenset[str] = frozenset()


# the C++ parameter types of a `_symint` signature that take a SymInt list (an int list does not convert)
_SYMINT_LIST_PARAMETERS = frozenset({"c10::SymIntArrayRef", "at::OptionalSymIntArrayRef"})


def _call_sites(
    tokens: list[Token], pairs: dict[int, int], scope: Scope, headers: HeaderIndex, declared: set[str]
) -> tuple[list[tuple[int, bool]], list[int], list[int]]:
    """One scan of a formula's calls `name(…)`: (index of the name, whether it is a method) of each call of an
    ATen operator by its C++ name (see _aten_callee); the indices of `x.f(…)` where `f` is a member TensorBody.h
    or TensorBase.h write by hand (`sym_size`, `contiguous`, `to`…) and `x` is known to be a Tensor (see
    _known_receiver); the indices of `f(…)` only a FunctionsManual helper can be."""
    sites: list[tuple[int, bool]] = []
    members: list[int] = []
    helpers: list[int] = []
    for i, t in enumerate(tokens):
        if t.kind != "ident" or i + 1 not in pairs or tokens[i + 1].text != "(":
            continue
        method = _aten_callee(tokens, i, scope, headers, declared)
        if method is not None:
            sites.append((i, method))
        before = tokens[i - 1].text if i else ""
        if before == ".":
            if headers.hand_written(t.text):
                receiver = _known_receiver(tokens, i, scope, headers, declared)
                if receiver is not None and receiver.holds == TENSOR:
                    members.append(i)
        elif before not in ("->", "::") and t.text not in declared and scope.get(t.text) is None:
            if headers.only_helper(t.text):
                helpers.append(i)
    return sites, members, helpers


def _aten_callee(tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]) -> bool | None:
    """Whether the called name `tokens[i]` is an ATen operator's method (True) or at:: function (False), by
    its C++ name: `at::f(…)`, `x.f(…)` / `x->f(…)` (a method TensorBody.h or TensorBase.h does not write
    by hand, which may take anything), `f(…)` that only an ATen function can be (not a local, helper,
    using-declaration or listed name: found by argument-dependent lookup); None: anything else."""
    t = tokens[i]
    before = tokens[i - 1].text if i else ""
    if before == "::":
        if i < 2 or tokens[i - 2].text != "at" or (i >= 3 and tokens[i - 3].text == "::"):
            return None
        return False if t.text in headers.at_functions else None
    if before in (".", "->"):
        return True if not headers.hand_written(t.text) and t.text in headers.method_schemas else None
    if t.text in declared or scope.get(t.text) is not None or headers.is_unqualified(t.text):
        return None
    if t.text in SAVED_CALLS_OF_ARGUMENTS and savedcalls.replaced_argument(tokens, i, scope) is not None:
        return None  # `zeros_like(self)`: load_derivatives' to replace (savedcalls.py judges it)
    if t.text in KNOWN_C10 or t.text in KNOWN_STD:
        return None
    return False if t.text in headers.at_functions else None


def _has_list(tokens: list[Token], scope: Scope, methods: frozenset[str], types: frozenset[str]) -> bool:
    """Whether anything in the formula may be such a list (a call of one of `methods`, a local of one of
    `types`; see _is_list): most formulas hold none."""
    for t in tokens:
        if t.kind == "ident":
            if t.text in methods:
                return True
            local = scope.locals.get(t.text)
            if local is not None and local.cpp_type in types:
                return True
    return False


MAX_SHOWN_OVERLOADS = 6


def _method_sites(c: _Calls) -> Iterator[tuple[int, bool]]:
    """c.sites whose method receivers are known Tensors (`x.f`, not `x->f`), then the member calls."""
    for i, method in c.sites:
        if method:
            receiver = _known_receiver(c.tokens, i, c.scope, c.headers, c.declared)
            if receiver is None or receiver.holds != TENSOR or c.tokens[i - 1].text != ".":
                continue
        yield i, method
    for i in c.members:
        yield i, True


def _overloads(c: _Calls, i: int, method: bool | None) -> tuple[TypedOverload, ...]:
    """The overloads a call may take: a Tensor method's (HeaderIndex.method_overloads), an at:: function's,
    a helper's (method None)."""
    name = c.tokens[i].text
    return c.headers.method_overloads(name) if method else c.headers.typed_overloads(name, method)


def _typed_calls(c: _Calls) -> Iterator[tuple[int, bool | None]]:
    """(index of the called name, True: a Tensor method / False: an at:: function / None: a helper) of each
    call whose callee derivls knows: a FunctionsManual helper, an ATen operator (see _call_sites; a method
    only on a receiver known to be a Tensor)."""
    yield from _method_sites(c)
    for i in c.helpers:
        yield i, None


def _argument_kind(c: _Calls, start: int, end: int) -> tuple[str, str, bool] | None:
    """(argtypes family, the C++ type to name, whether it is the literal 0) of the argument c.tokens[start:end]
    when derivls can type it: a literal, a local of the formula, an element `x[…]` of a list local whose
    elements are known (see _element), the call of an ATen operator that returns one Tensor (see
    _call_result), an arithmetic operation on such arguments (see _operation_kind); None for anything else."""
    if end - start >= 3 and (operands := _operands(c.tokens, start, end)) is not None:
        return _operation_kind(c, operands)
    first, last = c.tokens[start], c.tokens[end - 1]
    if first.kind != "ident" or first.text in ("true", "false"):
        literal = argtypes.literal_category(c.tokens[start:end]) if end - start <= 2 else None
        if literal is None:
            return None
        family, zero = literal
        return family, "a string literal" if family == argtypes.STRING else "a number", zero
    local: Local | None = None
    if (
        end - start == 1
        and first.text in MATH_MACROS
        and first.text not in c.declared
        and c.scope.get(first.text) is None
    ):
        return argtypes.NUMBER, "a double", False
    if end - start == 1:
        local = c.scope.get(first.text) if first.text not in c.declared else None
    elif end - start >= 4 and last.text in ("]", ")"):
        opening = _opening(c.tokens, end - 1)
        if last.text == "]" and opening == start + 1:
            local = _element(c.tokens, end - 1, c.scope, c.declared)
        elif last.text == ")" and (
            opening == start + 1 or (opening == start + 3 and c.tokens[start + 1].text in (".", "::"))
        ):
            returns = _member_result(c.tokens, opening - 1, c.scope, c.headers, c.declared)
            if returns is not None and returns != "Tensor":
                family = argtypes.category(returns)
                return (family, returns, False) if family != argtypes.UNKNOWN else None
            local = _call_result(c.tokens, end - 1, c.scope, c.headers, c.declared)
    if local is None or not local.cpp_type:
        return None
    family = argtypes.category(local.cpp_type)
    return (family, local.cpp_type, False) if family != argtypes.UNKNOWN else None


_ARITHMETIC = frozenset("+ - * /".split())


_OPERAND_END = frozenset({"ident", "number"})


# what ends an operand besides a name or a number; anything else at the top level ends the analysis
_CLOSING = frozenset({")", "]"})


_INTEGRAL = frozenset({"int64_t", "int", "long", "int32_t", "size_t", "uint64_t"})


def _operands(tokens: list[Token], start: int, end: int) -> list[tuple[int, int]] | None:
    """The operand ranges of `a + b * c …` (binary + - * / at the top level of tokens[start:end], and nothing else
    there but names, numbers, `.`, `::` and bracketed parts); None when the range is no such chain."""
    out, begin, depth = [], start, 0
    for j in range(start, end):
        t = tokens[j]
        if t.kind != "punct":
            continue
        if t.text in ("(", "[", "{"):
            depth += 1
        elif t.text in (")", "]", "}"):
            depth -= 1
        elif depth == 0:
            if t.text in (".", "::"):
                continue
            if t.text not in _ARITHMETIC or j == begin:
                return None  # another operator, or a unary one
            before = tokens[j - 1]
            if before.kind not in _OPERAND_END and before.text not in _CLOSING:
                return None
            out.append((begin, j))
            begin = j + 1
    if not out or begin >= end or depth:
        return None
    out.append((begin, end))
    return out


def _operation_kind(c: _Calls, operands: list[tuple[int, int]]) -> tuple[str, str, bool] | None:
    """The family of `a op b op …` (+ - * /) from its operands': with a Tensor and otherwise Tensors, numbers,
    SymInts or Scalars, a Tensor (at::Tensor's operators); SymInts and integers, a c10::SymInt; numbers, a number.
    Anything else (a double with a SymInt: a SymFloat; Scalars alone: no operator) is not typed."""
    kinds = [_argument_kind(c, start, end) for start, end in operands]
    families = set()
    integral = True
    for (start, end), kind in zip(operands, kinds):
        if kind is None:
            return None
        families.add(kind[0])
        if kind[0] == argtypes.NUMBER:
            t = c.tokens[start]
            literal = end - start == 1 and t.kind == "number" and argtypes.is_integer_literal(t.text)
            integral = integral and (literal or kind[1] in _INTEGRAL)
    if argtypes.TENSOR in families and families <= {argtypes.TENSOR, argtypes.NUMBER, argtypes.SYMINT, argtypes.SCALAR}:
        return argtypes.TENSOR, "a Tensor (an operation on one)", False
    if argtypes.SYMINT in families and families <= {argtypes.SYMINT, argtypes.NUMBER} and integral:
        return argtypes.SYMINT, "a c10::SymInt (an operation on one)", False
    if families == {argtypes.NUMBER}:
        return argtypes.NUMBER, "a number (an operation on numbers)", False
    return None


def _source(tokens: list[Token]) -> str:
    """The text of consecutive tokens, a space where the formula has blanks between two (`a / b`, not `a/b`)."""
    return "".join(t.text if k == 0 or tokens[k - 1].end == t.start else " " + t.text for k, t in enumerate(tokens))


def _is_list(
    arg: list[Token], scope: Scope, declared: set[str], methods: frozenset[str], types: frozenset[str]
) -> bool:
    """`x.m()` for m in `methods` (`x.sym_sizes()`), or a local whose C++ type is one of `types`."""
    texts = [t.text for t in arg]
    if len(arg) == 5 and arg[0].kind == "ident" and texts[1] == "." and texts[2] in methods:
        return texts[3:] == ["(", ")"]
    if len(arg) == 1 and arg[0].kind == "ident" and arg[0].text not in declared:
        local = scope.get(arg[0].text)
        return local is not None and local.cpp_type in types
    return False


def _known_receiver(
    tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Local | None:
    """What stands before `tokens[i-1]` (`.` or `->`) when derivls knows what it holds
    (scope.Local.holds): a plain local, or an element `x[...]` of a list local (see _element); else None:
    not judged (see _receiver_method)."""
    if i < 2 or not headers.has_tensor_methods or not headers.native_complete:
        return None
    receiver = tokens[i - 2]
    if receiver.text == "]":
        return _element(tokens, i - 2, scope, declared)
    if receiver.text == ")":
        return _call_result(tokens, i - 2, scope, headers, declared)
    if receiver.kind != "ident" or receiver.text in declared or (i >= 3 and tokens[i - 3].text in (".", "->", "::")):
        return None
    local = scope.get(receiver.text)
    return local if local is not None and local.holds else None


def _element(tokens: list[Token], close: int, scope: Scope, declared: set[str]) -> Local | None:
    """`x[...]` ending at `tokens[close]`, where `x` is a local list whose elements derivls knows: `grads`
    (a variable_list), a backward formula's saved `Tensor[]` / `int[]` (std::vectors: also a foreach
    entry's lists, which its node unpacks so), a forward formula's `int[]` (an IntArrayRef), a `Scalar[]`
    (ArrayRef or std::vector of c10::Scalar). A forward formula's `Tensor[]` is not judged (see scope.py)."""
    open_ = _opening(tokens, close)
    name = open_ - 1
    if open_ <= 0 or tokens[name].kind != "ident" or tokens[name].text in declared:
        return None
    if name >= 1 and tokens[name - 1].text in (".", "->", "::"):
        return None
    local = scope.get(tokens[name].text)
    return element_of(local, scope, "".join(t.text for t in tokens[name : close + 1])) if local else None


def _opening(tokens: list[Token], close: int) -> int:
    """The index of the bracket `tokens[close]` (`)` or `]`) closes; -1 when none does."""
    closing = tokens[close].text
    opening = "(" if closing == ")" else "["
    depth = 0
    for j in range(close, -1, -1):
        text = tokens[j].text
        depth += text == closing
        depth -= text == opening
        if depth == 0:
            return j
    return -1


def _call_result(
    tokens: list[Token], close: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Local | None:
    """`f(…)` ending at `tokens[close]` when it is a Tensor: a call of an ATen operator (`at::f`, `f` found
    by argument-dependent lookup, `x.f` on a receiver known to be a Tensor; see _call_sites) all of
    whose overloads under that name that take this many arguments return one Tensor; or of a member at::Tensor
    writes by hand that returns one (see _member_result)."""
    open_ = _opening(tokens, close)
    callee = open_ - 1
    if open_ >= 0 and (open_ == 0 or tokens[callee].text in _BEFORE_AN_EXPRESSION):
        return _parenthesized(tokens[open_ + 1 : close], scope, declared)
    if open_ <= 0 or tokens[callee].kind != "ident":
        return None
    returns = _member_result(tokens, callee, scope, headers, declared)
    if returns is not None:
        return Local(f"{tokens[callee].text}(…)", "result", "at::Tensor", TENSOR) if returns == "Tensor" else None
    method = _aten_callee(tokens, callee, scope, headers, declared)
    if method is None or not headers.returns_tensor(tokens[callee].text, method, _argument_count(tokens, open_, close)):
        return None
    if method:
        receiver = _known_receiver(tokens, callee, scope, headers, declared)
        if receiver is None or receiver.holds != TENSOR or tokens[callee - 1].text != ".":
            return None
    return Local(f"{tokens[callee].text}(…)", "result", "at::Tensor", TENSOR)


# what may stand before a parenthesized expression (not a call, a cast, a lambda's parameters; not `>`, which may
# close template arguments: `static_cast<int64_t>(a + b)`)
_BEFORE_AN_EXPRESSION = frozenset("( , + - * / % < <= >= == != && || ! ? : = & | ^ return".split())


_TENSOR_OPERATORS = frozenset("+ - * / < > <= >= == != & | ^".split())  # at::Tensor's, with a Tensor or Scalar


def _parenthesized(inner: list[Token], scope: Scope, declared: set[str]) -> Local | None:
    """`(a op b)` or `(-a)` where `op` is an arithmetic, comparison or bitwise operator and the operands are a
    local known to be a Tensor and a Tensor, a number or a Scalar: a Tensor (at::Tensor's operators)."""
    if len(inner) == 2 and inner[0].text == "-":
        operands = [inner[1]]
    elif len(inner) == 3 and inner[1].text in _TENSOR_OPERATORS:
        operands = [inner[0], inner[2]]
    else:
        return None
    holds = []
    for t in operands:
        if t.kind == "number":
            holds.append(PRIMITIVE)
            continue
        local = scope.get(t.text) if t.kind == "ident" and t.text not in declared else None
        if local is None or local.holds not in (TENSOR, SCALAR, PRIMITIVE):
            return None
        holds.append(local.holds)
    if TENSOR not in holds:
        return None
    return Local(f"({_source(inner)})", "result", "at::Tensor", TENSOR)


# What c10::Scalar's members return (c10/core/Scalar.h), for those whose result is typed.
SCALAR_RESULTS = {
    "toDouble": "double",
    "toFloat": "float",
    "toLong": "int64_t",
    "toInt": "int",
    **dict.fromkeys(("toBool", "isComplex", "isFloatingPoint", "isIntegral", "isBoolean"), "bool"),
    **dict.fromkeys(("conj", "log"), "c10::Scalar"),
    "toSymInt": "c10::SymInt",
}


def _member_result(
    tokens: list[Token], callee: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> str | None:
    """What `x.f(…)` returns when `f` is a member TensorBody.h / TensorBase.h write by hand, `x` a known Tensor
    and every overload of `f` (see HeaderIndex.method_overloads) returns the same type: its C++ type as
    written (`Tensor`, `c10::SymInt`, `IntArrayRef`…); or a c10::Scalar's conversion (SCALAR_RESULTS) on a
    local known to be one; None otherwise."""
    name = tokens[callee].text
    if name in SCALAR_RESULTS and callee >= 2 and tokens[callee - 1].text == ".":
        scalar = _known_receiver(tokens, callee, scope, headers, declared)
        if scalar is not None and scalar.holds == SCALAR:
            return SCALAR_RESULTS[name]
    if callee < 2 or tokens[callee - 1].text != "." or not headers.hand_written(name):
        return None
    overloads = headers.method_overloads(name)
    if not overloads or (name in headers.method_schemas and not headers.returns_tensor(name, True)):
        return None
    receiver = _known_receiver(tokens, callee, scope, headers, declared)
    if receiver is None or receiver.holds != TENSOR:
        return None
    returns = {r.replace("at::", "") for r in headers.member_returns(name)}
    if name in headers.method_schemas:
        returns.add("Tensor")
    return returns.pop() if len(returns) == 1 else None


def element_of(local: Local, scope: Scope, text: str) -> Local | None:
    """What an element of the list local `local` holds, as a Local named `text` (`x[i]`); None: not known."""
    element = _ELEMENTS.get(local.cpp_type)
    if element is None or (element[0] == TENSOR and not scope.backward):
        return None
    return Local(text, "element", element[1], element[0])


# The element of a list local, by its C++ type (scope.Local.cpp_type): (what it holds, its C++ type).
_ELEMENTS = {
    "variable_list": (TENSOR, "at::Tensor"),
    "std::vector<at::Tensor>": (TENSOR, "at::Tensor"),
    "std::vector<int64_t>": (PRIMITIVE, "int64_t"),
    "at::IntArrayRef": (PRIMITIVE, "int64_t"),
    "at::ArrayRef<at::Scalar>": (SCALAR, "at::Scalar"),
}


def _saved_arrow(tokens: list[Token], i: int) -> bool:
    """`x->sym_sizes()` with nothing between its tokens: the text saved.py's rule `{}->sym_sizes\\(\\)` matches."""
    if i < 2 or i + 2 >= len(tokens) or tokens[i].text != "sym_sizes" or tokens[i - 2].kind != "ident":
        return False
    if (tokens[i + 1].text, tokens[i + 2].text) != ("(", ")"):
        return False
    return all(tokens[k].end == tokens[k + 1].start for k in range(i - 2, i + 2))


# The members of what a local holds, where that is a type with a fixed list of them (a Tensor's come
# from the headers, a number has none): what `x.` is judged by and completed with.
MEMBERS = {
    OPTIONAL_TENSOR: OPTIONAL_METHODS,
    OPTIONAL_VALUE: OPTIONAL_METHODS,
    VECTOR: VECTOR_METHODS,
    ARRAYREF: ARRAYREF_METHODS,
    SCALAR: SCALAR_METHODS,
}


# Names whose `<` opens template arguments (besides capitalised names and members: `x.item<double>()`).
_TEMPLATES = frozenset(
    "vector tuple array optional pair function complex static_cast dynamic_cast reinterpret_cast const_cast "
    "make_optional make_tuple make_pair get to item data_ptr const_data_ptr mutable_data_ptr accessor "
    "packed_accessor32 packed_accessor64 expect_contiguous".split()
)


def _argument_count(tokens: list[Token], open_: int, close: int) -> int | None:
    """How many arguments the call whose `(` is tokens[open_] and `)` tokens[close] passes (see _arguments)."""
    ranges = _arguments(tokens, open_, close)
    return None if ranges is None else len(ranges)


def _arguments(tokens: list[Token], open_: int, close: int) -> list[tuple[int, int]] | None:
    """The [start, end) token ranges of the top-level arguments of the call whose `(` is tokens[open_] and
    `)` tokens[close]; None when the commas cannot be told apart for sure (a `<` that may open template
    arguments and is never closed)."""
    if close == open_ + 1:
        return []
    out, start, depth, angles = [], open_ + 1, 0, 0
    for j in range(open_ + 1, close):
        text = tokens[j].text
        if tokens[j].kind != "punct":
            continue
        if text in ("(", "[", "{"):
            depth += 1
        elif text in (")", "]", "}"):
            depth -= 1
        elif depth == 0 and text == "<" and _opens_template(tokens, j):
            angles += 1
        elif depth == 0 and text in (">", ">>") and angles:
            angles = max(angles - len(text), 0)
        elif depth == 0 and text == "," and not angles:
            out.append((start, j))
            start = j + 1
    if angles or depth:
        return None
    out.append((start, close))
    return out


def _opens_template(tokens: list[Token], j: int) -> bool:
    before = tokens[j - 1]
    if before.kind != "ident":
        return False
    return (
        before.text in _TEMPLATES or before.text[:1].isupper() or (j >= 2 and tokens[j - 2].text in ("::", ".", "->"))
    )


def _may_hold_tensor(args: list[Token], scope: Scope, declared: set[str]) -> bool:
    """Could any argument be a Tensor (or a std container of one)? Calls and unknown names: yes."""
    for j, t in enumerate(args):
        if t.kind != "ident" or t.text in KEYWORDS:
            continue
        if t.text in declared:
            return True
        nxt = args[j + 1].text if j + 1 < len(args) else ""
        prev = args[j - 1].text if j else ""
        if prev in (".", "->"):
            if t.text in NON_TENSOR_METHODS:
                continue
            return True
        if nxt in ("(", "[", "->"):
            return True
        if nxt == ".":
            if j + 2 < len(args) and args[j + 2].text in NON_TENSOR_METHODS:
                continue  # x.options(), x.sym_sizes(): the method's result is the argument, not x
            return True
        if prev == "::" or nxt == "::":
            continue  # at::kFloat, c10::nullopt, ScalarType::Float: not Tensors
        local = scope.get(t.text)
        if local is None or local.is_tensor:
            return True
    return False
