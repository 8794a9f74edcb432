"""The codegen view: the C++ autograd nodes torchgen generates from derivatives.yaml.

derivls renders them itself (no torch/torchgen at run time) from the loader's
DifferentiabilityInfo objects, byte for byte as torchgen's ``process_function`` does.

The names below are loaded on first use: ``derivls.cli.commandline`` imports ``derivls.cli.codegen``
to build its argument parser, and ``derivls check`` should not pay for the renderer.
"""

from __future__ import annotations

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)

if TYPE_CHECKING:
    from derivls.codegen.nodes import (
        GeneratedNode,
        generate_node,
        generate_nodes,
        infos_with_derivatives_list,
        process_function,
    )

__all__ = [
    "GeneratedNode",
    "generate_node",
    "generate_nodes",
    "infos_with_derivatives_list",
    "process_function",
]


def __getattr__(name: str) -> object:
    if name in __all__:
        from derivls.codegen import nodes

        return getattr(nodes, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")
