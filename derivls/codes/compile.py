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

COMPILE_LIMIT = declare(
    "compile-limit",
    Severity.ERROR,
    Stage.COMPILE,
    "the compiler ran out of its time or memory bound on the entry's generated code",
    what="""Every compiler derivls runs is bounded: a wall-clock and CPU time bound, an address-space bound
    (`DERIVLS_COMPILE_SECONDS`, `DERIVLS_COMPILE_MEMORY_MB` in your environment change them). The entry's
    generated code made the compiler reach one, so it was stopped; a batch that reaches one is compiled again
    entry by entry, so the diagnostic stands on the entry that needs it.""",
    why="""A formula that takes the compiler minutes or gigabytes (an expression thousands of operators long, a
    template that instantiates itself exponentially) costs every PyTorch build as much, or never finishes.""",
    wrong="- name: abs(Tensor self) -> Tensor\n  self: grad * (1 + 1 + 1 + … 300,000 times …)\n",
    right="- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n",
    fix="Write the formula as a call of a helper in FunctionsManual.cpp instead of one huge expression; raise the "
    "bounds only when the machine is unusually slow.",
    profiles=(TORCHGEN,),
    example=None,
    tested_by="tests/reliability/test_bounded_children.py",
)
