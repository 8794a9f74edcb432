"""What a VariableType kernel declares, as gen_variable_type.py (torch 2.13) writes it: its parameters
(the function's faithful, SymInt-typed C++ arguments) and a local for each output they do not name.

The saving functions (saving.py) and the forward-mode kernels (forward.py) both open with them."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.aten.cpp_types import Binding
    from derivls.aten.native import NativeFunction


def kernel_bindings(f: NativeFunction) -> list[Binding]:
    """A VariableType kernel's parameters: the function's faithful C++ arguments, SymInt-typed."""
    from derivls.aten import cpp

    return cpp.arguments(
        f.func.arguments,
        faithful=True,
        symint=True,
        method=False,
        cpp_no_default_args=frozenset(),
        use_const_ref_for_mutable_tensors=f.use_const_ref_for_mutable_tensors,
        use_ilistref_for_tensor_lists=False,
    )


def output_locals(f: NativeFunction, bindings: list[Binding]) -> list[tuple[str, str]]:
    """(C++ type, name) of each output the kernel declares as a local: those no parameter names, once each."""
    from derivls.aten import cpp

    declared = {b.name for b in bindings}
    locals_: list[tuple[str, str]] = []
    for name, ret in zip(cpp.return_names(f), f.func.returns):
        if name in declared:
            continue
        locals_.append((cpp.return_type(ret, symint=True).remove_const_ref().cpp_type(), name))
        declared.add(name)
    return locals_
