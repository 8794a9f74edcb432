"""A formula where the generated code puts it: one expression, in exactly that C++ context (formula-context).

torchgen pastes a formula's text into generated C++ (2.13; earlier releases differ only in the `if` around):
- backward, one input that is a `Tensor` or `Tensor?` argument, no `not_implemented` in the formula
  (gen_autograd_functions.py emit_derivative): `auto grad_result = any_grad_defined ? (F) : Tensor();`
- backward in a `_foreach_` entry, one input (DERIVATIVE_SINGLE_FOREACH): `grad_result.emplace_back(F);`
- the backward formula of an entry whose forward formula is `auto_element_wise` (load_derivatives), also:
  `x_new_fw_grad_opt = (F').conj();` where F' is F with `grad` → `self_t.conj()`, arguments → `<arg>_p`
- any other backward formula (DERIVATIVE_SINGLE, DERIVATIVE_MULTI): `auto grad_result = F;`
- forward (FW_DERIVATIVE_TEMPLATE, FW_DERIVATIVE_FOREACH_TEMPLATE): `x_new_fw_grad_opt = F;`, `v[i] = F;`

What none of them can hold, outside a lambda's body (a lambda's parameters and body hold declarations
and statements):
- a statement terminator `;` inside brackets, or anywhere where F is inside an expression; where F ends a
  statement (`auto grad_result = F;`, `x = F;`) a trailing `;` is an empty statement (a warning) and one in the
  middle starts another statement (a warning: the build may accept it, it is never meant);
- a statement keyword (`return`, `for`, `while`, `do`, `switch`, `case`, `break`, `continue`, `goto`, `try`,
  `catch`) or a declaration's `auto`/`static`/`using`/`typedef`: no expression starts with one;
- a top-level comma where the context takes one expression: `emplace_back(a, b)` calls a constructor
  at::Tensor does not have; `auto grad_result = a, b;` declares `b` (an error unless `b` has the shape of a
  declarator with an initializer, `b(x)`, `b{x}`, `b = x`); elsewhere it is C++'s comma operator, which
  drops `a` (a warning);
- a character C++ has no token for outside a literal: `#` (a Python comment), `\\` (a Python line
  continuation), `@`, `` ` ``;
- anywhere outside a literal, a lambda's body included: a preprocessor directive's start (`#`, the digraph
  `%:`, a trigraph `??=`), `_Pragma`, `asm` (directives.py): after a line break the build would read a
  directive; derivls compiles no formula that holds one;
- a formula that ends where an operand is still expected: `,` (Python's one-element tuple), `:` (Python's
  block), `.`, `->`, `::`, or a binary operator.
(`a if c else b` and the other Python forms are syntax.py's.)
"""

from __future__ import annotations

from collections.abc import Callable

from derivls.base.frozen import frozen_dataclass
from derivls.codes.formula import FORMULA_CONTEXT
from derivls.codes.model import Severity
from derivls.derivatives.formulas.directives import hazards_in
from derivls.derivatives.formulas.findings import Finding
from derivls.derivatives.formulas.scope import OPTIONAL_TENSOR, TENSOR, Scope
from derivls.derivatives.formulas.tokens import Token, matching_brackets, tokenize

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.results import SectionResult

CODE = FORMULA_CONTEXT

CONDITIONAL = "auto grad_result = any_grad_defined ? (<formula>) : Tensor();"
FOREACH = "grad_result.emplace_back(<formula>);"
ELEMENT_WISE = "<output>_new_fw_grad_opt = (<formula>).conj();  (auto_element_wise)"
DECLARATION = "auto grad_result = <formula>;"
ASSIGNMENT = "<output>_new_fw_grad_opt = <formula>;"
_INSIDE = (CONDITIONAL, FOREACH, ELEMENT_WISE)  # the formula is inside an expression

_STATEMENTS = frozenset(
    "return for while do switch case break continue goto try catch co_return co_yield static_assert".split()
)
_DECLARES = frozenset("auto static using typedef extern register thread_local".split())
_STRAY = frozenset("#\\@`")
# what cannot end an expression (a `>` may close a template's arguments, `)`/`]`/`}` close brackets)
_DANGLING = frozenset(
    ", : . -> :: + - * / % & | ^ = && || == != <= >= << >> ? ! ~ < += -= *= /= %= &= |= ^= <<= >>=".split()
)
# what follows a declarator's name when it has an initializer: `b(x)`, `b{x}`, `b = x`
_INITIALIZES = frozenset({"(", "{", "="})
_LAMBDA_AFTER_PARAMS = frozenset({"{", "mutable", "noexcept", "constexpr", "->"})


@frozen_dataclass
class Slip:
    severity: int  # 1 error, 2 warning
    start: int
    end: int
    message: str


def places(scope: Scope, formula: str, element_wise: bool = False) -> tuple[str, ...]:
    """Where the generated code puts this formula (see the module's doc): one or two of the contexts."""
    if not scope.backward:
        return (ASSIGNMENT,)
    out: list[str] = []
    if len(scope.targets) == 1 and scope.foreach:
        out.append(FOREACH)
    elif len(scope.targets) == 1 and "not_implemented" not in formula and _tensor_or_optional(scope, scope.targets[0]):
        out.append(CONDITIONAL)
    else:
        out.append(DECLARATION)
    if element_wise:
        out.append(ELEMENT_WISE)
    return tuple(out)


def _tensor_or_optional(scope: Scope, name: str) -> bool:
    local = scope.kernel.get(name)
    return local is not None and local.holds in (TENSOR, OPTIONAL_TENSOR)


def tensor_local(scope: Scope) -> Callable[[str], bool | None]:
    """Whether a name of the formula is a local that holds a Tensor (None: not a local of the scope)."""

    def judge(name: str) -> bool | None:
        local = scope.get(name)
        if local is None:
            return None
        return local.holds in (TENSOR, OPTIONAL_TENSOR) or local.cpp_type.removeprefix("const ").startswith(
            "at::Tensor"
        )

    return judge


def context_slips(
    formula: str,
    tokens: list[Token],
    pairs: dict[int, int],
    where: tuple[str, ...],
    is_tensor: Callable[[str], bool | None] = lambda _name: None,
) -> list[Slip]:
    """What the contexts `where` (places()) cannot hold in this formula, errors first for a shared token.
    `is_tensor`: whether a name is a local that holds a Tensor (tensor_local)."""
    if not tokens:
        return []
    code = _in_code(tokens, pairs)
    depth = _depths(tokens)
    found: dict[tuple[int, int], Slip] = {}
    for place in where:
        for slip in _slips(formula, tokens, pairs, code, depth, place, is_tensor):
            old = found.get((slip.start, slip.end))
            if old is None or slip.severity < old.severity:
                found[(slip.start, slip.end)] = slip
    for h in hazards_in(formula, tokens):  # anywhere, a lambda's body included
        if (h.start, h.end) not in found:  # ('#' outside a lambda's body has its own finding)
            found[(h.start, h.end)] = Slip(1, h.start, h.end, _hazard_message(h.message))
    return sorted(found.values(), key=lambda s: (s.start, s.severity))


def _hazard_message(what: str) -> str:
    return (
        f"{what}: a formula is one C++ expression and never needs one. The build pastes the formula into the "
        "generated C++ as it stands (after a line break, a directive); derivls compiles no formula that holds one."
    )


def _slips(
    formula: str,
    tokens: list[Token],
    pairs: dict[int, int],
    code: list[bool],
    depth: list[int],
    place: str,
    is_tensor: Callable[[str], bool | None],
) -> list[Slip]:
    inside = place in _INSIDE
    shown = place.split("  ")[0]
    out: list[Slip] = []
    first_top_semicolon = next(
        (j for j, t in enumerate(tokens) if t.text == ";" and t.kind == "punct" and depth[j] == 0 and not code[j]),
        None,
    )
    for j, t in enumerate(tokens):
        if code[j]:
            continue  # a lambda's parameters or body
        if t.kind == "punct" and t.text in _STRAY:
            what = {
                "#": "'#' (a Python comment?) is no C++ token outside a string: comments are /* … */",
                "\\": "'\\' (a Python line continuation?) is no C++ token outside a string: a formula may span "
                "lines without it",
            }.get(t.text, f"'{t.text}' is no C++ token outside a string or character literal")
            out.append(Slip(1, t.start, t.end, f"{what}. The generated code reads '{shown}'."))
        elif t.kind == "punct" and t.text == ";":
            if depth[j] > 0 or inside:
                out.append(
                    Slip(
                        1,
                        t.start,
                        t.end,
                        "A formula is one C++ expression: ';' ends a statement, and the generated code puts this "
                        f"formula inside an expression: '{shown}'. Leave the ';' out (statements belong in a "
                        "lambda's body: '[&]() { …; return x; }()').",
                    )
                )
            elif j == len(tokens) - 1 or all(x.text == ";" for x in tokens[j + 1 :]):
                out.append(
                    Slip(
                        2,
                        t.start,
                        t.end,
                        f"A formula is one C++ expression; the generated code writes the ';' itself ('{shown}'), so "
                        "this one is an empty statement. Leave it out.",
                    )
                )
            elif j == first_top_semicolon:
                out.append(
                    Slip(
                        2,
                        t.start,
                        t.end,
                        f"A formula is one C++ expression: the generated code ('{shown}') takes what comes before "
                        "this ';' as the formula's value and compiles the rest as other statements.",
                    )
                )
        elif t.kind == "ident" and (
            t.text in _STATEMENTS or (t.text in _DECLARES and not _template_argument(tokens, j))
        ):
            if first_top_semicolon is not None and j > first_top_semicolon and depth[j] == 0 and not inside:
                continue  # a statement after a statement's ';' (that ';' has its finding)
            what = "a statement keyword" if t.text in _STATEMENTS else "a declaration's keyword"
            out.append(
                Slip(
                    1,
                    t.start,
                    t.end,
                    f"'{t.text}' is {what}: a formula is one C++ expression, which the generated code puts in "
                    f"'{shown}'. Write the value itself (statements belong in a lambda's body: "
                    "'[&]() { …; return x; }()').",
                )
            )
    out.extend(_commas(formula, tokens, code, depth, place, first_top_semicolon, is_tensor))
    last = tokens[-1]
    if last.kind == "punct" and last.text in _DANGLING and not code[-1]:
        habit = {",": " (a Python tuple?)", ":": " (a Python block?)"}.get(last.text, "")
        out.append(
            Slip(
                1,
                last.start,
                last.end,
                f"The formula ends with '{last.text}'{habit}, where C++ still expects an operand: the generated "
                f"code reads '{shown}'.",
            )
        )
    return out


def _commas(
    formula: str,
    tokens: list[Token],
    code: list[bool],
    depth: list[int],
    place: str,
    semicolon: int | None,
    is_tensor: Callable[[str], bool | None],
) -> list[Slip]:
    end = semicolon if semicolon is not None and place not in _INSIDE else len(tokens)
    commas = [j for j in range(end) if tokens[j].text == "," and tokens[j].kind == "punct" and depth[j] == 0]
    commas = [j for j in commas if not code[j] and _outside_template(tokens, j, depth)]
    if not commas:
        return []
    shown = place.split("  ")[0]
    out = []
    for k, j in enumerate(commas):
        stop = commas[k + 1] if k + 1 < len(commas) else end
        segment = tokens[j + 1 : stop]
        if not segment:
            continue  # (a trailing ',': the dangling-token finding)
        t = tokens[j]
        if place == FOREACH:
            out.append(
                Slip(
                    1,
                    t.start,
                    t.end,
                    f"A ',' outside brackets makes two arguments of '{shown}': at::Tensor has no constructor that "
                    "takes them. A formula is one expression (several values: 'std::make_tuple(a, b)').",
                )
            )
        elif place == DECLARATION and not _declarator(segment):
            out.append(
                Slip(
                    1,
                    t.start,
                    t.end,
                    f"A ',' outside brackets in '{shown}' starts another declaration, and "
                    f"'{formula[segment[0].start : segment[-1].end]}' is no declarator. A formula is one expression: "
                    "several values are 'std::make_tuple(a, b)'.",
                )
            )
        elif place in (CONDITIONAL, ELEMENT_WISE) and stop == end and _not_a_tensor(segment, is_tensor):
            value = formula[segment[0].start : segment[-1].end]
            out.append(
                Slip(
                    1,
                    t.start,
                    t.end,
                    f"A ',' outside brackets in '{shown}' is C++'s comma operator: the formula's value is "
                    f"'{value}' alone, which is no Tensor. A formula is one expression (several values: "
                    "'std::make_tuple(a, b)').",
                )
            )
        else:
            out.append(
                Slip(
                    2,
                    t.start,
                    t.end,
                    f"A ',' outside brackets in '{shown}' is C++'s comma operator: what comes before it is computed "
                    "and dropped. Several values are 'std::make_tuple(a, b)'.",
                )
            )
    return out


def _not_a_tensor(segment: list[Token], is_tensor: Callable[[str], bool | None]) -> bool:
    """A comma operator's last operand that is surely no Tensor: a literal, or a local that holds something else."""
    if len(segment) != 1:
        return False
    t = segment[0]
    if t.kind in ("number", "string", "char") or t.text in ("true", "false", "nullptr"):
        return True
    return t.kind == "ident" and is_tensor(t.text) is False


def _declarator(segment: list[Token]) -> bool:
    """`b(x)`, `b{x}`, `b = x`, `*b = x`, `&b = x`: the shape of a declarator with an initializer."""
    k = 0
    while k < len(segment) and segment[k].text in ("*", "&", "&&"):
        k += 1
    return k + 1 < len(segment) and segment[k].kind == "ident" and segment[k + 1].text in _INITIALIZES


def _outside_template(tokens: list[Token], j: int, depth: list[int]) -> bool:
    """Whether the top-level `,` at j separates no template arguments (`std::tuple<A, B>()`): no unclosed `<`
    after a name before it at its depth."""
    opened = 0
    for k in range(j - 1, -1, -1):
        if depth[k] != depth[j]:
            continue
        text = tokens[k].text
        if text == ">":
            opened -= 1
        elif text == ">>":
            opened -= 2
        elif text == "<" and k and (tokens[k - 1].kind == "ident" or tokens[k - 1].text == ">"):
            opened += 1
            if opened > 0 and _closes_later(tokens, j, depth):
                return False
    return True


def _closes_later(tokens: list[Token], j: int, depth: list[int]) -> bool:
    return any(tokens[k].text in (">", ">>") and depth[k] == depth[j] for k in range(j + 1, len(tokens)))


def _template_argument(tokens: list[Token], j: int) -> bool:
    return j > 0 and tokens[j - 1].text in ("<", "decltype")


def _depths(tokens: list[Token]) -> list[int]:
    """Each token's bracket depth (an opening bracket is outside itself, its closing one too)."""
    out, depth = [], 0
    for t in tokens:
        if t.kind == "punct" and t.text in ")]}":
            depth = max(depth - 1, 0)
        out.append(depth)
        if t.kind == "punct" and t.text in "([{":
            depth += 1
    return out


def _in_code(tokens: list[Token], pairs: dict[int, int]) -> list[bool]:
    """For each token, whether it is inside a lambda's parameter list or body (where statements and
    declarations are at home)."""
    code = [False] * len(tokens)
    for open_, close in pairs.items():
        if tokens[open_].text == "(" and _lambda_params(tokens, pairs, open_):
            pass
        elif tokens[open_].text == "{" and _lambda_body(tokens, pairs, open_):
            pass
        else:
            continue
        for k in range(open_ + 1, close):
            code[k] = True
    return code


def _introducer(tokens: list[Token], pairs: dict[int, int], close: int) -> bool:
    """Whether tokens[close] is the `]` of a lambda's introducer (its `[` starts an expression)."""
    open_ = next((o for o, c in pairs.items() if c == close), None)
    if open_ is None or tokens[open_].text != "[":
        return False
    before = tokens[open_ - 1] if open_ else None
    return before is None or not (before.kind in ("ident", "number", "string", "char") or before.text in (")", "]"))


def _lambda_params(tokens: list[Token], pairs: dict[int, int], open_: int) -> bool:
    return open_ > 0 and tokens[open_ - 1].text == "]" and _introducer(tokens, pairs, open_ - 1)


def _lambda_body(tokens: list[Token], pairs: dict[int, int], open_: int) -> bool:
    k = open_ - 1
    # a trailing return type, `mutable`, `noexcept`…: back to the `)` of the parameters or the introducer's `]`
    while k >= 0 and tokens[k].text not in (")", "]", "(", "[", "{", "}", ",", ";", "?", ":"):
        k -= 1
    if k < 0:
        return False
    if tokens[k].text == "]":
        return _introducer(tokens, pairs, k)
    if tokens[k].text == ")":
        open_params = next((o for o, c in pairs.items() if c == k), None)
        return open_params is not None and _lambda_params(tokens, pairs, open_params)
    return False


def in_context(formula: str, scope: Scope, section: SectionResult) -> list[Finding]:
    """formula-context findings: what the places the generated code puts `formula` cannot hold (none where its
    brackets or literals are unbalanced: formula-unbalanced / formula-unterminated say that)."""
    tokens, problems = tokenize(formula)
    if problems:  # (the tokens up to an unclosed literal: a directive before it is still one)
        return [
            Finding(CODE, Severity.ERROR, h.start, h.end, _hazard_message(h.message))
            for h in hazards_in(formula, tokens)
        ]
    element_wise = scope.backward and any(
        k.kind == "forward" and k.item.value.value == "auto_element_wise" for k in section.keys
    )
    where = places(scope, formula, element_wise)
    return [
        Finding(CODE, Severity(s.severity), s.start, s.end, s.message)
        for s in context_slips(formula, tokens, matching_brackets(tokens), where, tensor_local(scope))
    ]
