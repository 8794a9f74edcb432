"""Codes of the gradcheck stage: the formulas compiled as the build would and checked against finite
differences of the real kernels by `torch.autograd.gradcheck` (`derivls gradcheck`, the editor's code lens)."""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

GRADCHECK_MISMATCH = declare(
    "gradcheck-mismatch",
    Severity.ERROR,
    Stage.GRADCHECK,
    "the formula compiles but disagrees with finite differences of the real kernel",
    what="""`derivls gradcheck` compiled the entry's formulas exactly as the build would, put them behind the
    real CPU kernel and ran `torch.autograd.gradcheck` (and `check_forward_ad` for forward formulas) on
    OpInfo's sample inputs: the formula's gradient differs from the numerical one. The message gives the
    sample (shapes, dtypes, kwargs), the input varied and the largest mismatch (numerical vs analytical).""",
    why="""The build accepts the formula; PyTorch's test_ops (`test_fn_grad`, `test_fn_gradgrad`,
    `test_forward_mode_AD`) would fail on it, and users would get wrong gradients.""",
    wrong="- name: acos(Tensor self) -> Tensor\n  self: grad * ((-self * self + 1).rsqrt()).conj()\n",
    right="- name: acos(Tensor self) -> Tensor\n  self: grad * -((-self * self + 1).rsqrt()).conj()\n",
    fix="Compare the formula with the op's math (a sign, a missing `.conj()`, a reduction, swapped inputs); "
    "docs/gradcheck.md says what the check proves and what it cannot.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/gradcheck/test_acos.py",
)
