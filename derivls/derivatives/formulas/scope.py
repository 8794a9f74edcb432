"""The locals the generated code has in scope for one formula, as torchgen writes that code.

Backward formula (gen_autograd_functions.py, `<Node>_apply_functional`): the saved arguments and
outputs under their C++ names (`result`, `result0`…, or the output's name), `grads`, `grad`
(`const auto& grad = grads[0]`), `grad_<output>` for each differentiable named Tensor output,
`grad_input_mask` (only in a formula for several inputs: DERIVATIVE_MULTI), `retain_variables`,
`needs_input_grad`, and in a `_foreach_` entry the loop's `i` (DERIVATIVE_SINGLE_FOREACH).
Forward formula (gen_variable_type.py, emit_fw_derivatives, inside the VariableType kernel): the
arguments, `<arg>_t` / `<arg>_p` for each differentiable input (tensor-like, not marked
non_differentiable), `original_self_p` / `original_self_t` (in-place reuse), the outputs, and the
foreach `i`. Not in scope: `grad`/`grads` in a forward formula, `<arg>_t`/`<arg>_p` in a backward one.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import replace

from derivls.aten.native import NativeFunction
from derivls.aten.schema_types import BaseTy, BaseType, ListType, OptionalType
from derivls.base.frozen import frozen_dataclass
from derivls.derivatives.facts import function_facts
from derivls.derivatives.model import DifferentiabilityInfo

# kinds: argument, output, grad, tangent, primal, generated (other locals of the generated code)

_TENSOR_TYPE = BaseType(BaseTy.Tensor)
_PRIMITIVES = frozenset({BaseTy.int, BaseTy.float, BaseTy.bool})  # int64_t, double, bool


# What a local holds, where derivls is sure of it (receiver checks in resolve.py), as the generated code
# declares it (codegen/nodes.py's saved variables, the VariableType kernel's parameters):
# - TENSOR: an at::Tensor (a backward formula's `Tensor?` too: its SavedVariable is unpacked into a Tensor);
# - OPTIONAL_TENSOR: a std::optional<at::Tensor> (a forward formula's `Tensor?` argument);
# - VECTOR: a std::vector (a backward formula's saved `int[]` / `SymInt[]` / `Tensor[]`);
# - ARRAYREF: a c10::ArrayRef (a forward formula's `int[]` / `SymInt[]`: the kernel's IntArrayRef /
#   SymIntArrayRef; its `Tensor[]` may be an ITensorListRef, not judged);
# - SCALAR: a c10::Scalar (`Scalar`: the kernel's `const at::Scalar &`, the node's saved at::Scalar);
# - PRIMITIVE: int64_t, double or bool (`int`, `float`, `bool`), which have no members at all;
# "" for anything else (not judged).
TENSOR, OPTIONAL_TENSOR, VECTOR, ARRAYREF, SCALAR, PRIMITIVE = (
    "tensor", "optional_tensor", "vector", "arrayref", "scalar", "primitive"
)  # fmt: skip
# - OPTIONAL_VALUE: a std::optional of one value in both formulas (`int?`, `float?`, `bool?`, `SymInt?`,
#   `Scalar?`, `ScalarType?`, `Layout?`, `Device?`, `MemoryFormat?`, `Generator?`: the kernel's parameter, the
#   node's saved attribute); not `str?` (load_derivatives writes a cast expression in its place) nor lists.
OPTIONAL_VALUE = "optional_value"
_FORWARD_ARRAYREFS = frozenset({"list:int", "list:SymInt"})
# An `int[]` / `SymInt[]` / `Tensor[]` argument: a VECTOR of this type in a backward formula.
_SAVED_VECTORS = {
    "list:int": "std::vector<int64_t>",
    "list:SymInt": "std::vector<c10::SymInt>",
    "list:Tensor": "std::vector<at::Tensor>",
}


@frozen_dataclass
class Local:
    name: str
    kind: str
    cpp_type: str  # "" when unknown
    holds: str = ""  # TENSOR, OPTIONAL_TENSOR, OPTIONAL_VALUE, VECTOR, ARRAYREF, SCALAR, PRIMITIVE, or ""; see above

    @property
    def is_tensor(self) -> bool:
        """A value whose type has at:: as an associated namespace (so an unqualified call finds at:: functions)."""
        return "Tensor" in self.cpp_type


@frozen_dataclass
class Scope:
    backward: bool
    locals: dict[str, Local]
    arguments: tuple[str, ...]
    outputs: tuple[str, ...]
    differentiable_inputs: tuple[str, ...]
    multi_input: bool  # a backward formula for several inputs (grad_input_mask exists)
    foreach: bool
    # the arguments and outputs as the VariableType kernel declares them (in a forward formula: `locals`'
    # own; a backward one's are the node's saved types), for what load_derivatives evaluates there
    kernel: Mapping[str, Local]
    targets: tuple[str, ...] = ()  # the formula's key: its inputs (backward) or outputs (forward)

    def get(self, name: str) -> Local | None:
        return self.locals.get(name)


_base_cache: dict[int, tuple[NativeFunction, dict[str, Local], tuple[str, ...], tuple[str, ...], tuple[str, ...]]] = {}


def _base(f: NativeFunction) -> tuple[dict[str, Local], tuple[str, ...], tuple[str, ...], tuple[str, ...]]:
    """(argument and output locals, argument names, output names, tensor-like argument names) of a function."""
    hit = _base_cache.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1:]  # type: ignore[return-value]
    facts = function_facts(f)
    locals_: dict[str, Local] = {}
    for b in facts.bindings:
        locals_.setdefault(b.name, Local(b.name, "argument", b.type, _holds(getattr(b, "argument", None))))
    for r, ret in zip(facts.named_returns, f.func.returns):
        locals_.setdefault(str(r.name), Local(str(r.name), "output", r.type.cpp_type(), _holds(ret)))
    outputs = tuple(str(r.name) for r in facts.named_returns)
    tensors = tuple(b.name for b in facts.bindings if _tensor_like(b))
    if len(_base_cache) > 50_000:
        _base_cache.clear()
    _base_cache[id(f)] = (f, locals_, tuple(facts.arg_names), outputs, tensors)
    return locals_, tuple(facts.arg_names), outputs, tensors


def build_scope(
    f: NativeFunction, info: DifferentiabilityInfo | None, backward: bool, var_names: tuple[str, ...]
) -> Scope:
    base, arg_names, outputs, tensors = _base(f)
    foreach = f.func.name.name.base.startswith("_foreach_")
    locals_ = dict(base)

    def add(name: str, kind: str, cpp_type: str = "") -> None:
        if name not in locals_:
            locals_[name] = Local(name, kind, cpp_type, TENSOR if cpp_type == "at::Tensor" else "")

    for name, local in base.items():
        if local.holds == OPTIONAL_TENSOR and backward:  # a SavedVariable, unpacked into a Tensor (maybe undefined)
            locals_[name] = replace(local, cpp_type="at::Tensor", holds=TENSOR)
        elif local.holds in _SAVED_VECTORS and backward:  # saved as a std::vector
            locals_[name] = replace(local, cpp_type=_SAVED_VECTORS[local.holds], holds=VECTOR)
        elif local.holds in _SAVED_VECTORS:  # the kernel's parameter: an ArrayRef (cpp_type says which)
            locals_[name] = replace(local, holds=ARRAYREF if local.holds in _FORWARD_ARRAYREFS else "")

    if not backward and "options" in locals_:  # the VariableType kernel takes TensorOptions scattered
        for name, t in (
            ("dtype", "std::optional<at::ScalarType>"),
            ("layout", "std::optional<at::Layout>"),
            ("device", "std::optional<at::Device>"),
            ("pin_memory", "std::optional<bool>"),
        ):
            add(name, "argument", t)
    non_differentiable = set(info.non_differentiable_arg_names) if info is not None else set()
    differentiable = tuple(n for n in tensors if n not in non_differentiable)
    if backward:
        add("grads", "grad", "variable_list")
        add("grad", "grad", "at::Tensor")
        if info is not None:
            for name in info.available_named_gradients:
                add(name, "grad", "at::Tensor")
        if len(var_names) > 1:
            add("grad_input_mask", "generated", "std::array<bool>")
        add("retain_variables", "generated", "bool")
        add("needs_input_grad", "generated", "std::array<bool>")
    else:
        for name in differentiable:
            add(name + "_t", "tangent", "at::Tensor")
            add(name + "_p", "primal", "at::Tensor")
        add("original_self_p", "primal", "at::Tensor")
        add("original_self_t", "tangent", "at::Tensor")
    if foreach:
        add("i", "generated", "size_t")
    return Scope(
        backward, locals_, arg_names, outputs, differentiable, len(var_names) > 1, foreach, base, tuple(var_names)
    )


def _holds(argument: object) -> str:
    """What an argument or return of this schema type holds in C++, in both directions (see TENSOR…)."""
    t = getattr(argument, "type", None)
    if isinstance(t, OptionalType):
        if t.elem == _TENSOR_TYPE:
            return OPTIONAL_TENSOR
        return OPTIONAL_VALUE if isinstance(t.elem, BaseType) and t.elem.name != BaseTy.str else ""
    if isinstance(t, ListType):
        return f"list:{t.elem}" if f"list:{t.elem}" in _SAVED_VECTORS else ""
    if isinstance(t, BaseType):
        if t.name == BaseTy.Scalar:
            return SCALAR
        return TENSOR if t == _TENSOR_TYPE else PRIMITIVE if t.name in _PRIMITIVES else ""
    return ""


def _tensor_like(binding: object) -> bool:
    argument = getattr(binding, "argument", None)
    t = getattr(argument, "type", None)
    return t is not None and t.is_tensor_like()
