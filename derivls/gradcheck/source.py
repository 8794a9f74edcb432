"""The C++ of a gradcheck build and the plan the child follows.

Per unit (a backward node and/or a function with forward formulas), exactly the code the build
compiles, rendered by derivls's own codegen (derivls.codegen.nodes.generate_node and
derivls.compile.forward's VariableType blocks), plus a thin harness:

- backward: a struct derived from the node whose `task_should_compute_output` answers from a mask
  (VariableType's grad_input_mask comes from which inputs require grad: the child sets the mask from
  that), holding a copy of the node's `apply` body; a kernel with the function's arguments and
  outputs that saves what VariableType saves (derivls.compile.saving.save_statements: the same
  `self.sym_sizes()`, `result`...), then calls that apply with the output grads (None: undefined).
  Outputs are saved as plain values (`SavedVariable(result, false)`): the child's outputs belong to
  an autograd.Function, not to the node, and saved this way double backward still flows through them.
- forward: a kernel holding the forward-derivative blocks VariableType holds (gen_variable_type's
  templates), the tangents read from an argument instead of the inputs' dual parts.

Each is registered as a CompositeImplicitAutograd custom op (so double backward traces through it)
in a library named per build (loading two builds with the same names aborts).
"""

from __future__ import annotations

import re
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from derivls.aten.schema_args import Argument
from derivls.compile.file_templates import PCH_NAME, Templates
from derivls.compile.forward import forward_blocks
from derivls.compile.kernel import kernel_bindings
from derivls.compile.saving import save_statements
from derivls.compile.units import Unit
from derivls.derivatives.saved import IDENT_REGEX


@dataclass
class UnitPlan:
    """What the child needs to know about one unit (JSON-ready), and what maps its answers back."""

    id: str
    unit: Unit
    aten: str  # "acos"
    overload: str  # "default", "dim"
    args: list[str]  # the schema's arguments, in order
    wrt: list[tuple[str, bool]]  # the node's grad_inputs layout: (argument, is a tensor list)
    outputs: list[str]
    grads: list[int]  # which outputs the node gets a grad for (the differentiable ones)
    backward: str | None = None  # the custom op's name, None: no backward formula
    forward: str | None = None
    fw_inputs: list[str] = field(default_factory=list)  # the tangents the forward kernel takes, in order
    fw_outputs: list[str] = field(default_factory=list)  # outputs that have a forward formula
    skipped: list[str] = field(default_factory=list)  # why a part could not be built
    inplace: bool = False  # checked through the in-place op on a clone of `self`
    layout: str = "strided"  # "nested": a formula for AutogradNestedTensor, checked on nested tensors
    by_design: str | None = None  # the formula is not the derivative on purpose (by_design_fact): the reason

    def to_json(self) -> dict[str, Any]:
        return {
            "id": self.id,
            "name": self.unit.name,
            "aten": self.aten,
            "overload": self.overload,
            "args": self.args,
            "wrt": [list(w) for w in self.wrt],
            "outputs": self.outputs,
            "grads": self.grads,
            "backward": self.backward,
            "forward": self.forward,
            "fw_inputs": self.fw_inputs,
            "layout": self.layout,
            "fw_outputs": self.fw_outputs,
            "inplace": self.inplace,
        } | ({"by_design": self.by_design} if self.by_design else {})


@dataclass(frozen=True)
class Registered:
    """One custom op of the extension: how TORCH_LIBRARY registers it (the JIT path registers it boxed)."""

    name: str  # "AcosBackward0_0_bw"
    schema: str  # "AcosBackward0_0_bw(Tensor self, ...) -> Tensor[]"
    function: str  # the C++ function, qualified: "torch::autograd::generated::derivls_gradcheck::..."
    params: tuple[str, ...]  # its parameters' C++ types, in order


@dataclass
class Rendered:
    source: str
    plans: list[UnitPlan]
    not_buildable: list[tuple[Unit, str]]  # units left out, and why
    ops: list[Registered] = field(default_factory=list)
    # FunctionsManual.cpp's helpers defined in the source (derivls.gradcheck.manual.ManualCode), and the 0-based
    # line of the source its text starts at (its `origin()` maps a line of it back to FunctionsManual.cpp)
    manual: Any = None
    manual_line: int = 0

    def manual_origin(self, line: int) -> int | None:
        """The 0-based FunctionsManual.cpp line of the source's 0-based `line` (None: not a helper's line)."""
        if self.manual is None or not self.manual.text:
            return None
        origin: int | None = self.manual.origin(line - self.manual_line)
        return origin


def _ident(name: str, index: int) -> str:
    return f"{re.sub(r'[^A-Za-z0-9]', '_', name)}_{index}"


def _uses_ident(info: Any, ident: str) -> bool:
    return any(re.search(IDENT_REGEX.format(ident), d.formula) for d in info.derivatives)


def differentiable_outputs(info: Any) -> list[int]:
    """torchgen's gen_differentiable_outputs: the outputs whose grads the node receives, in order."""
    f = info.func
    returns = list(f.func.returns)
    from derivls.aten import cpp

    names = cpp.return_names(f)
    if info.output_differentiability is not None:
        return [i for i, d in enumerate(info.output_differentiability) if d and i < len(returns)]
    candidates = [
        i
        for i, (name, ret) in enumerate(zip(names, returns))
        if ret.type.is_tensor_like() and name not in info.non_differentiable_arg_names
    ]
    return candidates[:1] if _uses_ident(info, "grad") else candidates


def _dispatch_key(info: Any) -> str | None:
    """The autograd dispatch key of a non-Default formula (its node is named `...Autograd<Key>N`)."""
    m = re.search(r"Backward(Autograd\w+?)\d+(_copy)?$", info.op or "")
    return m.group(1) if m else None


def why_not_buildable(unit: Unit) -> str | None:
    if unit.refused is not None:
        return unit.refused
    f = unit.info.func
    inplace = bool(f.func.name.name.inplace)
    if f.func.is_out_fn():
        return "an out= function"
    differentiable = {b.name for b in unit.info.args_with_derivatives}
    if any(
        a.annotation is not None
        and a.annotation.is_write
        and not (inplace and a.name == "self")
        and a.name in differentiable  # (a buffer it updates, batch norm's running_mean: the real op writes a clone)
        for a in f.func.arguments.flat_all
    ):
        return "a function that writes an argument it has a formula for"
    for ret in f.func.returns:
        if not ret.type.is_tensor_like():
            return f"a return of type {ret.type} (not a tensor)"
    return None


NOTHING_TO_CHECK = "nothing to check"  # the reason kind of an entry that gives no formula: a fact about the op
NO_CPU_KERNEL = "no CPU kernel"  # the op (or an op its formula calls) runs on other backends only: a fact about the op
NOT_IMPLEMENTED = "not implemented"  # the formula is not_implemented(...): a fact about the entry
OTHER_BACKEND = "another backend's formula"  # a formula for AutogradCUDA (...): dense CPU tensors never reach it
# the reason kinds that are facts about the op or its entry, not limits of the harness (issue 35: the baseline and
# docs/gradcheck.md count them apart; every other reason is the harness's, work left)
BY_DESIGN = "not a derivative by design"  # the entry's formula is not the derivative on purpose: a fact about it
FACT_KINDS = frozenset({NOTHING_TO_CHECK, NO_CPU_KERNEL, NOT_IMPLEMENTED, OTHER_BACKEND, BY_DESIGN})
# the dispatch keys whose kernels run on dense CPU tensors (as the child asks the dispatcher: schema.CPU_KEYS)
_CPU_DISPATCH = frozenset(
    {"CPU", "CompositeImplicitAutograd", "CompositeExplicitAutograd", "CompositeExplicitAutogradNonFunctional"}
)
# the autograd keys of formulas a CPU tensor of another layout reaches: nested tensors are on CPU too, so a formula
# of theirs is the harness's to check (on nested tensors: child/nested.py), not a fact
_CPU_REACHABLE_KEYS = frozenset({"AutogradNestedTensor"})


def reason_kind(reason: str) -> str:
    """A not-checkable reason's kind: the text before its first colon ("no CPU kernel", "not built")."""
    return reason.split(":", 1)[0].strip() if reason else "unknown"


def is_fact(reason: str) -> bool:
    """Whether a not-checkable reason is a fact about the op (no formula, no CPU kernel, not_implemented(), a formula
    for another backend), not a limit of the harness."""
    return reason_kind(reason) in FACT_KINDS


def no_cpu_kernel_fact(f: Any) -> str | None:
    """'no CPU kernel: ...' when native_functions.yaml dispatches the function to other backends only (cuDNN, MIOpen,
    MPS, CUDA-only attention); None when it may have one (a CPU or composite kernel, a structured delegate, an
    autogenerated kernel: the dispatch section does not list those)."""
    dispatch = getattr(f, "dispatch", None) or {}
    if not dispatch or getattr(f, "structured", False) or getattr(f, "structured_delegate", None) is not None:
        return None
    if _CPU_DISPATCH & dispatch.keys():
        return None
    keys = ", ".join(sorted(dispatch))
    return f"{NO_CPU_KERNEL}: native_functions.yaml dispatches aten::{f.func.name} to {keys} only"


def other_backend_fact(key: str) -> str | None:
    """The reason of a formula for the autograd key `key` (AutogradCUDA...) that no dense CPU tensor reaches, as a
    fact; None for a key CPU tensors of another layout reach (AutogradNestedTensor: checked on nested tensors)."""
    if key in _CPU_REACHABLE_KEYS:
        return None
    return f"{OTHER_BACKEND}: a formula for {key}, which CPU tensors never reach (they reach the Default formula)"


# a formula that is zeros of some shape (torchgen makes zeros_like(self) self_info.zeros())
_ZEROS = re.compile(r"^\s*((at::)?zeros(_like|_symint)?\(|\w+_info\.zeros\(\)\s*$)")
_IMPLICIT = re.compile(r"\b_\w+_grad\([^)]*\bresult\b")  # a distribution's *_grad function of the draw
_STRAIGHT_THROUGH = re.compile(r"\b_?fake_quantize\w*_backward\(")  # fake quantization's masked pass-through


def by_design_fact(info: Any) -> str | None:
    """'not a derivative by design: ...' when the entry's formula is on purpose not the derivative finite
    differences see: an op of torch's own autograd tests (_test_*: made to differ), a random op whose formula is
    zeros (not reparameterized: at a fixed seed normal's draw moves with its mean), a random op's implicit
    reparameterization (a distribution's *_grad function of the draw), a straight-through estimator (fake
    quantization's *_backward: the op rounds). The child reports it where the check does not pass at a sample where
    torch's own gradient disagrees with finite differences too (where it passes, zeros is the derivative too:
    poisson, normal_; where torch's agrees, a disagreement is a failure); None otherwise."""
    f = info.func
    formulas = [d.formula for d in info.derivatives]
    if not formulas:
        return None
    name = str(f.func.name.name)
    random = any(str(a.type).rstrip("?") == "Generator" for a in f.func.arguments.flat_all)
    if name.startswith("_test_"):
        return f"{BY_DESIGN}: an op of torch's own autograd tests (aten::{f.func.name}), its formula made to differ"
    if random and all(_ZEROS.match(x) for x in formulas):
        return (
            f"{BY_DESIGN}: a random op whose formula is zeros (its draw is not reparameterized: at a fixed seed it "
            "moves with its inputs)"
        )
    if random and any(_IMPLICIT.search(x) for x in formulas):
        return (
            f"{BY_DESIGN}: a random op's implicit reparameterization (the gradient of a draw at its fixed CDF value, "
            "not of the draw at a fixed seed)"
        )
    if any(_STRAIGHT_THROUGH.search(x) for x in formulas):
        return (
            f"{BY_DESIGN}: a straight-through estimator (fake quantization rounds, a derivative of 0 almost "
            "everywhere; the formula passes grad through where the value is in range)"
        )
    return None


def no_formula_fact(info: Any) -> str:
    """Why an entry has no formula to check, as a fact about the op (the entry says so)."""
    if info.output_differentiability is not None and not any(info.output_differentiability):
        return f"{NOTHING_TO_CHECK}: the op has no differentiable output (output_differentiability: all False)"
    if info.non_differentiable_arg_names and not info.args_with_derivatives:
        names = ", ".join(info.non_differentiable_arg_names)
        return f"{NOTHING_TO_CHECK}: the entry gives no formula, only non_differentiable inputs ({names})"
    return f"{NOTHING_TO_CHECK}: the entry gives no formula (no derivative for any input or output)"


def _foreach_output_save(info: Any, statement: str) -> str:
    """A foreach function's list of outputs saved as its node keeps it (VariableType saves it element by element
    in its loop; the node holds a std::vector<SavedVariable> `result_`), as values (see the module's doc)."""
    if not info.name.startswith("_foreach"):
        return statement
    return re.sub(r"^grad_fn->(\w+) = \1;$", r"grad_fn->\1_ = make_saved_variable_list(\1, false);", statement)


_APPLY = re.compile(r"variable_list (\w+)::apply\(variable_list&& grads\) \{\n")


def _apply_body(definition: str) -> str | None:
    m = _APPLY.search(definition)
    if m is None:
        return None
    depth, i = 1, m.end()
    while i < len(definition) and depth:
        depth += {"{": 1, "}": -1}.get(definition[i], 0)
        i += 1
    return definition[m.end() : i - 1] if depth == 0 else None


def _schema_type(t: Any) -> str:
    return str(t)


_SETTER = re.compile(r"(\w+)\._set_fw_grad\((.*), /\* level \*/ 0, /\* is_inplace_op \*/ \w+\);")


def render(units: Sequence[Unit], library: str, templates: Templates, manual: Any = None) -> Rendered:
    """One translation unit with every unit's harness, registered in the library `library`. `manual`: the
    FunctionsManual.cpp helpers to define (a derivls.gradcheck.manual.ManualCode): its text goes before the formulas
    and its using-declarations into each namespace holding formulas, so they call these helpers."""
    from derivls.aten import cpp
    from derivls.codegen.nodes import generate_node

    head, _, tail = templates.functions_cpp.partition("${autograd_function_definitions}")
    head = head.replace("${generated_comment}", "generated by derivls gradcheck")
    backward_parts: list[str] = []
    forward_parts: list[str] = []
    registrations: list[str] = []
    ops: list[Registered] = []
    plans: list[UnitPlan] = []
    left_out: list[tuple[Unit, str]] = []
    for index, unit in enumerate(units):
        reason = why_not_buildable(unit)
        if reason is not None:  # (a fact first: an op that runs on no CPU tensor is not the harness's to build)
            left_out.append((unit, no_cpu_kernel_fact(unit.info.func) or reason))
            continue
        info = unit.info
        f = info.func
        bindings = kernel_bindings(f)
        ident = _ident(unit.name, index)
        out_names = list(cpp.return_names(f))
        args = [a.name for a in f.func.arguments.flat_all]
        inplace = bool(name_inplace(f))
        if inplace:  # the kernel gets self before the write and the written self as its output
            out_names = ["derivls_result"]
        if [b.name for b in bindings] != args:
            left_out.append((unit, "its C++ arguments differ from its schema's"))
            continue
        name = f.func.name
        plan = UnitPlan(
            id=ident,
            unit=unit,
            aten=str(name.name),
            overload=name.overload_name or "default",
            args=args,
            wrt=[(b.name, _is_list(b.argument)) for b in info.args_with_derivatives],
            outputs=out_names,
            grads=differentiable_outputs(info),
            inplace=inplace,
            by_design=by_design_fact(info),
        )
        schema_args = [f"{_schema_type(a.type)} {a.name}" for a in f.func.arguments.flat_all]
        out_params, out_schema = [], []
        for out, ret in zip(out_names, f.func.returns):
            is_list = ret.type.is_list_like() is not None
            out_params.append(f"{'at::TensorList' if is_list else 'const at::Tensor &'} {out}")
            out_schema.append(f"{'Tensor[]' if is_list else 'Tensor'} {out}")
        params = ", ".join(
            [
                (f"const at::Tensor & {_SELF_IN}" if inplace and b.name == "self" else f"{b.type} {b.name}")
                for b in bindings
            ]
            + out_params
        )
        types = tuple(
            ["const at::Tensor &" if inplace and b.name == "self" else str(b.type) for b in bindings]
            + [p.rsplit(" ", 1)[0] for p in out_params]
        )
        prologue = _INPLACE_PROLOGUE.replace(_RESULT + ";", _SELF_IN + ";") if inplace else ""
        schema = ", ".join(schema_args + out_schema)
        if unit.has_backward:
            node = generate_node(info)
            body = _apply_body(node.definition)
            if body is None:
                plan.skipped.append("backward: the node's apply was not found")
            else:
                saves = save_statements(info.all_saved_inputs, False, inplace)
                if inplace:  # VariableType saves the inputs before the write (self.sym_sizes()), the outputs after
                    saves.append(f"self = {_RESULT};")
                saves += [
                    _foreach_output_save(
                        info,
                        re.sub(r"SavedVariable\((\w+), true(, self\.is_view\(\))?\)", r"SavedVariable(\1, false)", s),
                    )
                    for s in save_statements(info.all_saved_outputs, True, inplace)
                ]
                # VariableType sets the size of each differentiable tensor list (its grads' range in apply)
                saves += [f"grad_fn->{name}_size_ = {name}.size();" for name, is_list in plan.wrt if is_list]
                backward_parts.append(
                    node.declaration + "\n" + node.definition + "\n" + f"struct {ident}_gc : public {info.op} {{\n"
                    "  int64_t derivls_mask = 0;\n"
                    "  bool task_should_compute_output(size_t i) const { return i < 63 && ((derivls_mask >> i) & 1); }\n"
                    "  bool task_should_compute_output(std::initializer_list<IndexRange> idxs) const {\n"
                    "    for (const auto& r : idxs) for (size_t i = r.first; i < r.second; ++i)\n"
                    "      if (task_should_compute_output(i)) return true;\n"
                    "    return false;\n"
                    "  }\n"
                    f"  variable_list derivls_apply(variable_list&& grads) {{\n{body}}}\n"
                    "};\n"
                    f"static std::vector<at::Tensor> {ident}_bw({params}, "
                    "const c10::List<::std::optional<at::Tensor>>& derivls_grads, int64_t derivls_mask) {\n"
                    + prologue
                    + f"  auto grad_fn = c10::make_intrusive<{ident}_gc>();\n"
                    + "".join(f"  {s}\n" for s in saves)
                    + "  grad_fn->derivls_mask = derivls_mask;\n"
                    "  variable_list derivls_gs;\n"
                    "  for (const auto& g : derivls_grads) {\n"
                    "    ::std::optional<at::Tensor> o = g;\n"
                    "    derivls_gs.push_back(o.has_value() ? *o : at::Tensor());\n"
                    "  }\n"
                    "  return grad_fn->derivls_apply(std::move(derivls_gs));\n"
                    "}\n"
                )
                plan.backward = f"{ident}_bw"
                ops.append(
                    Registered(
                        f"{ident}_bw",
                        f"{ident}_bw({schema}, Tensor?[] derivls_grads, int derivls_mask) -> Tensor[]",
                        f"torch::autograd::generated::derivls_gradcheck::{ident}_bw",
                        (*types, _OPT_LIST, "int64_t"),
                    )
                )
                registrations.append(
                    f'  m.def("{ident}_bw({schema}, Tensor?[] derivls_grads, int derivls_mask) -> Tensor[]");\n'
                    f'  m.impl("{ident}_bw", c10::DispatchKey::CompositeImplicitAutograd, '
                    f"TORCH_FN(torch::autograd::generated::derivls_gradcheck::{ident}_bw));\n"
                )
        if unit.has_forward:
            forward = _forward_kernel(unit, ident, bindings, params, plan)
            if forward is not None:
                forward_parts.append(forward)
                plan.forward = f"{ident}_fw"
                ops.append(
                    Registered(
                        f"{ident}_fw",
                        f"{ident}_fw({schema}, Tensor?[] derivls_tangents) -> Tensor[]",
                        f"torch::autograd::VariableType::derivls_gradcheck::{ident}_fw",
                        (*types, _OPT_LIST),
                    )
                )
                registrations.append(
                    f'  m.def("{ident}_fw({schema}, Tensor?[] derivls_tangents) -> Tensor[]");\n'
                    f'  m.impl("{ident}_fw", c10::DispatchKey::CompositeImplicitAutograd, '
                    f"TORCH_FN(torch::autograd::VariableType::derivls_gradcheck::{ident}_fw));\n"
                )
        if plan.backward is None and plan.forward is None:
            left_out.append((unit, "; ".join(plan.skipped) or no_formula_fact(info)))
            continue
        key = _dispatch_key(info)
        if key in _CPU_REACHABLE_KEYS:  # (checked on nested tensors made from the Default's samples)
            plan.layout = "nested"
        elif key is not None:  # (compiled all the same: it must compile; its samples are not dense CPU ones)
            left_out.append((unit, other_backend_fact(key) or f"a formula for {key}"))
            continue
        plans.append(plan)
    helpers = manual.text if manual is not None and manual.text else ""
    usings = manual.usings() if helpers else ""
    text = (
        f'#include "{PCH_NAME}"\n'
        + helpers
        + head
        + "namespace derivls_gradcheck {\n"
        + usings
        + "".join(backward_parts)
        + "} // namespace derivls_gradcheck\n"
        + tail
        + "\nusing namespace at;\nusing namespace torch::autograd::generated;\n"
        "using namespace torch::autograd::generated::details;\n"
        "namespace torch::autograd::VariableType {\nnamespace derivls_gradcheck {\n"
        + usings
        + "static at::Tensor derivls_tangent(const c10::List<::std::optional<at::Tensor>>& ts, size_t i) {\n"
        "  if (i >= ts.size()) return at::Tensor();\n"
        "  ::std::optional<at::Tensor> o = ts.get(i);\n"
        "  return o.has_value() ? *o : at::Tensor();\n"
        "}\n"
        + "".join(forward_parts)
        + "} // namespace derivls_gradcheck\n} // namespace torch::autograd::VariableType\n"
        f"TORCH_LIBRARY({library}, m) {{\n" + "".join(registrations) + "}\n"
    )
    kept = {p.backward for p in plans} | {p.forward for p in plans}
    return Rendered(text, plans, left_out, [op for op in ops if op.name in kept], manual if helpers else None, 1)


def _forward_kernel(unit: Unit, ident: str, bindings: Any, params: str, plan: UnitPlan) -> str | None:
    info = unit.info
    non_differentiable = set(info.non_differentiable_arg_names)
    differentiable = [
        (b.name, b.argument.type.is_list_like() is not None)
        for b in bindings
        if hasattr(b.argument, "type") and b.argument.type.is_tensor_like() and b.name not in non_differentiable
    ]
    if any(is_list for _, is_list in differentiable):
        plan.skipped.append("forward: a tensor-list input (its tangents are read from dual tensors)")
        return None
    if any(ret.type.is_list_like() is not None for ret in info.func.func.returns):
        plan.skipped.append("forward: a tensor-list output")
        return None
    blocks = forward_blocks(info, [name for name, _ in differentiable])
    if blocks is None or not blocks[1]:
        plan.skipped.append("forward: formulas not modelled")
        return None
    body = blocks[0]
    for name, _ in differentiable:
        body = re.sub(rf"\btoNonOptFwGrad\({name}\)", f"derivls_t_{name}", body)
        body = re.sub(rf"\btoNonOptPrimal\({name}\)", f"toNonOptTensor({name})", body)
    if plan.inplace:  # original_self: self before the write, its tangent a copy of the input's (as clone() gives)
        body = re.sub(r"\btoNonOptFwGrad\(original_self\)", "derivls_t_original_self", body)
        body = re.sub(r"\btoNonOptPrimal\(original_self\)", "toNonOptTensor(original_self)", body)
    body = _SETTER.sub(lambda m: f"derivls_out_{m.group(1)} = {m.group(2)};", body)
    if "toNonOptFwGrad(" in body or "._fw_grad(" in body or "_set_fw_grad(" in body:
        plan.skipped.append("forward: reads a tangent the harness does not pass")
        return None
    outs = ["self"] if plan.inplace else plan.outputs
    lines = [
        f"static std::vector<at::Tensor> {ident}_fw({params}, const c10::List<::std::optional<at::Tensor>>& derivls_tangents) {{"
    ]
    if plan.inplace:
        lines.append(_INPLACE_PROLOGUE.rstrip("\n"))
    for i, (name, _) in enumerate(differentiable):
        lines.append(f"  at::Tensor derivls_t_{name} = derivls_tangent(derivls_tangents, {i});")
    if plan.inplace:
        lines.append(
            "  at::Tensor derivls_t_original_self = derivls_t_self.defined() ? derivls_t_self.clone() : derivls_t_self;"
        )
    for out in outs:
        lines.append(f"  at::Tensor derivls_out_{out};")
    # gen_variable_type's guard: a formula runs only when an input whose tangent it reads has one (isFwGradDefined);
    # else the output gets no tangent (a zero one), whatever the formula would do on the other inputs' zero tangents
    # (nextafter's `at::where(self_p != other_p, self_t, 0)` with an integer self: int64 zeros, a tangent autograd
    # refuses)
    flags: dict[str, list[str]] = {}
    for d in info.forward_derivatives:
        flag = "_any_has_forward_grad_" + ("self" if plan.inplace else "_".join(d.var_names))
        required = set(d.required_inputs_fw_grad or ())
        flags.setdefault(flag, []).extend(name for name, _ in differentiable if name in required)
    for flag, names in flags.items():
        guard = " || ".join(f"derivls_t_{name}.defined()" for name in dict.fromkeys(names)) or "true"
        lines.append(f"  [[maybe_unused]] bool {flag} = {guard};")
    lines.append(body)
    lines.append("  return {" + ", ".join(f"derivls_out_{o}" for o in outs) + "};")
    lines.append("}")
    plan.fw_inputs = [name for name, _ in differentiable]
    plan.fw_outputs = [n for d in info.forward_derivatives for n in d.var_names]
    return "\n".join(lines) + "\n"


_OPT_LIST = "const c10::List<::std::optional<at::Tensor>>&"
_SELF_IN = "derivls_self_in"
_RESULT = "derivls_result"
# an in-place kernel as VariableType runs it after the write: `self` is the written tensor (the output), and
# `original_self` the value before it (what the node saves for a formula's `self`)
_INPLACE_PROLOGUE = (
    f"  ::std::optional<at::Tensor> original_self = {_SELF_IN};\n  [[maybe_unused]] at::Tensor self = {_RESULT};\n"
)


def name_inplace(f: Any) -> bool:
    return bool(f.func.name.name.inplace)


def _is_list(argument: object) -> bool:
    """A differentiable argument that is a list of tensors (args_with_derivatives are plain Arguments)."""
    return isinstance(argument, Argument) and argument.type.is_list_like() is not None
