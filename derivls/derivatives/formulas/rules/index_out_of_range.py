"""formula-index-out-of-range: `grad_input_mask[k]` / `grads[k]` past the inputs / outputs (a warning)."""

from __future__ import annotations

from derivls.codes.formula import (
    FORMULA_INDEX_OUT_OF_RANGE,
)
from derivls.derivatives.formulas import argtypes
from derivls.derivatives.formulas.findings import WARNING, Finding
from derivls.derivatives.formulas.scope import (
    Scope,
)
from derivls.derivatives.formulas.tokens import Token


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
