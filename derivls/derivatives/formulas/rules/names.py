"""The rules on an unqualified name: formula-unknown-name (closest names as suggestions),
formula-grad-in-forward, formula-tangent-in-backward, formula-result-not-output,
formula-grad-input-mask-single, formula-adl-no-tensor (the warning), formula-ambiguous-name and
formula-local-called."""

from __future__ import annotations

import re

from derivls.codes.formula import (
    FORMULA_ADL_NO_TENSOR,
    FORMULA_AMBIGUOUS_NAME,
    FORMULA_GRAD_IN_FORWARD,
    FORMULA_GRAD_INPUT_MASK_SINGLE,
    FORMULA_LOCAL_CALLED,
    FORMULA_NOT_SUBSCRIPTABLE,
    FORMULA_RESULT_NOT_OUTPUT,
    FORMULA_TANGENT_IN_BACKWARD,
    FORMULA_UNKNOWN_NAME,
)
from derivls.derivatives.formulas import savedcalls
from derivls.derivatives.formulas.declarations import FORWARD_AMBIGUOUS
from derivls.derivatives.formulas.exprtypes import _SUFFIX, SAVED_CALLS_OF_ARGUMENTS, _may_hold_tensor
from derivls.derivatives.formulas.findings import ERROR, WARNING, Finding, _closest
from derivls.derivatives.formulas.headers import HeaderIndex
from derivls.derivatives.formulas.known import CMATH_ARITY, KNOWN_AT
from derivls.derivatives.formulas.rules.argument_count import _fmap_arity, _helper_arity, _math_arity
from derivls.derivatives.formulas.scope import (
    PRIMITIVE,
    SCALAR,
    Local,
    Scope,
)
from derivls.derivatives.formulas.tokens import Token


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
