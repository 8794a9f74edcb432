"""The registry of every diagnostic code derivls can emit: each declared once, with its user doc.

A code is a `Code` (model.py): its name (a str), default severity, stage, the profiles it applies to, a
one-line summary and its doc (what it means, why the build rejects it, a wrong and a right example, the
quick fix). The catalogs declare them by stage: yamlfile.py, loader.py, formula.py, codegen.py,
setup.py, compile.py, gradcheck.py, native.py; this package imports them all, so the registry is complete once `derivls.codes`
is imported. Every layer may import it (it imports nothing of derivls but derivls.codes).

To add a code: declare it in the catalog of its stage —

    MY_CODE = declare("my-code", Severity.ERROR, Stage.LOADER, "one line", what=..., why=..., wrong=..., right=...)

— emit it with `error(span, MY_CODE, message)` (derivls.base.diagnostics), and regenerate the docs
(`python -m derivls.codes.docs`). tests/codes/ runs its `wrong` example (it must report the code) and its
`right` one (it must not).

`derivls explain [CODE]` prints the docs; docs/diagnostics.md is generated from here.
"""

from __future__ import annotations

from derivls.codes import codegen, compile, formula, gradcheck, loader, native, setup, yamlfile
from derivls.codes.model import BOTH, LEGACY, TORCHGEN, Code, Severity, Stage, all_codes, declare, lookup

__all__ = [
    "BOTH",
    "LEGACY",
    "TORCHGEN",
    "Code",
    "Severity",
    "Stage",
    "all_codes",
    "codegen",
    "compile",
    "declare",
    "formula",
    "gradcheck",
    "loader",
    "lookup",
    "native",
    "setup",
    "yamlfile",
]
