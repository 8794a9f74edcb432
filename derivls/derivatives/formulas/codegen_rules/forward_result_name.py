"""codegen-forward-result-named-output: a forward formula keyed `result` for a function whose one output the
VariableType kernel declares by another name (gen_variable_type.py emit_fw_derivatives writes the key's names;
the kernel declares cpp.return_names). Not for an in-place function (its forward code names `self`)."""

from __future__ import annotations

from collections.abc import Iterator

from derivls.aten import cpp
from derivls.aten.schema import SchemaKind
from derivls.base.diagnostics import Diagnostic, error
from derivls.codes.codegen import CODEGEN_FORWARD_RESULT_NAMED_OUTPUT
from derivls.derivatives.formulas.codegen_rules.context import OverloadContext


def check(o: OverloadContext) -> Iterator[Diagnostic]:
    if o.inplace or o.f.func.kind() == SchemaKind.out:  # (an out= function's kernel forbids forward AD)
        return
    names = list(cpp.return_names(o.f))
    if len(names) != 1 or names[0] == "result":
        return
    for key in o.at.forward:
        if tuple(key.var_names) == ("result",):
            yield error(
                key.item.key.span,
                CODEGEN_FORWARD_RESULT_NAMED_OUTPUT,
                f"The forward formula is keyed 'result', but the VariableType kernel of {o.label} declares its "
                f"output as '{names[0]}': the forward-mode code it writes reads 'result', which is not declared. "
                f"Key the formula '{names[0]}'.",
            )
