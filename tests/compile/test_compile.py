"""`derivls check --compile`: the generated C++ compiles, and compiler errors land on the formula.

Slow (a C++ compiler; the precompiled header is built once into the user cache directory and
reused by later runs): run with `python -m pytest -m compile`.
"""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from derivls.base.diagnostics import Span
from derivls.compile.document import compile_file
from derivls.project.analyse import analyse_path

pytestmark = pytest.mark.compile

# (the formula as shipped, the seeded mistake, the mistaken text the error must be on, a word of the message)
SEEDS = [
    # wrong arity for a FunctionsManual helper
    (
        "  self: mul_tensor_backward(grad, other, self.scalar_type())\n"
        "  other: mul_tensor_backward(grad, self, other.scalar_type())\n"
        "  result: other_t * self_p + self_t * other_p\n",
        "  self: mul_tensor_backward(grad, other)\n"
        "  other: mul_tensor_backward(grad, self, other.scalar_type())\n"
        "  result: other_t * self_p + self_t * other_p\n",
        "mul_tensor_backward",
        "mul_tensor_backward",
    ),
    # a Tensor where a SymIntArrayRef is wanted
    (
        "      self: grad.expand_symint(self.sym_sizes())\n      result: auto_linear\n",
        "      self: grad.expand_symint(self)\n      result: auto_linear\n",
        "self)",
        "SymIntArrayRef",
    ),
    # `sym_size()` without an index
    (
        "  self: col2im_symint(grad, {self.sym_size(-2), self.sym_size(-1)}, kernel_size, dilation, padding, stride)\n",
        "  self: col2im_symint(grad, {self.sym_size(-2), self.sym_size()}, kernel_size, dilation, padding, stride)\n",
        "sym_size()",
        # g++ names the method; clang++ names the missing argument (the candidate it quoted from TensorBase.h,
        # naming sym_size, is torch's header text: no longer quoted, issue 54)
        ("sym_size", "argument 'dim' was not specified"),
    ),
    # a misspelled method, in a forward-mode formula
    (
        "- name: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
        "  self: handle_r_to_c(self.scalar_type(), grad)\n"
        "  other: handle_r_to_c(other.scalar_type(), maybe_multiply(-grad, alpha.conj()))\n"
        "  result: self_t - maybe_multiply(other_t, alpha)\n",
        "- name: sub.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n"
        "  self: handle_r_to_c(self.scalar_type(), grad)\n"
        "  other: handle_r_to_c(other.scalar_type(), maybe_multiply(-grad, alpha.conj()))\n"
        "  result: self_t.sbu(maybe_multiply(other_t, alpha))\n",
        "sbu",
        "sbu",
    ),
    # a list where its element is wanted, in a foreach function's forward formula (inside the loop
    # over the lists, where the inputs are read at `[i]`)
    (
        "  result: scalars[i] + at::where(self_p == scalars[i], at::scalar_tensor(0.5, result[i].options()), "
        "(self_p < scalars[i])",
        "  result: scalars + at::where(self_p == scalars[i], at::scalar_tensor(0.5, result[i].options()), "
        "(self_p < scalars[i])",
        "scalars +",
        "ArrayRef",
    ),
]
SEEDED_OPS = ["mul.Tensor", "sum", "im2col", "sub.Tensor", "_foreach_minimum.ScalarList"]


def _position(text: str, needle: str, within: str) -> tuple[int, int]:
    """0-based line and column of the first `needle` inside the (unique) text `within`."""
    offset = text.index(within) + within.index(needle)
    line = text.count("\n", 0, offset)
    return line, offset - (text.rfind("\n", 0, offset) + 1)


@pytest.fixture(scope="module")
def seeded(real_files, tmp_path_factory) -> tuple[Path, str]:
    folder = tmp_path_factory.mktemp("seeded") / "autograd"
    folder.mkdir()
    shutil.copytree(real_files.derivatives.parent / "templates", folder / "templates")
    text = real_files.derivatives.read_text(encoding="utf-8")
    for shipped, mistaken, _, _ in SEEDS:
        assert text.count(shipped) >= 1, shipped
        text = text.replace(shipped, mistaken, 1)
    path = folder / "derivatives.yaml"
    path.write_text(text, encoding="utf-8")
    return path, text


def _torch_include(real_files) -> str:
    return str(real_files.packaged.parent.parent / "torch" / "include")


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_seeded_type_and_overload_mistakes_are_reported_on_the_mistaken_formula_text(real_files, seeded, cxx):
    assert shutil.which(cxx), f"{cxx} is needed (.ci/run installs it)"
    path, text = seeded
    analysis, _ = analyse_path(path, real_files.native, real_files.tags, "torchgen")
    # The loader and the codegen checks cannot see these mistakes; the formula checks see four of them (a
    # helper's argument count, a Tensor for a SymIntArrayRef, `sym_size()` without its index, a method no
    # Tensor has; not the foreach list for its element): the compiler must report all five.
    assert analysis is not None
    errors = [d for d in analysis.diagnostics if d.severity == 1]
    assert sorted(d.code for d in errors) == [
        "formula-argument-count",
        "formula-argument-count",
        "formula-argument-type",
        "formula-unknown-method",
    ], errors
    result = compile_file(path, analysis, cxx=cxx, torch_include=_torch_include(real_files), ops=SEEDED_OPS)
    diagnostics = result.diagnostics
    for _shipped, mistaken, needle, word in SEEDS:
        line, column = _position(text, needle, mistaken)
        on_it = [
            d
            for d in diagnostics
            if d.span.line == line and d.span.column <= column + len(needle) and d.span.end_column >= column
        ]
        assert on_it, f"no compiler error on {needle!r} at {line + 1}:{column + 1}: {diagnostics}"
        words = word if isinstance(word, tuple) else (word,)
        assert any(w in d.message for d in on_it for w in words), on_it
    assert all(d.code == "compile-error" for d in diagnostics)


@pytest.mark.parametrize("cxx", ["g++", "clang++"])
def test_the_unmodified_formulas_of_the_seeded_functions_compile(real_files, cxx):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags, "torchgen")
    path = real_files.derivatives
    result = compile_file(path, analysis, cxx=cxx, torch_include=_torch_include(real_files), ops=SEEDED_OPS)
    assert result.diagnostics == []
    assert result.stats.units >= 4


def test_the_real_2_13_file_compiles_with_no_error(real_files):
    analysis, _ = analyse_path(real_files.derivatives, real_files.native, real_files.tags, "torchgen")
    result = compile_file(real_files.derivatives, analysis, torch_include=_torch_include(real_files))
    assert result.stats.units > 700
    assert result.diagnostics == [], "\n".join(f"{d.span.line + 1}: {d.message}" for d in result.diagnostics[:10])


def test_an_error_in_a_folded_multiline_formula_lands_on_its_continuation_line(real_files, tmp_path):
    folder = tmp_path / "autograd"
    folder.mkdir()
    text = real_files.derivatives.read_text(encoding="utf-8")
    shipped = "  self: mul_tensor_backward(grad, other, self.scalar_type())\n"
    mistaken = "  self: mul_tensor_backward(grad,\n    other, self.scalar_typo())\n"
    text = text.replace(shipped, mistaken, 1)
    path = folder / "derivatives.yaml"
    path.write_text(text, encoding="utf-8")
    analysis, _ = analyse_path(path, real_files.native, real_files.tags, "torchgen")
    result = compile_file(path, analysis, torch_include=_torch_include(real_files), ops=["mul.Tensor"])
    line, column = _position(text, "scalar_typo", mistaken)
    assert any(d.span == Span(line, column, line, column + len("scalar_typo")) for d in result.diagnostics), (
        result.diagnostics
    )


def test_a_mistake_in_a_value_the_kernel_saves_is_reported_on_the_formula_text(real_files, tmp_path):
    """`dim.sym_sizes()` (of an int64_t) is no error of Functions.cpp: torchgen saves it as `dim_sym_sizes`,
    computed by the VariableType kernel. The compiler sees it there, and the error lands on the formula."""
    folder = tmp_path / "autograd"
    folder.mkdir()
    shutil.copytree(real_files.derivatives.parent / "templates", folder / "templates")
    shipped = "index_select_backward_symint(grad, self.sym_sizes(), dim, index)"
    mistaken = "index_select_backward_symint(grad, dim.sym_sizes(), dim, index)"
    text = real_files.derivatives.read_text(encoding="utf-8").replace(shipped, mistaken, 1)
    path = folder / "derivatives.yaml"
    path.write_text(text, encoding="utf-8")
    analysis, _ = analyse_path(path, real_files.native, real_files.tags, "torchgen")
    result = compile_file(path, analysis, torch_include=_torch_include(real_files), ops=["index_select"])
    line, column = _position(text, "sym_sizes", mistaken)  # the member the compiler names
    assert [(d.span.line, d.span.column, d.span.end_column) for d in result.diagnostics] == [
        (line, column, column + len("sym_sizes"))
    ], result.diagnostics
    assert "sym_sizes" in result.diagnostics[0].message and "(saved values)" in result.diagnostics[0].message
