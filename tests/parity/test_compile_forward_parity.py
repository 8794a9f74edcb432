"""derivls's forward-mode (VariableType) blocks against torchgen's gen_variable_type, on the real 2.13 files.

For every function with forward formulas that derivls compiles, the blocks derivls writes (the
`<out>_new_fw_grad_opt` declaration, the unpacking of `_t` / `_p`, the formula, the setters) must
stand verbatim in the method torchgen's own gen_variable_type_func generates for it; for a foreach
function, the loop over the lists that holds them (`<out>_new_fw_grad_opts`, inputs read at `[i]`).
"""

from __future__ import annotations

import pytest

from derivls.compile.forward import forward_kernel
from derivls.compile.saving import save_function
from derivls.compile.units import collect_units
from derivls.project.analyse import analyse_path

torchgen_load = pytest.importorskip("torchgen.packaged.autograd.load_derivatives")
torchgen_variable_type = pytest.importorskip("torchgen.packaged.autograd.gen_variable_type")
torchgen_gen = pytest.importorskip("torchgen.gen")
torchgen_autograd = pytest.importorskip("torchgen.api.autograd")


@pytest.fixture(scope="module")
def torchgen_methods(real_files):
    functions = torchgen_gen.parse_native_yaml(str(real_files.native), str(real_files.tags)).native_functions
    infos, _ = torchgen_load.load_derivatives(str(real_files.derivatives), str(real_files.native), str(real_files.tags))
    matched = torchgen_autograd.match_differentiability_info(functions, infos)
    return {str(f.func.func.name): f for f in matched}


@pytest.fixture(scope="module")
def units(real_files):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags, "torchgen")
    return collect_units(analysis)


def _torchgen_text(fn) -> str:
    out = torchgen_variable_type.gen_variable_type_func(fn)
    return "".join(v for key, values in out.items() if key.startswith("type_derived") for v in values)


def _blocks(kernel_text: str) -> str:
    start = kernel_text.index(
        next(
            line
            for line in kernel_text.splitlines()
            if "_new_fw_grad_opt = ::std::nullopt" in line or "_new_fw_grad_opts(self.size(), ::std::nullopt)" in line
        )
    )
    return kernel_text[start : kernel_text.rindex("\n}")]


def test_forward_blocks_stand_verbatim_in_torchgens_variable_type(units, torchgen_methods):
    compared, foreach, differing = 0, 0, []
    for unit in units:
        kernel = forward_kernel(unit)
        if kernel is None:
            continue
        fn = torchgen_methods[str(unit.info.func.func.name)]
        text = _torchgen_text(fn)
        if _blocks(kernel[0]) not in text:
            differing.append(str(unit.info.func.func.name))
        compared += 1
        foreach += unit.info.name.startswith("_foreach")
    assert compared >= 468
    assert foreach == 8  # every foreach entry of 2.13 with a `result:` formula
    assert differing == []


def test_every_forward_formula_is_compiled_foreach_ones_included(units):
    skipped = [u.info.name for u in units if u.has_forward and forward_kernel(u) is None]
    assert skipped == []


def test_saving_statements_stand_verbatim_in_torchgens_variable_type(units, torchgen_methods):
    """What `check --compile` compiles of a kernel's saving (`grad_fn->self_sym_sizes = self.sym_sizes().vec();`,
    `grad_fn->self_ = SavedVariable(self, false);`…) is what torchgen's kernel for that function writes."""
    compared, statements, differing = 0, 0, []
    for unit in units:
        saving = save_function(unit)
        if saving is None:
            continue
        text = _torchgen_text(torchgen_methods[str(unit.info.func.func.name)])
        for line in saving[0].splitlines()[1:-1]:
            statement = line.strip()
            if statement.startswith(("grad_fn->", "if (!original_self")):
                statements += 1
                if statement not in text:
                    differing.append((unit.name, statement))
        compared += 1
    assert compared >= 560
    assert statements >= 1900
    assert differing == []
