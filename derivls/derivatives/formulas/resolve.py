"""Every name of a formula resolved against what the generated C++ has in scope → findings: the driver.

A finding is plain data (offsets into the formula text); entry_formulas.py turns it into a located
diagnostic. `resolve` walks the formula's names once (unknown names, methods, qualified names: rules/names.py,
rules/members.py, rules/qualified.py, …), then runs the rules on its calls (exprtypes.Calls: the shared
context of the typing rules) and on its text. One module per rule in rules/ (see rules/__init__.py); each
code and its doc are declared in derivls/codes/formula.py.
"""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_ADL_NO_TENSOR,
    FORMULA_UNBALANCED,
    FORMULA_UNKNOWN_METHOD,
    FORMULA_UNTERMINATED,
)
from derivls.derivatives.formulas import savedcalls, syntax
from derivls.derivatives.formulas.exprtypes import (
    _INT_LIST_METHODS,
    _INT_LISTS,
    _SYMINT_LIST_METHODS,
    _SYMINT_LISTS,
    SAVED_CALLS_OF_ARGUMENTS,
    _arguments,
    _call_sites,
    _Calls,
    _has_list,
    declared_names,
)
from derivls.derivatives.formulas.findings import ERROR, Finding, _closest
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import CMATH_ARITY, KEYWORDS
from derivls.derivatives.formulas.rules.adl_no_tensor import _certain_adl
from derivls.derivatives.formulas.rules.argument_count import _aten_arity, _math_arity
from derivls.derivatives.formulas.rules.argument_type import _argument_types
from derivls.derivatives.formulas.rules.conditional_types import _conditional_types
from derivls.derivatives.formulas.rules.index_out_of_range import _out_of_range
from derivls.derivatives.formulas.rules.int_to_symint import _int_to_symint
from derivls.derivatives.formulas.rules.members import PYTHON_ATTRIBUTES, _arrow_member, _receiver_method
from derivls.derivatives.formulas.rules.names import _unqualified
from derivls.derivatives.formulas.rules.not_bool import _not_bool
from derivls.derivatives.formulas.rules.operand_type import _operand_types
from derivls.derivatives.formulas.rules.python_syntax import _PYTHON_MARKS, _python_syntax
from derivls.derivatives.formulas.rules.qualified import _qualified
from derivls.derivatives.formulas.rules.result_type import _result_type
from derivls.derivatives.formulas.rules.saved_call_qualified import _qualified_saved_call
from derivls.derivatives.formulas.rules.symint_to_int import _symint_to_int
from derivls.derivatives.formulas.scope import (
    Scope,
)
from derivls.derivatives.formulas.tokens import matching_brackets, tokenize


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
        if headers.has_helpers and scope.targets and (not scope.foreach or not scope.backward) and "?" not in formula:
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
