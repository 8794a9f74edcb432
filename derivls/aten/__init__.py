"""The ATen layer: native_functions.yaml schemas, functions and C++ API types, without torch.

* ``derivls.aten.schema``  - torchgen.model's schema classes (FunctionSchema, Type, ...)
* ``derivls.aten.cpp``     - torchgen.api.types + torchgen.api.cpp (C++ types, cpp_arguments)
* ``derivls.aten.native``  - NativeFunction, NativeFunctionsViewGroup, NativeIndex

The most used names are re-exported here lazily, so importing one submodule doesn't pay for
the others (native pulls in PyYAML).
"""

from __future__ import annotations

import importlib

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

_EXPORTS = {
    "FunctionSchema": "schema",
    "OperatorName": "schema",
    "SchemaKind": "schema",
    "Type": "schema",
    "Argument": "schema",
    "Return": "schema",
    "Binding": "cpp",
    "NamedCType": "cpp",
    "cpp_arguments": "cpp",
    "NativeFunction": "native",
    "NativeFunctionsViewGroup": "native",
    "NativeIndex": "native",
    "NativeIndexError": "native",
    "Variant": "native",
}

__all__ = sorted(_EXPORTS)


def __getattr__(name: str) -> Any:
    mod = _EXPORTS.get(name)
    if mod is None:
        raise AttributeError(f"module 'derivls.aten' has no attribute {name!r}")
    return getattr(importlib.import_module(f"derivls.aten.{mod}"), name)
