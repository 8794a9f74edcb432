"""Saving: gen_variable_type.py's `save_variables` (torch 2.13).

After each node, a function with the kernel's arguments that holds the `grad_fn->… = …;` statements
VariableType's kernel writes for it: the values torchgen saves for a formula's `x.sym_sizes()`,
`x.scalar_type()`… are computed there, so a mistake in one (`dim.sym_sizes()` of an int) breaks
VariableType.cpp, not Functions.cpp.
"""

from __future__ import annotations

import re
from collections.abc import Sequence

from derivls.compile.kernel import kernel_bindings, output_locals
from derivls.compile.sourcemap import FormulaOrigin
from derivls.compile.units import Unit

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.model import SavedAttribute


def _saved_name(arg: SavedAttribute) -> str:
    """The name a SavedAttribute is saved under (a SpecialArgName's own name)."""
    name = arg.nctype.name
    return name if isinstance(name, str) else name.name


def save_statements(saved: Sequence[SavedAttribute], is_output: bool, inplace: bool) -> list[str]:
    """The `grad_fn->… = …;` statements torchgen's `save_variables` writes for these SavedAttributes of a
    function that is not a foreach one (in its order: by name), without their guards."""
    from derivls.aten import cpp_types as t

    tensor_like = (
        t.BaseCType(t.tensorT),
        t.OptionalCType(t.BaseCType(t.tensorT)),
        t.MutRefCType(t.OptionalCType(t.BaseCType(t.tensorT))),
    )
    tensor_lists = (
        t.BaseCType(t.tensorListT),
        t.ListCType(t.OptionalCType(t.BaseCType(t.tensorT))),
        t.BaseCType(t.iTensorListRefT),
    )
    vectors = (
        t.BaseCType(t.intArrayRefT),
        t.BaseCType(t.symIntArrayRefT),
        t.ArrayRefCType(t.BaseCType(t.BaseCppType("at", "Scalar"))),
    )
    stmts: list[str] = []
    for arg in sorted(saved, key=lambda sa: str(sa.nctype.name)):
        name = _saved_name(arg)
        kind, expr = arg.nctype.type, arg.expr
        if kind in tensor_like or (is_output and kind == t.BaseCType(t.scalarT)):
            var = name
            name += "_"
            if var == "self" and inplace:
                stmts.append("if (!original_self.has_value()) original_self = self.clone();")
                var = "original_self.value()"
            if inplace and is_output:
                expr = "SavedVariable(self, true, self.is_view())"
            else:
                expr = f"SavedVariable({var}, {str(is_output).lower()})"
        elif kind in tensor_lists:
            expr = f"make_saved_variable_list({name}, false)"
            name += "_"
        elif kind in vectors:
            expr += ".vec()"
        elif kind == t.BaseCType(t.stringT):
            expr = f"std::string({expr})"
        elif kind == t.OptionalCType(t.BaseCType(t.stringT)):
            expr = f"{expr}.has_value() ? ::std::optional<std::string>(std::string({expr}.value())) : ::std::nullopt"
        stmts.append(f"grad_fn->{name} = {expr};")
    return stmts


def save_function(unit: Unit) -> tuple[str, list[tuple[int, FormulaOrigin, int, int]]] | None:
    """A function with the kernel's parameters and outputs that saves what the node keeps, as
    VariableType's kernel does (the values a formula's `x.sym_sizes()`, `x.scalar_type()`… become are
    computed there, not in Functions.cpp); None for a foreach function or a node without saved values.

    With its text, where a saved value's expression stands verbatim in a backward formula as written:
    (offset in the text, that formula, offset in its text, length) (see SourceMap.add_slice)."""
    info = unit.info
    f = info.func
    if info.name.startswith("_foreach") or not (info.all_saved_inputs or info.all_saved_outputs):
        return None
    inplace = bool(f.func.name.name.inplace)
    bindings = kernel_bindings(f)
    lines = [f"  auto grad_fn = c10::make_intrusive<{info.op}>();"]
    if inplace:
        lines.append("  ::std::optional<at::Tensor> original_self;")
    lines += [f"  {s}" for s in save_statements(info.all_saved_inputs, False, inplace)]
    lines += [f"  {ctype} {name};" for ctype, name in output_locals(f, bindings)]
    lines += [f"  {s}" for s in save_statements(info.all_saved_outputs, True, inplace)]
    params = ", ".join(f"{b.type} {b.name}" for b in bindings)
    ident = re.sub(r"\W", "_", unit.name)
    text = f"[[maybe_unused]] static void {ident}_save({params}) {{\n" + "\n".join(lines) + "\n}\n"
    slices = []
    for arg in (*info.all_saved_inputs, *info.all_saved_outputs):
        name = _saved_name(arg)
        written = f"grad_fn->{name} = {arg.expr}"
        at = text.find(written)
        origin = next((o for o in unit.backward if o is not None and arg.expr in o.original), None)
        if arg.expr != name and at >= 0 and origin is not None:
            slices.append((at + len(written) - len(arg.expr), origin, origin.original.index(arg.expr), len(arg.expr)))
    return text, slices
