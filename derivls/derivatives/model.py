"""The loader's results, mirroring torchgen.api.autograd field for field.

Attribute names follow torchgen on purpose: the codegen and the parity tests
read derivls objects exactly where torchgen reads its own.
"""

from __future__ import annotations

from derivls.aten.cpp_types import Binding, NamedCType
from derivls.aten.native import NativeFunction
from derivls.aten.schema import Type
from derivls.base.frozen import frozen_dataclass


@frozen_dataclass(slots=True)
class SavedAttribute:
    """A value the autograd node stores at forward time (an input, an output, or a property of one)."""

    nctype: NamedCType
    expr: str


@frozen_dataclass(slots=True)
class Derivative:
    formula: str
    original_formula: str
    var_names: tuple[str, ...]
    saved_inputs: tuple[SavedAttribute, ...]
    saved_outputs: tuple[SavedAttribute, ...]
    named_gradients: frozenset[str]


@frozen_dataclass(slots=True)
class ForwardDerivative:
    formula: str
    var_names: tuple[str, ...]
    var_types: tuple[Type, ...]
    required_inputs_fw_grad: tuple[str, ...] | None
    required_inputs_primal: tuple[str, ...] | None
    required_original_self_value: bool
    is_reusing_outplace_formula: bool


@frozen_dataclass(slots=True)
class DifferentiabilityInfo:
    name: str
    func: NativeFunction
    op: str | None
    derivatives: tuple[Derivative, ...]
    forward_derivatives: tuple[ForwardDerivative, ...]
    all_saved_inputs: tuple[SavedAttribute, ...]
    all_saved_outputs: tuple[SavedAttribute, ...]
    available_named_gradients: tuple[str, ...]
    used_named_gradients: frozenset[str]
    args_with_derivatives: tuple[Binding, ...]
    non_differentiable_arg_names: tuple[str, ...]
    output_differentiability: tuple[bool, ...] | None
    output_differentiability_conditions: tuple[str, ...] | None

    @property
    def has_derivatives(self) -> bool:
        return len(self.args_with_derivatives) > 0
