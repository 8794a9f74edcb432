"""The compiler's verdict on the seeded formula mistakes: g++ (-std=c++20, the wheel's headers)
compiles each original formula and rejects each mutated one, in the scope derivls assumes and where the
generated code puts its value (copy_range of a backward formula's, `any_grad_defined ? (…) : Tensor()`
first for one Tensor input; the std::optional of a forward one's).

One translation unit holds every case (a function per formula, parameters = the scope's locals with
their C++ types, inside torch::autograd::generated with Functions.cpp's using-declarations), so the
whole check is one g++ run (about a minute on a shared machine).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.formulas.scope import OPTIONAL_TENSOR, TENSOR, build_scope
from derivls.derivatives.loader import DocumentAnalyzer
from tests.formulas.seeded import SEEDED
from tests.gxx import syntax_errors

pytestmark = pytest.mark.compile  # one g++ run over every case: a minute, more on a busy machine

PRELUDE = """\
#include "torch/csrc/autograd/FunctionsManual.h"
using namespace torch::autograd::generated::details;
using at::Tensor;
using at::Scalar;
using at::IntArrayRef;
using at::TensorList;
namespace torch::autograd::generated {
"""


def _params(scope, inputs: int) -> str:
    params = []
    for local in scope.locals.values():
        t = local.cpp_type
        if local.name == "grad_input_mask":
            t = f"std::array<bool, {inputs}>"  # one flag per input the formula is for
        elif local.name == "needs_input_grad":
            continue
        elif local.name == "grads":
            t = "const variable_list &"
        elif local.name == "i":
            t = "size_t"
        if not t:
            continue
        params.append(f"{t} {local.name}")
    return ", ".join(params)


def _in_context(scope, formula: str) -> list[str]:
    """The formula where the generated code puts its value (derivatives/formulas/returns.py): copy_range of a
    backward formula's value (std::get<k> of it for several inputs), the std::optional a forward formula's
    value is assigned to; a foreach formula's (an element) is only evaluated."""
    names = scope.targets
    if scope.foreach:
        return [f"  (void)({formula});"]
    if scope.backward:
        if len(names) == 1 and _undefined_grad_wrapped(scope, formula):
            formula = f"any_grad_defined ? ({formula}) : Tensor()"
        lines = ["  variable_list grad_inputs(16);", f"  auto grad_result = {formula};"]
        if len(names) == 1:
            return [*lines, "  copy_range(grad_inputs, IndexRange{0, 1}, grad_result);"]
        return lines + [f"  copy_range(grad_inputs, IndexRange{{{k}, {k + 1}}}, std::get<{k}>(grad_result));"
                        for k in range(len(names))]  # fmt: skip
    value = "_".join(names) + "_new_fw_grad_opt"  # (the kernel's name for it)
    if len(names) == 1:
        output = scope.get(names[0])
        if output is None or output.cpp_type != "at::Tensor":
            return [f"  auto {value} = {formula};", f"  (void){value};"]
        return [f"  std::optional<at::Tensor> {value} = std::nullopt;", f"  {value} = {formula};"]
    tensors = ", ".join(["at::Tensor"] * len(names))
    return [f"  std::optional<std::tuple<{tensors}>> {value} = std::nullopt;", f"  {value} = {formula};"]


def _undefined_grad_wrapped(scope, formula: str) -> bool:
    """torchgen's emit_derivative: one input, a `Tensor` or `Tensor?` argument, no `not_implemented`."""
    argument = scope.kernel.get(scope.targets[0])
    return (
        argument is not None
        and argument.kind == "argument"
        and argument.holds in (TENSOR, OPTIONAL_TENSOR)
        and "not_implemented" not in formula
    )


@pytest.fixture(scope="module")
def cases(real_files):
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    analysis = DocumentAnalyzer(index, str(real_files.native)).analyse(real_files.derivatives.read_text())
    by_name = {f"- name: {p.result.schema_string}": p.result for p in analysis.entries}
    out = []
    for name, seeded in sorted(SEEDED.items()):
        result = by_name[seeded.entry]
        for section in result.sections:
            for k in section.keys:
                formula = k.item.value.value
                if isinstance(formula, str) and seeded.old in formula:
                    scope = build_scope(result.canonical, section.info, k.kind == "backward", k.var_names)
                    bad = formula.replace(seeded.old, seeded.new, 1)
                    out.append((name, scope, len(k.var_names), formula, bad))
                    break
            else:
                continue
            break
        else:
            raise AssertionError(f"{name}: {seeded.old!r} is in no formula of its entry")
    return out


def test_gxx_compiles_every_original_formula_and_rejects_every_seeded_mistake(cases, tmp_path: Path):
    lines = PRELUDE.splitlines()
    owner: dict[int, tuple[str, str]] = {}
    for n, (name, scope, inputs, good, bad) in enumerate(cases):
        for label, formula in (("ok", good), ("bad", bad)):
            start = len(lines) + 1
            lines.append(f"void case_{n}_{label}({_params(scope, inputs)}) {{")
            if scope.backward:
                lines.append("  const bool any_grad_defined = any_variable_defined(grads);")
            lines.extend(_in_context(scope, formula))
            lines.append("}")
            for line in range(start, len(lines) + 1):
                owner[line] = (name, label)
    lines.append("}")
    errors, stderr = syntax_errors(lines, tmp_path / "formulas.cpp")
    failed = {owner.get(line, ("<prelude>", "")) for line in errors}
    assert ("<prelude>", "") not in failed, stderr[:3000]
    assert {n for n, label in failed if label == "ok"} == set(), stderr[:5000]
    assert {n for n, label in failed if label == "bad"} == {name for name, *_ in cases}, stderr[:5000]
