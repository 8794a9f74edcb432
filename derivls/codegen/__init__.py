"""The codegen view: the C++ autograd nodes torchgen generates from derivatives.yaml.

derivls renders them itself (no torch/torchgen at run time) from the loader's
DifferentiabilityInfo objects, byte for byte as torchgen's ``process_function`` does.
"""

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
