"""Codegen-stage parity: seeded edits of the real 2.13 derivatives.yaml judged by torchgen's own autograd
codegen (gen_autograd + gen_autograd_python's per-function generators, from the wheel, in one subprocess):
whatever it rejects, derivls reports an error in the edited entry and nowhere else; whatever it
accepts, derivls reports no error at all. Also records how long torchgen takes per edit.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalyzer

pytestmark = pytest.mark.slow  # torchgen's codegen on every seeded edit: a minute; run by .ci/run

ROOT = Path(__file__).resolve().parents[2]


@dataclass(frozen=True)
class Edit:
    entry: str  # the `- name:` line (without "- name: ") of the entry to edit
    old: str  # replaced (first occurrence inside that entry); "" appends `new` as a new entry after it
    new: str
    expect: str | None  # the derivls code expected (None: torchgen accepts); the verdict is torchgen's


ABS = "abs(Tensor self) -> Tensor"
MUL = "mul.Tensor(Tensor self, Tensor other) -> Tensor"
ADD = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
MAX_DIM = "max.dim(Tensor self, int dim, bool keepdim=False) -> (Tensor values, Tensor indices)"
SORT = "sort(Tensor self, int dim=-1, bool descending=False) -> (Tensor values, Tensor indices)"
TOPK = "topk(Tensor self, SymInt k, int dim=-1, bool largest=True, bool sorted=True) -> (Tensor values, Tensor indices)"
EIG = "linalg_eig(Tensor self) -> (Tensor eigenvalues, Tensor eigenvectors)"
ISNAN = "isnan(Tensor self) -> Tensor"
ACOSH_ = "acosh_(Tensor(a!) self) -> Tensor(a!)"
SQUARE_ENTRY = "- name: square(Tensor self) -> Tensor\n  self: 2 * grad * self\n\n"
SPARSE_ADDMM = "_sparse_addmm(Tensor self, Tensor mat1, Tensor mat2, *, Scalar beta=1, Scalar alpha=1) -> Tensor"
MULTI_MARGIN = (
    "multi_margin_loss(Tensor self, Tensor target, Scalar p=1, Scalar margin=1, Tensor? weight=None, "
    "int reduction=Mean) -> Tensor"
)
VIEW_DTYPE = "view.dtype(Tensor(a) self, ScalarType dtype) -> Tensor(a)"
FOREACH_DIV_ENTRY = "- name: _foreach_div_.Tensor(Tensor(a!)[] self, Tensor other) -> ()\n  self: grad\n\n"
ABS_FWD = "result: handle_r_to_c(result.scalar_type(), self_t.conj() * self_p.sgn())"

EDITS = {
    # rejected by the codegen
    "forward-no-tangent": Edit(ABS, ABS_FWD, "result: self_p.sgn()", "codegen-forward-no-tangent"),
    "forward-no-tangent-mul": Edit(
        MUL, "result: other_t * self_p + self_t * other_p", "result: other_p * self_p", "codegen-forward-no-tangent"
    ),
    "forward-for-extra-output": Edit(
        MAX_DIM, "  values: gather", "  indices: self_t\n  values: gather", "codegen-forward-count"
    ),
    "forward-for-non-differentiable-output": Edit(
        SORT, "  values: gather", "  indices: self_t\n  values: gather", "codegen-forward-count"
    ),
    "forward-for-extra-output-topk": Edit(
        TOPK, "  values: gather", "  indices: gather(self_t, dim, indices)\n  values: gather", "codegen-forward-count"
    ),
    "forward-missing-for-differentiable-output": Edit(SORT, "[True, False]", "[True, True]", "codegen-forward-count"),
    "nothing-differentiable": Edit(SORT, "[True, False]", "[False, False]", "codegen-derivative-ignored"),
    "nothing-differentiable-max": Edit(
        MAX_DIM,
        "  self: value",
        "  output_differentiability: [False, False]\n  self: value",
        "codegen-derivative-ignored",
    ),
    "output-differentiability-too-short": Edit(
        SORT, "[True, False]", "[True]", "codegen-output-differentiability-length"
    ),
    "output-differentiability-too-long": Edit(
        ABS,
        "  self: grad",
        "  output_differentiability: [True, True]\n  self: grad",
        "codegen-output-differentiability-length",
    ),
    "output-differentiability-false-inplace": Edit(
        ABS,
        "  self: grad",
        "  output_differentiability: [False]\n  self: grad",
        "codegen-output-differentiability-inplace",
    ),
    "derivative-for-scalar": Edit(
        SPARSE_ADDMM, "  self: maybe", "  beta: grad\n  self: maybe", "codegen-derivative-for-non-tensor"
    ),
    "derivative-for-int": Edit(
        MULTI_MARGIN, "  target: non", "  reduction: grad\n  target: non", "codegen-derivative-for-non-tensor"
    ),
    "derivative-for-scalar-with-forward-use": Edit(
        ADD, "  result: self_t", "  alpha: grad\n  result: self_t", "forward-uses-base-name"
    ),
    "output-differentiability-inplace-foreach": Edit(
        ADD,
        "  self: handle",
        "  output_differentiability: [True]\n  self: handle",
        "codegen-output-differentiability-length",
    ),
    "dont-require-derivative": Edit(ISNAN, "self: non_differentiable", "self: grad", "codegen-derivative-ignored"),
    "composite-implicit": Edit(ABS, "", SQUARE_ENTRY, "codegen-not-abstract"),
    "strides-inplace": Edit(
        MUL,
        "mul_tensor_backward(grad, other, self.scalar_type())",
        "grad * other * self.sym_strides()[0]",
        "codegen-strides-inplace",
    ),
    "inplace-reads-self-p": Edit(
        ACOSH_,
        '"inplace version of acosh")\n',
        '"inplace version of acosh")\n  result: self_t * self_p\n',
        "codegen-inplace-uses-self-p",
    ),
    "foreach-inplace-own-entry": Edit(ABS, "", FOREACH_DIV_ENTRY, "codegen-foreach-argument-type"),
    "view-with-dtype-differentiable": Edit(
        VIEW_DTYPE, "output_differentiability: [False]", "self: grad", "codegen-view-function"
    ),
    # accepted by the codegen
    "backward-tweak": Edit(ABS, "grad * self.sgn()", "grad * self.sgn() * 2", None),
    "output-differentiability-true": Edit(
        ABS,
        "  self: grad",
        "  output_differentiability: [True]\n  self: grad",
        "codegen-output-differentiability-length",
    ),  # via _foreach_abs_
    "output-differentiability-true-no-foreach": Edit(
        MULTI_MARGIN, "  self: multi", "  output_differentiability: [True]\n  self: multi", None
    ),
    "output-differentiability-as-implied": Edit(
        MAX_DIM, "  self: value", "  output_differentiability: [True, False]\n  self: value", None
    ),
    "forward-removed": Edit(
        EIG, "  eigenvalues, eigenvectors: linalg_eig_jvp", "  # eigenvalues, eigenvectors: x", None
    ),
    "forward-one-tangent": Edit(MUL, "result: other_t * self_p + self_t * other_p", "result: self_t * other_p", None),
    "inplace-reads-result": Edit(
        ACOSH_, '"inplace version of acosh")\n', '"inplace version of acosh")\n  result: self_t * result\n', None
    ),
}


# Judged a second time by the whole gen_autograd + gen_autograd_python (one rejected, one accepted).
FULL_RUN = ("forward-for-extra-output", "forward-one-tangent")


def _mutate(text: str, edit: Edit) -> tuple[str, int, int]:
    """The edited text and the 0-based line range [first, last] of the edited entry (or the added one)."""
    start = text.index(f"- name: {edit.entry}\n")
    end = text.find("\n- name:", start + 1)
    if edit.old == "":
        insert = end + 1
        mutated = text[:insert] + edit.new + text[insert:]
        first = mutated.count("\n", 0, insert)
        return mutated, first, first + edit.new.count("\n")
    at = text.index(edit.old, start)
    assert at < end, f"{edit.old!r} is not in the entry {edit.entry}"
    mutated = text[:at] + edit.new + text[at + len(edit.old) :]
    first = mutated.count("\n", 0, start)
    last = mutated.count("\n", 0, mutated.find("\n- name:", start + 1))
    return mutated, first, last


@pytest.fixture(scope="module")
def edited(real_files, tmp_path_factory) -> tuple[Path, list[str]]:
    """A folder per seeded edit (its derivatives.yaml, deprecated.yaml, templates) and the DIR=SCHEMA arguments."""
    root = tmp_path_factory.mktemp("codegen-stage")
    text = real_files.derivatives.read_text()
    args = []
    for name, edit in EDITS.items():
        folder = root / name
        folder.mkdir()
        (folder / "derivatives.yaml").write_text(_mutate(text, edit)[0])
        (folder / "deprecated.yaml").write_text((real_files.packaged / "autograd" / "deprecated.yaml").read_text())
        os.symlink(real_files.packaged / "autograd" / "templates", folder / "templates")
        schema = edit.entry if edit.old != "" else edit.new.split("\n")[0].removeprefix("- name: ")
        args.append(f"{folder}={schema}")
    return root, args


def _torchgen_codegen(real_files, out: Path, args: list[str]) -> list[dict]:
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "tests.formulas.torchgen_codegen",
            str(real_files.native),
            str(real_files.tags),
            str(out),
            *args,
        ],
        capture_output=True,
        text=True,
        cwd=ROOT,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return list(map(json.loads, run.stdout.splitlines()))


@pytest.fixture(scope="module")
def verdicts(real_files, edited) -> dict[str, dict]:
    """torchgen's verdict on each edit, from the generators restricted to the edited entry."""
    root, args = edited
    results = _torchgen_codegen(real_files, root / "out", args)
    seconds = [r["seconds"] for r in results]
    print(
        f"\ntorchgen codegen per edit: first {seconds[0]:.1f} s (parses native_functions.yaml), "
        f"then median {sorted(seconds[1:])[len(seconds[1:]) // 2]:.2f} s"
    )
    return {Path(r["dir"]).name: r for r in results}


@pytest.fixture(scope="module")
def full_verdicts(real_files, edited) -> dict[str, dict]:
    """The whole gen_autograd + gen_autograd_python on the FULL_RUN edits (minutes on a busy machine)."""
    root, _ = edited
    results = _torchgen_codegen(real_files, root / "out-full", [f"--full={root / name}" for name in FULL_RUN])
    print("\nthe whole torchgen codegen: " + ", ".join(f"{r['seconds']:.1f} s" for r in results))
    return {Path(r["dir"]).name: r for r in results}


@pytest.fixture(scope="module")
def analyzer(real_files):
    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    return DocumentAnalyzer(index, str(real_files.native))


@pytest.mark.slow  # the whole codegen twice: the per-edit verdicts below stay in the default run
def test_the_restricted_run_judges_like_the_whole_codegen(verdicts, full_verdicts):
    full = full_verdicts
    assert set(full) == set(FULL_RUN)
    assert {n: r["ok"] for n, r in full.items()} == {n: verdicts[n]["ok"] for n in FULL_RUN}


def test_the_seeded_edits_cover_both_verdicts_and_the_codegen_sites(verdicts):
    rejected = {n for n, r in verdicts.items() if not r["ok"]}
    assert len(EDITS) >= 20 and rejected and rejected != set(EDITS)
    assert len({e.expect for e in EDITS.values() if e.expect}) >= 10


@pytest.mark.parametrize("name", list(EDITS))
def test_derivls_agrees_with_torchgen_codegen_on_a_seeded_edit(name, verdicts, analyzer, real_files):
    edit = EDITS[name]
    verdict = verdicts[name]
    mutated, first, last = _mutate(real_files.derivatives.read_text(), edit)
    errors = [d for d in analyzer.analyse(mutated).diagnostics if d.severity == 1]
    if verdict["ok"]:
        assert errors == [], f"torchgen accepts it, derivls reports {[(d.code, d.span.line) for d in errors]}"
        return
    assert errors, f"torchgen rejects it ({verdict['error'][:300]}), derivls reports nothing"
    outside = [(d.code, d.span.line) for d in errors if not first <= d.span.line <= last]
    assert outside == [], f"errors outside the edited entry (lines {first}-{last})"
    if edit.expect is not None:
        assert edit.expect in {d.code for d in errors}, (verdict["error"][:300], [d.code for d in errors])
