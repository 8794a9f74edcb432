"""Compile a DocumentAnalysis's entries: what `check --compile` and compile-on-save's worker
call."""

from __future__ import annotations

from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def compile_file(
    path: Path,
    analysis: Any,
    *,
    cxx: str | None = None,
    torch_include: str | None = None,
    ops: list[str] | None = None,
    lines: Any = None,
    jobs: int = 2,
    cancel: Any = None,
    progress: Any = None,
) -> Any:
    """Compile a DocumentAnalysis's entries; a CompileResult. Raises SetupError, LookupError."""
    from derivls.compile.engine import compile_units
    from derivls.compile.file_templates import Templates
    from derivls.compile.toolchain import Toolchain
    from derivls.compile.units import collect_units

    toolchain = Toolchain.find(path, cxx, torch_include)
    units = collect_units(analysis, ops, lines)
    if ops and not units:
        raise LookupError(f"no autograd node or function named {', '.join(ops)}")
    return compile_units(units, toolchain, Templates(path), jobs=jobs, cancel=cancel, progress=progress)


__all__ = ["compile_file"]
