"""Every name of a formula resolved against what the generated C++ has in scope → findings.

A finding is plain data (offsets into the formula text); hook.py turns it into a located
diagnostic. Codes:
  formula-unknown-name       a name nothing declares (closest names as suggestions)
  formula-unknown-method     a `.name(` / `->name(` no Tensor or documented non-Tensor type has; or
                             `x.name` where x is a Tensor (an optional Tensor in a forward formula)
                             whose type has no member `name`
  formula-unknown-qualified  `at::x`, `std::x`, `c10::x` that the namespace does not have
  formula-grad-in-forward    grad / grads / grad_<output> in a forward formula
  formula-tangent-in-backward <arg>_t / <arg>_p in a backward formula
  formula-result-not-output  `result` where the outputs are named or several
  formula-grad-input-mask-single grad_input_mask in a formula for a single input
  formula-unbalanced         an unbalanced bracket; formula-unterminated: an unclosed literal/comment
  formula-adl-no-tensor      an unqualified ATen call in a backward formula whose arguments hold no Tensor
                             (a warning; an error where every argument's type is known)
  formula-not-subscriptable  `x[…]` where `x` is a c10::Scalar or a number
  formula-conditional-types  `c ? a : b` where `a` and `b` are typed and neither converts to the other
  formula-operand-type       `a op b` (arithmetic, comparison) that no operator takes: a c10::Scalar beside
                             anything but a Tensor, a std::optional or a list in arithmetic (see operators.py)
  formula-result-type        the formula's value where the generated code cannot take it: a tuple for one
                             input, a Tensor for several, a number for a Tensor output (see returns.py)
  formula-python-syntax      `a ** b`, `a // b`, `a if c else b`, `torch.f` (see syntax.py)
  formula-member-not-called  `x.name` without a call where `name` is a member function of what `x` holds
  formula-ambiguous-name     `complex(real_t, imag_t)` in a forward formula: VariableType.cpp finds at::complex
                             and c10::complex (headers.FORWARD_AMBIGUOUS)
  formula-local-called       `real(grad)` where `real` is a local (an argument of complex(Tensor real, …)):
                             it hides the function, and no local can be called
  formula-index-out-of-range `grad_input_mask[k]` / `grads[k]` past the inputs / outputs (a warning)
  formula-not-bool           `grad ? a : b`, `!self`, `grad && x`: a Tensor, a c10::Scalar or a list where C++
                             wants a bool (see operators.py)
  formula-saved-call-qualified `at::zeros_like(self)` and the like: load_derivatives' substitution of
                             `zeros_like(self)` leaves `at::self_info.zeros()`
  formula-argument-count     a call of a FunctionsManual helper (and nothing else), or of an ATen operator
                             (at::f, f found by ADL, a Tensor's method), with a number of arguments none
                             of its overloads takes
  formula-symint-to-int      a SymInt list (`x.sym_sizes()`, a `SymInt[]` argument) passed to an ATen
                             function or method under its plain name, which takes IntArrayRef there
                             (the `_symint` name takes SymIntArrayRef)
  formula-int-to-symint      an int list (an `int[]` argument) passed to a `_symint` name
                             where every overload that fits the call takes SymIntArrayRef
  formula-argument-type, formula-argument-count, formula-unknown-name also for the calls load_derivatives
                             evaluates in VariableType.cpp and saves (`to_args_sizes(x)`, `TensorGeometry(x)`,
                             `zeros_like(x)`: see savedcalls.py)
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import replace

from derivls.codes.formula import (
    FORMULA_ADL_NO_TENSOR,
    FORMULA_AMBIGUOUS_NAME,
    FORMULA_ARGUMENT_COUNT,
    FORMULA_ARGUMENT_TYPE,
    FORMULA_CONDITIONAL_TYPES,
    FORMULA_GRAD_IN_FORWARD,
    FORMULA_GRAD_INPUT_MASK_SINGLE,
    FORMULA_INDEX_OUT_OF_RANGE,
    FORMULA_INT_TO_SYMINT,
    FORMULA_LOCAL_CALLED,
    FORMULA_MEMBER_NOT_CALLED,
    FORMULA_NOT_BOOL,
    FORMULA_NOT_SUBSCRIPTABLE,
    FORMULA_OPERAND_TYPE,
    FORMULA_PYTHON_SYNTAX,
    FORMULA_RESULT_NOT_OUTPUT,
    FORMULA_RESULT_TYPE,
    FORMULA_SAVED_CALL_QUALIFIED,
    FORMULA_SYMINT_TO_INT,
    FORMULA_TANGENT_IN_BACKWARD,
    FORMULA_UNBALANCED,
    FORMULA_UNKNOWN_METHOD,
    FORMULA_UNKNOWN_NAME,
    FORMULA_UNKNOWN_QUALIFIED,
    FORMULA_UNTERMINATED,
)
from derivls.derivatives.formulas import argtypes, operators, returns, savedcalls, syntax
from derivls.derivatives.formulas.headers import (
    ARRAYREF_METHODS,
    CMATH_ARITY,
    FORWARD_AMBIGUOUS,
    KEYWORDS,
    KNOWN_AT,
    KNOWN_C10,
    KNOWN_STD,
    MATH_MACROS,
    OPTIONAL_METHODS,
    SCALAR_METHODS,
    VECTOR_METHODS,
    Declaration,
    HeaderIndex,
    TypedOverload,
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
from derivls.derivatives.formulas.tokens import Token, matching_brackets, tokenize
from derivls.derivatives.saved import TORCHGEN_REPLACEMENTS
from derivls.diagnostics import Code, Severity
from derivls.frozen import frozen_dataclass

ERROR, WARNING = Severity.ERROR, Severity.WARNING

# Tensor methods whose result is not a Tensor (so it gives no argument-dependent lookup into at::).
NON_TENSOR_METHODS = frozenset(
    "options sizes sym_sizes size sym_size strides sym_strides stride sym_stride dim numel sym_numel scalar_type dtype "
    "device layout is_complex is_floating_point defined requires_grad is_contiguous item toDouble toLong has_value "
    "is_sparse is_meta is_cuda storage_offset sym_storage_offset ndimension element_size nbytes".split()
)
_NOT_DECL_BEFORE = frozenset({"return", "else", "case", "new", "delete", "throw", "typename", "template", "operator"})
_SUFFIX = re.compile(r"^(\w+)_([tp])$")


@frozen_dataclass
class Finding:
    code: Code
    severity: Severity  # the code's own, or an error where a warning code is certain
    start: int
    end: int
    message: str
    suggestions: tuple[str, ...] = ()  # replacements of start..end
    rewrites: tuple[Rewrite, ...] = ()  # other fixes: edits elsewhere in the formula
    related: tuple[tuple[str, int, str], ...] = ()  # (file, 0-based line, message): e.g. the declarations


@frozen_dataclass
class Rewrite:
    """A fix that replaces formula[start:end] with `text` (offsets into the formula, like a Finding's)."""

    title: str
    start: int
    end: int
    text: str


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


def _closest(word: str, candidates: set[str] | frozenset[str] | list[str], n: int = 3) -> tuple[str, ...]:
    import difflib

    return tuple(difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6))


def resolve(formula: str, scope: Scope, headers: HeaderIndex | None) -> list[Finding]:
    tokens, problems = tokenize(formula)
    findings = [
        Finding(
            FORMULA_UNBALANCED if p.code == "unbalanced-bracket" else FORMULA_UNTERMINATED,
            ERROR,
            p.start,
            p.end,
            p.message,
        )
        for p in problems
    ]
    pairs = matching_brackets(tokens)
    declared = declared_names(tokens, pairs)
    for i, t in enumerate(tokens):
        if t.kind != "ident" or t.text in KEYWORDS:
            continue
        prev = tokens[i - 1].text if i else ""
        nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
        if prev == "->":  # members of pointers: only where the receiver's type is known (see _arrow_member)
            if headers is not None and (finding := _arrow_member(tokens, i, scope, headers, declared)) is not None:
                findings.append(finding)
            continue
        if prev == ".":
            if i >= 2 and syntax.names_a_namespace(tokens, i - 2, declared, scope.locals):
                continue  # `torch.f`: formula-python-syntax (f is the namespace's, not a method)
            if (
                headers is not None
                and headers.has_tensor_methods
                and headers.native_complete
                and not headers.is_method(t.text)
            ):
                cands = headers.tensor_method_names()
                python = PYTHON_ATTRIBUTES.get(t.text)
                findings.append(
                    Finding(
                        FORMULA_UNKNOWN_METHOD,
                        ERROR,
                        t.start,
                        t.end,
                        f"No Tensor method (nor method of std::optional, c10::Scalar, ArrayRef, "
                        f"SymInt) is named '{t.text}'."
                        + (f" (Python's '.{t.text}' is '.{python}' in C++.)" if python else ""),
                        (python,) if python else _closest(t.text, cands),
                    )
                )
            elif headers is not None:
                finding = _receiver_method(tokens, i, scope, headers, declared)
                if finding is not None:
                    findings.append(finding)
            continue
        if prev == "::":
            if (
                scope.backward
                and t.text in SAVED_CALLS_OF_ARGUMENTS
                and (finding := _qualified_saved_call(formula, tokens, i, scope))
            ):
                findings.append(finding)
                continue
            findings.extend(_qualified(tokens, i, headers))
            if t.text in CMATH_ARITY and nxt == "(" and i + 1 in pairs and i >= 2 and tokens[i - 2].text == "std":
                if (finding := _math_arity(tokens, i, pairs[i + 1], headers, qualified=True)) is not None:
                    findings.append(finding)
            continue
        if nxt == "::":
            continue  # a namespace or class qualifier
        if t.text in declared:
            continue
        if nxt == "." and syntax.names_a_namespace(tokens, i, declared, scope.locals):
            continue  # `math.pi`: formula-python-syntax
        finding = _unqualified(tokens, i, pairs, scope, headers, declared)
        if finding is not None:
            findings.append(finding)
    calls: _Calls | None = None
    if headers is not None and headers.native_complete:
        calls = _Calls(
            tokens,
            pairs,
            scope,
            headers,
            declared,
            *_call_sites(tokens, pairs, scope, headers, declared),
        )
        if calls.sites and _has_list(tokens, scope, _SYMINT_LIST_METHODS, _SYMINT_LISTS):
            findings.extend(_symint_to_int(calls))
        if calls.sites and _has_list(tokens, scope, _INT_LIST_METHODS, _INT_LISTS):
            findings.extend(_int_to_symint(calls))
        if (calls.sites or calls.members) and headers.has_tensor_methods:
            findings.extend(_aten_arity(calls))
        if headers.has_tensor_methods and headers.has_helpers:
            findings.extend(_argument_types(calls))
        findings.extend(_operand_types(calls))
        if headers.has_helpers and scope.targets and not scope.foreach and "?" not in formula:
            findings.extend(_result_type(calls))  # (a conditional's branches: formula-conditional-types)
        if any(f.code == FORMULA_ADL_NO_TENSOR for f in findings):
            findings = _certain_adl(calls, findings)
        if "?" in formula:
            findings.extend(_conditional_types(calls))
        if "?" in formula or "!" in formula or "&&" in formula or "||" in formula:
            findings.extend(_not_bool(calls))
    if scope.backward and not scope.foreach and "[" in formula:
        findings.extend(_out_of_range(tokens, scope, declared))
    if "to_args_" in formula or "TensorGeometry" in formula or (scope.backward and "zeros_like(" in formula):
        findings.extend(
            Finding(s.code, ERROR, s.start, s.end, s.message)
            for s in savedcalls.saved_call_slips(formula, tokens, pairs, scope, _arguments)
        )
    if any(mark in formula for mark in _PYTHON_MARKS):
        findings.extend(_python_syntax(formula, tokens, pairs, scope, declared, calls))
    return findings


_PYTHON_MARKS = ("**", "//", "if", "torch.", "at.", "std.", "c10.", "math.", "[")  # (a superset: syntax.py judges)


def _python_syntax(
    formula: str, tokens: list[Token], pairs: dict[int, int], scope: Scope, declared: set[str], calls: _Calls | None
) -> list[Finding]:
    """Python written where C++ is compiled (derivatives/formulas/syntax.py): `**`, `//`, `a if c else b`, `torch.f`."""
    kind = (lambda start, end: _argument_kind(calls, start, end)) if calls is not None else (lambda start, end: None)
    return [
        Finding(
            FORMULA_PYTHON_SYNTAX,
            ERROR,
            s.start,
            s.end,
            s.message,
            rewrites=(Rewrite(*s.fix),) if s.fix is not None else (),
        )
        for s in syntax.python_slips(formula, tokens, pairs, kind, declared, scope.locals)
    ]


_ENDS_A_BRANCH = frozenset({",", ")", "]", "}", ";"})


def _conditional_types(c: _Calls) -> list[Finding]:
    """`cond ? a : b` where `a` and `b` are typed (see _argument_kind) and neither converts to the other's type:
    the conditional operator has no common type for them (`grad.defined() ? grad : 0`)."""
    findings: list[Finding] = []
    tokens = c.tokens
    for q, t in enumerate(tokens):
        if t.text != "?" or t.kind != "punct":
            continue
        colon, depth, nested, end = -1, 0, 0, len(tokens)
        for j in range(q + 1, len(tokens)):
            text = tokens[j].text
            if text in ("(", "[", "{"):
                depth += 1
            elif text in (")", "]", "}") and depth:
                depth -= 1
            elif depth == 0 and colon < 0 and text == "?":
                nested += 1
            elif depth == 0 and colon < 0 and text == ":":
                if nested:
                    nested -= 1
                else:
                    colon = j
            elif depth == 0 and colon >= 0 and text == "?":
                end = -1  # `a ? b : c ? d : e`: the second branch is a conditional itself (judged on its own)
                break
            elif depth == 0 and text in _ENDS_A_BRANCH:
                end = j
                break
        if colon < 0 or colon == q + 1 or end <= colon + 1:
            continue
        a, b = _argument_kind(c, q + 1, colon), _argument_kind(c, colon + 1, end)
        if a is None or b is None:
            continue
        if argtypes.never_converts(a[0], b[0], a[2]) and argtypes.never_converts(b[0], a[0], b[2]):
            first, second = _source(tokens[q + 1 : colon]), _source(tokens[colon + 1 : end])
            findings.append(
                Finding(
                    FORMULA_CONDITIONAL_TYPES,
                    ERROR,
                    tokens[q].start,
                    tokens[q].end,
                    f"The branches of '?:' have no common type: '{first}' ({a[1]}) and '{second}' ({b[1]}) convert "
                    "to neither other.",
                )
            )
    return findings


def _operand_types(c: _Calls) -> list[Finding]:
    """`a op b` (arithmetic or comparison) that no operator takes: a c10::Scalar beside anything but a Tensor, a
    std::optional or a list in arithmetic (derivatives/formulas/operators.py; operands typed as _argument_kind
    types arguments)."""
    findings: list[Finding] = []
    tokens = c.tokens
    if not _may_hold_a_culprit(c):
        return findings
    for o in operators.unmatched_operations(tokens, c.pairs, lambda start, end: _argument_kind(c, start, end)):
        sides = [_source(tokens[start:end]) for start, end in (o.left, o.right)]
        (first, second), culprit = o.kinds, o.kinds[o.culprit]
        start, end = (o.left, o.right)[o.culprit]
        rewrites: tuple[Rewrite, ...] = ()
        if end - start == 1 and tokens[start].kind == "ident":  # a name: convert it where it stands
            name = tokens[start].text
            fix = ".toDouble()" if culprit[0] == argtypes.SCALAR else ".value()" if culprit[0] in _HAS_VALUE else ""
            if fix:
                title = f"Use '{name}{fix}'"
                rewrites = (Rewrite(title, tokens[start].start, tokens[start].end, name + fix),)
        findings.append(
            Finding(
                FORMULA_OPERAND_TYPE,
                ERROR,
                tokens[o.op].start,
                tokens[o.op].end,
                f"No operator '{tokens[o.op].text}' takes '{sides[0]}' ({first[1]}) and '{sides[1]}' ({second[1]}): "
                f"{o.reason}.",
                rewrites=rewrites,
            )
        )
    return findings


def _not_bool(c: _Calls) -> list[Finding]:
    """A `?:` condition, `!`'s or `&&`/`||`'s operand whose type has no conversion to bool (operators.py):
    Python's truthiness (`grad ? a : b` for `grad.defined() ? a : b`)."""
    findings = []
    tokens = c.tokens
    for cond in operators.unconvertible_conditions(tokens, c.pairs, lambda start, end: _argument_kind(c, start, end)):
        start, end = cond.span
        text = _source(tokens[start:end])
        rewrites: tuple[Rewrite, ...] = ()
        hint = ""
        if cond.kind[0] == argtypes.TENSOR:
            hint = f" Test whether it holds a Tensor with '{text}.defined()'."
            rewrites = (
                Rewrite(f"Use '{text}.defined()'", tokens[start].start, tokens[end - 1].end, f"{text}.defined()"),
            )
        findings.append(
            Finding(
                FORMULA_NOT_BOOL,
                ERROR,
                tokens[start].start,
                tokens[end - 1].end,
                f"'{text}' ({cond.kind[1]}) stands where C++ wants a bool, and it has no conversion to bool (C++ has no "
                f"Python truthiness).{hint}",
                rewrites=rewrites,
            )
        )
    return findings


def _out_of_range(tokens: list[Token], scope: Scope, declared: set[str]) -> list[Finding]:
    """`grad_input_mask[k]` past the formula's inputs (a std::array<bool, N>, one flag per name of its key) and
    `grads[k]` past the function's outputs (one gradient per output; not judged with a list output), k a literal:
    an out-of-range read the compiler does not stop (a warning: the build passes, the formula reads garbage)."""
    outputs = [scope.get(name) for name in scope.outputs]
    sizes = {"grad_input_mask": len(scope.targets) if scope.multi_input else None}
    if outputs and all(o is not None and argtypes.category(o.cpp_type) == argtypes.TENSOR for o in outputs):
        sizes["grads"] = len(outputs)
    findings = []
    for i, t in enumerate(tokens[:-3]):
        size = sizes.get(t.text) if t.kind == "ident" and t.text not in declared else None
        if (
            size is None
            or tokens[i + 1].text != "["
            or tokens[i + 3].text != "]"
            or (i and tokens[i - 1].text in (".", "->"))
        ):
            continue
        index = tokens[i + 2]
        if (
            index.kind == "number"
            and argtypes.is_integer_literal(index.text)
            and int(index.text.rstrip("uUlL")) >= size
        ):
            what = (
                f"one flag per input of this formula ({', '.join(scope.targets)})"
                if t.text == "grad_input_mask"
                else f"one gradient per output ({', '.join(scope.outputs)})"
            )
            findings.append(
                Finding(
                    FORMULA_INDEX_OUT_OF_RANGE,
                    WARNING,
                    index.start,
                    index.end,
                    f"'{t.text}' has {size} element(s), {what}: index {index.text} is past its end (the build passes; "
                    "the formula reads past the end at run time).",
                )
            )
    return findings


def _result_type(c: _Calls) -> list[Finding]:
    """The whole formula's value where the generated code cannot put it (derivatives/formulas/returns.py): a tuple
    for one input, a Tensor for several, a number for a Tensor output… (Not called for a conditional.)"""
    tokens, n = c.tokens, len(c.tokens)
    if n == 0:
        return []
    callee, shape = _whole_call(c)
    if shape is None and callee is None:
        kind = _argument_kind(c, 0, n)
        if kind is None or kind[2]:
            return []  # not typed, or the literal 0
        shape = returns.of_family(kind[0], kind[1])
    if shape is None:
        return []
    output = None if c.scope.backward else c.scope.get(c.scope.targets[0])  # (a forward formula's one output)
    output_is_tensor = output is not None and argtypes.category(output.cpp_type) == argtypes.TENSOR
    why = returns.problem(shape, c.scope.backward, c.scope.targets, output_is_tensor)
    if why is None:
        return []
    start, end = (tokens[callee].start, tokens[callee].end) if callee is not None else (tokens[0].start, tokens[-1].end)
    return [Finding(FORMULA_RESULT_TYPE, ERROR, start, end, why)]


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
_BRACED = "braced"  # a braced-init-list argument: argument-dependent lookup ignores it
# Argument types none of whose associated namespaces is at:: (c10::, std::, none): an unqualified call with only
# such arguments finds no ATen function by argument-dependent lookup. (A std::optional may hold an at::Generator.)
_NO_AT_FAMILIES = argtypes.NO_TENSOR | {_BRACED}


def _certain_adl(c: _Calls, findings: list[Finding]) -> list[Finding]:
    """formula-adl-no-tensor findings made errors where the lookup certainly fails: no argument at all, or
    every argument typed (see _argument_kind) and none of a type argument-dependent lookup takes into at::
    (a braced list has no type of its own)."""
    at = {t.start: i for i, t in enumerate(c.tokens) if t.kind == "ident"}
    out = []
    for f in findings:
        i = at.get(f.start)
        if f.code == FORMULA_ADL_NO_TENSOR and i is not None and i + 1 in c.pairs:
            arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1])
            kinds = [
                (_BRACED, "a braced list", False)
                if c.tokens[start].text == "{" and c.pairs.get(start) == end - 1  # no associated namespace at all
                else _argument_kind(c, start, end)
                for start, end in arguments or ()
            ]
            if arguments is not None and all(k is not None and k[0] in _NO_AT_FAMILIES for k in kinds):
                types = ", ".join(k[1] for k in kinds if k is not None) or "no argument"
                f = replace(
                    f,
                    severity=ERROR,
                    message=f"'{c.tokens[i].text}' is an ATen function: without 'at::' a backward formula finds it "
                    f"only by argument-dependent lookup, and none of its arguments' types ({types}) belongs to "
                    f"at::, so the call does not compile: write 'at::{c.tokens[i].text}'.",
                )
        out.append(f)
    return out


# load_derivatives' calls of an argument it saves instead (saved.py's rules `name\({}\)`): `zeros_like(self)`
# → `self_info.zeros()`, `TensorGeometry(self)` → `self_geometry`, `to_args_sizes(xs)` → `xs_args_sizes`…
SAVED_CALLS_OF_ARGUMENTS = {
    m.group(1): rule for rule in TORCHGEN_REPLACEMENTS if (m := re.fullmatch(r"(\w+)\\\(\{\}\\\)", rule.pattern))
}


def _qualified_saved_call(formula: str, tokens: list[Token], i: int, scope: Scope) -> Finding | None:
    """`at::zeros_like(self)`: load_derivatives' substitution matches `zeros_like(self)` after the qualifier too,
    so the generated code reads `at::self_info.zeros()`, which does not compile."""
    t = tokens[i]
    name = savedcalls.replaced_argument(tokens, i, scope)
    if name is None:
        return None  # the pattern is that exact text, of an argument or output (saved.py's rules)
    first = i - 2 if i >= 2 and tokens[i - 2].kind == "ident" else i - 1
    qualifier = formula[tokens[first].start : tokens[i - 1].end]
    rule = SAVED_CALLS_OF_ARGUMENTS[t.text]
    saved = rule.result(name) if rule.result else name + str(rule.suffix)
    return Finding(
        FORMULA_SAVED_CALL_QUALIFIED,
        ERROR,
        tokens[first].start,
        t.end,
        f"load_derivatives saves '{name}' for '{t.text}({name})' and replaces that text with '{saved}', also "
        f"after '{qualifier}': the generated '{qualifier}{saved}' does not compile. Write '{t.text}({name})' "
        "without the qualifier.",
        (t.text,),
    )


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


def _symint_to_int(c: _Calls) -> list[Finding]:
    """A call of an ATen operator's plain C++ name (see _call_sites) given a SymInt list as an argument:
    torchgen declares it with IntArrayRef (and OptionalIntArrayRef) where the schema says `SymInt[]`, and
    `f_symint` with SymIntArrayRef; nothing converts the one into the other."""
    findings: list[Finding] = []
    for i, method in c.sites:
        t = c.tokens[i]
        if t.text.endswith("_symint"):
            continue
        table = c.headers.method_schemas if method else c.headers.at_functions
        for start, end in _arguments(c.tokens, i + 1, c.pairs[i + 1]) or ():
            if not _is_list(c.tokens[start:end], c.scope, c.declared, _SYMINT_LIST_METHODS, _SYMINT_LISTS):
                continue
            what = _source(c.tokens[start:end])
            twin = t.text + "_symint"
            has_twin = twin in table
            fix = f"call '{twin}', which takes SymIntArrayRef" if has_twin else "pass an IntArrayRef (e.g. 'x.sizes()')"
            rewrites = (Rewrite(f"Call '{twin}'", t.start, t.end, twin),) if has_twin else ()
            findings.append(
                Finding(
                    FORMULA_SYMINT_TO_INT,
                    ERROR,
                    t.start,
                    t.end,
                    f"'{t.text}' takes IntArrayRef (its C++ name without '_symint'), and '{what}' is a list of "
                    f"SymInt, which does not convert to it: {fix}.",
                    (),
                    rewrites,
                )
            )
            break
    return findings


def _int_to_symint(c: _Calls) -> list[Finding]:
    """A call of an ATen operator's `_symint` name given an int list where every C++ overload of that name
    that takes this many arguments has a SymIntArrayRef parameter (an int list does not convert to it)."""
    findings: list[Finding] = []
    for i, method in c.sites:
        t = c.tokens[i]
        arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1]) if t.text.endswith("_symint") else None
        if not arguments:
            continue
        fitting = [
            sig.arguments()
            for low, high, sig in c.headers.aten_overloads(t.text, method)
            if low <= len(arguments) <= high
        ]
        for k, (start, end) in enumerate(arguments):
            arg = c.tokens[start:end]
            if not fitting or not _is_list(arg, c.scope, c.declared, _INT_LIST_METHODS, _INT_LISTS):
                continue
            if not all(b[k].type in _SYMINT_LIST_PARAMETERS for b in fitting):
                continue
            what = _source(arg)
            plain = t.text[: -len("_symint")]
            findings.append(
                Finding(
                    FORMULA_INT_TO_SYMINT,
                    ERROR,
                    arg[0].start,
                    arg[-1].end,
                    f"'{t.text}' takes a SymIntArrayRef here, and '{what}' is a list of int64_t, which does not "
                    f"convert to it: pass a SymInt list (e.g. 'x.sym_sizes()') or call '{plain}'.",
                    (),
                )
            )
    return findings


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


def _aten_arity(c: _Calls) -> list[Finding]:
    """A call of an ATen operator or a hand-written Tensor member (see _method_sites) with a number of
    arguments none of the C++ overloads under that name takes."""
    findings: list[Finding] = []
    for i, method in _method_sites(c):
        count = _argument_count(c.tokens, i + 1, c.pairs[i + 1])
        overloads = _overloads(c, i, method)
        if count is None or not overloads or any(o.low <= count <= o.high for o in overloads):
            continue
        t = c.tokens[i]
        ranges = sorted({(o.low, o.high) for o in overloads})
        takes = " or ".join(_arity_text(low, high) for low, high in ranges)
        where = "Tensor method" if method else "ATen function"
        shown = "\n".join(f"  {o.text}" for o in overloads[:MAX_SHOWN_OVERLOADS])
        more = f"\n  … and {len(overloads) - MAX_SHOWN_OVERLOADS} more" if len(overloads) > MAX_SHOWN_OVERLOADS else ""
        findings.append(
            Finding(
                FORMULA_ARGUMENT_COUNT,
                ERROR,
                t.start,
                t.end,
                f"'{t.text}' is called with {count} argument{'s' if count != 1 else ''}, but the {where}'s C++ "
                f"overloads take {takes}:\n{shown}{more}",
                (),
            )
        )
    return findings


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


def _mismatch(kinds: list[tuple[str, str, bool] | None], overload: TypedOverload) -> int | None:
    """The first argument no implicit conversion takes to its parameter of `overload`, if any."""
    for k, kind in enumerate(kinds):
        if kind is not None and k < len(overload.families):
            family, _, zero = kind
            if argtypes.never_converts(family, overload.families[k], zero):
                return k
    return None


_WHAT = {
    True: "the Tensor method's C++ overloads",
    False: "the ATen function's C++ overloads",
    None: "FunctionsManual.h's declarations",
}


def _argument_types(c: _Calls) -> list[Finding]:
    """A call of a helper or an ATen operator (see _typed_calls) where every overload that takes this many
    arguments has a parameter the argument passed to it can never convert to (derivatives/formulas/argtypes.py:
    a Tensor for a number, an int list for a Tensor, …)."""
    findings: list[Finding] = []
    for i, method in _typed_calls(c):
        arguments = _arguments(c.tokens, i + 1, c.pairs[i + 1])
        if not arguments:
            continue
        kinds = [_argument_kind(c, start, end) for start, end in arguments]
        if all(k is None for k in kinds):
            continue
        t = c.tokens[i]
        fitting = [o for o in _overloads(c, i, method) if o.low <= len(arguments) <= o.high]
        mismatches = [(o, _mismatch(kinds, o)) for o in fitting]
        if not fitting or any(k is None for _, k in mismatches):
            continue
        overload, k = mismatches[0]
        assert k is not None
        start, end = arguments[k]
        kind = kinds[k]
        assert kind is not None
        text = _source(c.tokens[start:end])
        if len(fitting) == 1:
            where = (c.tokens[start].start, c.tokens[end - 1].end)
            message = (
                f"'{text}' ({kind[1]}) does not convert to {overload.parameters[k].strip()}, argument {k + 1} of "
                f"'{t.text}' ({_WHAT[method]}):\n  {overload.text}"
            )
        else:
            where = (t.start, t.end)
            reasons = "\n".join(
                f"  {o.text}  — argument {m + 1} '{_source(c.tokens[arguments[m][0] : arguments[m][1]])}' "
                f"cannot be {o.parameters[m]}"
                for o, m in mismatches[:MAX_SHOWN_OVERLOADS]
                if m is not None
            )
            message = (
                f"No overload of '{t.text}' that takes {len(arguments)} arguments takes these ({_WHAT[method]}):\n"
                f"{reasons}"
            )
        findings.append(Finding(FORMULA_ARGUMENT_TYPE, ERROR, where[0], where[1], message, ()))
    return findings


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


def _arrow_member(
    tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Finding | None:
    """`x->name`: on a forward formula's `Tensor?` argument (a std::optional) it reaches the Tensor, so `name`
    must be a Tensor method; a Tensor, a list, a Scalar or a number is not a pointer at all (a backward
    formula's `Tensor?` argument is unpacked into a Tensor). In a backward formula, `x->sym_sizes()` as that
    exact text is load_derivatives' to rewrite (saved.py: `x_sym_sizes_opt`), not judged."""
    if scope.backward and _saved_arrow(tokens, i):
        return None
    local = _known_receiver(tokens, i, scope, headers, declared)
    if local is None:
        return None
    holds, t, receiver = local.holds, tokens[i], local.name
    if holds == OPTIONAL_TENSOR and not headers.is_tensor_method(t.text, False):
        message = f"'{receiver}->' reaches the Tensor in the std::optional, and Tensor has no method '{t.text}'."
        cands = headers.tensor_method_names()
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, _closest(t.text, cands))
    if holds in (TENSOR, VECTOR, ARRAYREF, SCALAR, PRIMITIVE):
        message = f"'{receiver}' is not a pointer (it is a {_holds_what(holds)} here): use '{receiver}.{t.text}'."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, ())
    return None


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


def _described(local: Local) -> str:
    """What a VECTOR, ARRAYREF, SCALAR or OPTIONAL_VALUE local is, for a message."""
    if local.holds == VECTOR:
        return "a std::vector in a backward formula (what the node saves for it)"
    if local.holds == ARRAYREF:
        return f"a c10::ArrayRef in a forward formula (the kernel's {local.cpp_type or 'ArrayRef'})"
    if local.holds == OPTIONAL_VALUE:
        return f"a {local.cpp_type.removeprefix('::') or 'std::optional'} here"
    return "a c10::Scalar here"


def _holds_what(holds: str) -> str:
    return {
        TENSOR: "Tensor",
        VECTOR: "std::vector",
        ARRAYREF: "c10::ArrayRef",
        SCALAR: "c10::Scalar",
        PRIMITIVE: "number",
    }.get(holds, holds)


def _receiver_method(
    tokens: list[Token], i: int, scope: Scope, headers: HeaderIndex, declared: set[str]
) -> Finding | None:
    """`x.name` where `x` is a local whose type derivls knows exactly (scope.Local.holds) and that type has
    no member `name`: a Tensor that is not an optional, or a forward formula's `Tensor?` argument (a
    std::optional) used as a Tensor; also an element `x[...]` of a list whose elements derivls knows
    (see _element). Receivers that are other expressions, members or declared in the formula are not
    judged. (A `_foreach_` entry's formulas are judged like any other: torchgen writes them as they are,
    only `result` in a forward one that never indexes it becomes `result[i]`, and outputs are not judged
    in a forward formula.)"""
    local = _known_receiver(tokens, i, scope, headers, declared)
    if local is None:
        return _uncalled_method(tokens, i, headers)
    receiver, t = local.name, tokens[i]
    if local.holds == TENSOR:
        if headers.is_tensor_method(t.text, scope.backward):
            return _not_called(tokens, i, local)
        cands = headers.tensor_method_names()
        message = f"'{receiver}' is a Tensor here, and Tensor has no method '{t.text}'."
        if scope.backward and t.text in OPTIONAL_METHODS and local.kind != "result":
            message += (
                " In a backward formula an optional Tensor (Tensor?) is the saved Tensor, unpacked: undefined"
                f" when it was absent (test it with '{receiver}.defined()')."
            )
        rewrites: tuple[Rewrite, ...] = ()
        if t.text == "value" and [x.text for x in tokens[i + 1 : i + 3]] == ["(", ")"] and local.kind != "result":
            # a Tensor? in a backward formula is already the Tensor (undefined when absent)
            title = f"Remove '.value()' ('{receiver}' is a Tensor here)"
            rewrites = (Rewrite(title, tokens[i - 1].start, tokens[i + 2].end, ""),)
        suggestions = () if rewrites else _closest(t.text, cands)  # not `values()`: `.value()` was meant
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, suggestions, rewrites)
    if local.holds == PRIMITIVE:
        message = f"'{receiver}' is a {local.cpp_type or 'number'} here, which has no members."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, ())
    if local.holds in (VECTOR, ARRAYREF, SCALAR, OPTIONAL_VALUE):
        members = MEMBERS[local.holds]
        # (`x.sym_sizes()` of a list is saved by the codegen too, but computed by the kernel on its
        # ArrayRef, which has no such member either)
        if t.text in members:
            return _not_called(tokens, i, local)
        message = f"'{receiver}' is {_described(local)}, which has no member '{t.text}'."
        return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, _closest(t.text, members))
    if t.text in OPTIONAL_METHODS:
        return _not_called(tokens, i, local)
    what = "a method" if headers.is_tensor_method(t.text, False) else "no method"
    message = (
        f"'{receiver}' is an optional Tensor (Tensor?) in a forward formula: a std::optional<at::Tensor>, "
        f"which has no member '{t.text}' (Tensor has {what} '{t.text}': call it through "
        f"'{receiver}->{t.text}' or '{receiver}.value().{t.text}')."
    )
    arrow = Rewrite(f"Use '{receiver}->{t.text}'", tokens[i - 1].start, t.end, f"->{t.text}")
    return Finding(FORMULA_UNKNOWN_METHOD, ERROR, t.start, t.end, message, (), (arrow,) if what == "a method" else ())


# Python's Tensor attributes that C++ spells otherwise (a method call)
PYTHON_ATTRIBUTES = {"shape": "sym_sizes()", "ndim": "dim()"}


def _not_called(tokens: list[Token], i: int, local: Local) -> Finding | None:
    """`x.name` not followed by a call, where `name` is a member function of what `x` holds: C++ has no
    properties (`self.numel`, `grad.dtype`); every member of the receivers derivls knows is a function."""
    what = {TENSOR: "an at::Tensor", OPTIONAL_TENSOR: "a std::optional<at::Tensor>"}.get(local.holds)
    return _uncalled(tokens, i, f"a member function of {what or _described(local)} ('{local.name}')")


# data members of a type a formula meets (std::pair's): `x.first` is no method named without a call
DATA_MEMBERS = frozenset({"first", "second"})


def _uncalled_method(tokens: list[Token], i: int, headers: HeaderIndex) -> Finding | None:
    """`(…).name` or `f(…).name` not followed by a call, on a receiver derivls does not type, where `name` is a
    method (headers.is_method: a Tensor's or a listed type's) and no data member: whatever the receiver is, C++
    has no properties."""
    if not headers.has_tensor_methods or not headers.native_complete:
        return None
    if tokens[i].text in DATA_MEMBERS or not headers.is_method(tokens[i].text):
        return None
    return _uncalled(tokens, i, "a method (at::Tensor has it, or a type a formula meets)")


def _uncalled(tokens: list[Token], i: int, what: str) -> Finding | None:
    """formula-member-not-called for the member tokens[i] (`what` it is), unless a call or template arguments follow."""
    if i + 1 < len(tokens) and tokens[i + 1].text in ("(", "<"):
        return None
    t = tokens[i]
    return Finding(
        FORMULA_MEMBER_NOT_CALLED,
        ERROR,
        t.start,
        t.end,
        f"'{t.text}' is {what}: C++ has no properties; call it, '.{t.text}()'.",
        rewrites=(Rewrite(f"Call '{t.text}()'", t.start, t.end, f"{t.text}()"),),
    )


def _qualified(tokens: list[Token], i: int, headers: HeaderIndex | None) -> list[Finding]:
    t = tokens[i]
    if i < 2 or tokens[i - 2].kind != "ident" or (i >= 3 and tokens[i - 3].text == "::"):
        return []  # ::x, a::b::x: only one-level at::/std::/c10:: names are checked
    namespace = tokens[i - 2].text
    if namespace == "at":
        if headers is None or not headers.native_complete or headers.is_at_name(t.text):
            return []
        cands = set(headers.at_functions) | KNOWN_AT
    elif namespace == "std":
        if t.text in KNOWN_STD:
            return []
        cands = set(KNOWN_STD)
        if _closest(t.text, cands) == ():
            return []  # a std name we do not list and nothing close to it: not judged
    elif namespace == "c10":
        if t.text in KNOWN_C10 or (headers is not None and t.text in KNOWN_AT):
            return []
        cands = set(KNOWN_C10)
        if _closest(t.text, cands) == ():
            return []
    else:
        return []
    return [
        Finding(
            FORMULA_UNKNOWN_QUALIFIED,
            ERROR,
            t.start,
            t.end,
            f"'{namespace}::{t.text}' is not declared.",
            tuple(f"{s}" for s in _closest(t.text, cands)),
        )
    ]


def _local_called(tokens: list[Token], i: int, local: Local, headers: HeaderIndex | None) -> Finding:
    """`real(grad)` in the formula for complex(Tensor real, Tensor imag): the local `real` (an argument, output,
    gradient… of the generated code) hides every function of that name, and no local's type can be called."""
    name = tokens[i].text
    what = f"the {local.kind} '{name}'" + (f" ({local.cpp_type})" if local.cpp_type else "")
    suggestions = tuple(
        f"{namespace}::{name}"
        for namespace, has in (
            ("at", headers is not None and name in headers.at_functions),
            ("std", name in CMATH_ARITY or name in ("min", "max")),
        )
        if has
    )
    return Finding(
        FORMULA_LOCAL_CALLED,
        ERROR,
        tokens[i].start,
        tokens[i].end,
        f"'{name}' here is {what}, a local of the generated code: it hides any function named '{name}', and "
        "cannot be called."
        + (" For the function, write " + " or ".join(f"'{s}'" for s in suggestions) + "." if suggestions else ""),
        suggestions,
    )


def _unqualified(
    tokens: list[Token], i: int, pairs: dict[int, int], scope: Scope, headers: HeaderIndex | None, declared: set[str]
) -> Finding | None:
    t = tokens[i]
    name = t.text
    local = scope.get(name)
    if scope.backward:
        m = _SUFFIX.match(name)
        if local is None and m and (m.group(1) in scope.arguments or m.group(1) == "original_self"):
            what = "tangent" if m.group(2) == "t" else "primal"
            return Finding(
                FORMULA_TANGENT_IN_BACKWARD,
                ERROR,
                t.start,
                t.end,
                f"'{name}' (the {what} of '{m.group(1)}') only exists in forward formulas; a backward "
                f"formula uses '{m.group(1)}' itself.",
                (m.group(1),),
            )
        if name == "grad_input_mask" and not scope.multi_input:
            return Finding(
                FORMULA_GRAD_INPUT_MASK_SINGLE,
                ERROR,
                t.start,
                t.end,
                "grad_input_mask only exists in a formula for several inputs ('a, b: …'); for a single "
                "input the formula runs only when that input needs a gradient.",
            )
    else:
        if local is None and (name in ("grad", "grads") or (name.startswith("grad_") and name[5:] in scope.outputs)):
            return Finding(
                FORMULA_GRAD_IN_FORWARD,
                ERROR,
                t.start,
                t.end,
                f"'{name}' only exists in backward formulas; a forward formula uses tangents "
                f"(<input>_t) and primals (<input>_p).",
            )
    if local is not None:
        if i + 1 in pairs and tokens[i + 1].text == "(":  # (a name the formula declares is not judged here)
            if scope.backward or name not in scope.differentiable_inputs:  # (else: forward-uses-base-name)
                return _local_called(tokens, i, local, headers)
            return None
        if local.holds in (SCALAR, PRIMITIVE) and i + 1 < len(tokens) and tokens[i + 1].text == "[":
            what = "a c10::Scalar" if local.holds == SCALAR else f"a {local.cpp_type or 'number'}"
            return Finding(
                FORMULA_NOT_SUBSCRIPTABLE,
                ERROR,
                t.start,
                tokens[pairs[i + 1]].end if i + 1 in pairs else tokens[i + 1].end,
                f"'{name}' is {what} here, which has no operator[]: only lists are indexed.",
            )
        return None
    if name == "result" or re.fullmatch(r"result\d+", name):
        return Finding(
            FORMULA_RESULT_NOT_OUTPUT,
            ERROR,
            t.start,
            t.end,
            f"'{name}' is not an output here: the outputs are named {', '.join(scope.outputs) or '(none)'}.",
            scope.outputs[:3],
        )
    if name == "grad_input_mask":
        return None  # forward formulas: not declared, but reported as unknown below
    if headers is None:
        return None
    nxt = tokens[i + 1].text if i + 1 < len(tokens) else ""
    if nxt == "(" and (i + 1) in pairs and name not in declared:
        overloads = headers.only_helper(name)
        if overloads:
            return _helper_arity(tokens, i, pairs[i + 1], overloads)
        if name in CMATH_ARITY:
            return _math_arity(tokens, i, pairs[i + 1], headers, qualified=False)
        if name == "fmap" and name in headers.using:
            return _fmap_arity(tokens, i, pairs[i + 1])
    if headers.is_unqualified(name):
        return None
    if name in SAVED_CALLS_OF_ARGUMENTS and savedcalls.replaced_argument(tokens, i, scope) is not None:
        return None  # `zeros_like(self)`: load_derivatives' to replace (savedcalls.py judges it)
    if name in headers.at_functions or (nxt == "(" and name in KNOWN_AT):
        if not scope.backward and "at" in headers.forward_namespaces:
            if nxt == "(" and name in FORWARD_AMBIGUOUS:
                return Finding(
                    FORMULA_AMBIGUOUS_NAME,
                    ERROR,
                    t.start,
                    t.end,
                    f"'{name}' is ambiguous in a forward formula: VariableType.cpp finds both at::{name} (the ATen "
                    f"function, through its 'using namespace at;') and {FORWARD_AMBIGUOUS[name]}. Write 'at::{name}'.",
                    (f"at::{name}",),
                )
            return None  # VariableType.cpp's `using namespace at;`: ordinary lookup finds it
        if nxt == "(" and (i + 1) in pairs and not _may_hold_tensor(tokens[i + 2 : pairs[i + 1]], scope, declared):
            return Finding(
                FORMULA_ADL_NO_TENSOR,
                WARNING,  # an error where every argument's type is known (see _adl_certain)
                t.start,
                t.end,
                f"'{name}' is an ATen function reached without 'at::' only through argument-dependent "
                f"lookup, and no argument here is a Tensor: write 'at::{name}'.",
                (f"at::{name}",),
            )
        return None
    if not headers.has_helpers:
        return None  # could be a FunctionsManual helper: not judged without the header
    if not headers.native_complete and nxt == "(":
        return None  # could be an ATen function missing from a native_functions.yaml excerpt
    m = _SUFFIX.match(name)
    if not scope.backward and m and m.group(1) in scope.arguments:
        return Finding(
            FORMULA_UNKNOWN_NAME,
            ERROR,
            t.start,
            t.end,
            f"'{name}' is not defined: '{m.group(1)}' is not a differentiable input here (it is not a "
            "Tensor, or the entry marks it non_differentiable).",
            (),
        )
    candidates = set(scope.locals) | set(headers.helpers) | headers.using
    if not scope.backward:
        candidates -= {"grad", "grads"}
    python = PYTHON_NAMES.get(name)
    return Finding(
        FORMULA_UNKNOWN_NAME,
        ERROR,
        t.start,
        t.end,
        f"'{name}' is not declared: it is neither a local of this formula "
        f"({'backward' if scope.backward else 'forward'}), a FunctionsManual helper, nor an ATen function."
        + (f" (Python's '{name}' is {' or '.join(repr(p) for p in python)} in C++.)" if python else ""),
        python or _closest(name, candidates),
    )


# Python's names that C++ spells otherwise (the suggestions of formula-unknown-name)
PYTHON_NAMES = {
    "True": ("true",),
    "False": ("false",),
    "None": ("Tensor()", "std::nullopt"),  # an undefined Tensor, an empty optional
}


# Names whose `<` opens template arguments (besides capitalised names and members: `x.item<double>()`).
_TEMPLATES = frozenset(
    "vector tuple array optional pair function complex static_cast dynamic_cast reinterpret_cast const_cast "
    "make_optional make_tuple make_pair get to item data_ptr const_data_ptr mutable_data_ptr accessor "
    "packed_accessor32 packed_accessor64 expect_contiguous".split()
)


def _helper_arity(tokens: list[Token], i: int, close: int, overloads: list[Declaration]) -> Finding | None:
    """`helper(args)` with a number of arguments no overload of the FunctionsManual helper takes."""
    count = _argument_count(tokens, i + 1, close)
    if count is None:
        return None
    ranges = sorted({d.arity for d in overloads})
    if any(low <= count <= high for low, high in ranges):
        return None
    t = tokens[i]
    takes = " or ".join(_arity_text(low, high) for low, high in ranges)
    overload = "its overloads take" if len(overloads) > 1 else "it takes"
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        t.start,
        t.end,
        f"'{t.text}' is called with {count} argument{'s' if count != 1 else ''}, but {overload} {takes} "
        f"(FunctionsManual.h).",
        (),
        related=tuple((d.path, d.line, d.text) for d in overloads[:10]),
    )


def _math_arity(
    tokens: list[Token], i: int, close: int, headers: HeaderIndex | None, qualified: bool
) -> Finding | None:
    """`sqrt(…)`, `std::pow(…)`…: a <cmath> function called with a number of arguments none of its overloads
    takes, nor (unqualified: found by argument-dependent lookup) the ATen function's or a helper's of that name."""
    count = _argument_count(tokens, i + 1, close)
    name = tokens[i].text
    ranges: set[tuple[int, float]] = {CMATH_ARITY[name]}
    if not qualified and headers is not None:
        if name in headers.at_functions and headers.native_complete:
            ranges |= {(low, high) for low, high, _ in headers.aten_overloads(name, False)}
        elif name in headers.at_functions:
            return None  # an excerpt of native_functions.yaml: its overloads are not known
        ranges |= {d.arity for d in headers.helpers.get(name, ())}
    if count is None or any(low <= count <= high for low, high in ranges):
        return None
    t = tokens[i]
    takes = " or ".join(_arity_text(low, high) for low, high in sorted(ranges))
    what = f"std::{name}" if qualified else f"'{name}' (<cmath>, or an ATen function found through a Tensor argument)"
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        t.start,
        t.end,
        f"'{name}' is called with {count} argument{'s' if count != 1 else ''}, but {what} takes {takes}.",
        (),
    )


def _fmap_arity(tokens: list[Token], i: int, close: int) -> Finding | None:
    """`fmap(xs, fn)` (ATen/core/functional.h, a using-declaration of Functions.cpp): called without template
    arguments it takes exactly two (its other overloads, `fmap<R>(xs)`, need the result type written)."""
    count = _argument_count(tokens, i + 1, close)
    if count is None or count == 2:
        return None
    return Finding(
        FORMULA_ARGUMENT_COUNT,
        ERROR,
        tokens[i].start,
        tokens[i].end,
        f"'fmap' is called with {count} argument{'s' if count != 1 else ''}, but fmap(inputs, fn) takes 2 "
        "(ATen/core/functional.h: template<class F, class T> auto fmap(const T& inputs, const F& fn); "
        "fmap<R>(inputs) names its result type R).",
    )


def _arity_text(low: int, high: float) -> str:
    if high == float("inf"):
        return f"{low} or more"
    return f"{low}" if low == high else f"{low} to {int(high)}"


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
