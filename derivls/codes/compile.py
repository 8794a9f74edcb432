"""Codes of the compile stage: the C++ compiler on the generated code (`derivls check --compile`)."""

from __future__ import annotations

from derivls.codes.model import TORCHGEN, Severity, Stage, declare

COMPILE_ERROR = declare(
    "compile-error",
    Severity.ERROR,
    Stage.COMPILE,
    "the generated C++ of the entry does not compile",
    what="""`derivls check --compile` (or `compileOnSave`) compiled the code torchgen generates for the entry
    and the compiler refused it; the error is shown on the formula text it comes from (or on `name:` when it
    is in the generated members).""",
    why="""PyTorch's build compiles the same code and fails there.""",
    wrong="- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn(1, 2, 3, 4)\n",
    right="- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n",
    fix="Read the compiler's message; the source `derivls-compile` tells these from derivls's own.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/compile/test_compile.py",
)
