"""Where the files around a derivatives.yaml are, for navigation and workspace symbols.

The only layout walking in derivls.ide and derivls.server (checkout: `tools/autograd/`,
`aten/src/ATen/native/`, `torch/csrc/autograd/`; wheel: `torchgen/packaged/…`, `torch/include/…`).
It belongs with discovery.py; keep it in this one module until it moves there.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path

MANUAL = Path("torch/csrc/autograd")
MANUAL_FILES = ("FunctionsManual.cpp", "FunctionsManual.h")
WORKSPACE_DERIVATIVES = (
    "tools/autograd/derivatives.yaml",
    "derivatives.yaml",
    "autograd/derivatives.yaml",
    "packaged/autograd/derivatives.yaml",
    "torchgen/packaged/autograd/derivatives.yaml",
)


def manual_files(derivatives: Path | None, native: Path | None, roots: Iterable[Path]) -> list[Path]:
    """FunctionsManual.cpp/.h: of the checkout around the files, of the workspace folders, torch's headers."""
    candidates: list[Path] = []
    if derivatives is not None:
        parents = derivatives.resolve().parents
        if len(parents) > 2 and derivatives.parent.name == "autograd" and derivatives.parent.parent.name == "tools":
            candidates.append(parents[2])
    if native is not None and len(native.parents) > 4:
        candidates.append(native.parents[4])  # <root>/aten/src/ATen/native/native_functions.yaml
    candidates.extend(roots)
    found: list[Path] = []
    for root in candidates:
        for name in MANUAL_FILES:
            candidate = root / MANUAL / name
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    if (
        derivatives is not None
        and derivatives.parent.name == "autograd"
        and derivatives.parent.parent.name == "packaged"
    ):
        # a torch wheel ships FunctionsManual.h under torch/include
        site = derivatives.resolve().parents[3]
        header = site / "torch" / "include" / MANUAL / "FunctionsManual.h"
        if header.is_file():
            found.append(header)
    return found


def derivatives_for_native(native: Path) -> list[Path]:
    """The derivatives.yaml that goes with a native_functions.yaml (checkout or packaged layout)."""
    found = []
    parents = native.resolve().parents
    if len(parents) > 4:
        candidate = parents[4] / "tools" / "autograd" / "derivatives.yaml"
        if candidate.is_file():
            found.append(candidate)
    if len(parents) > 2:
        candidate = parents[2] / "autograd" / "derivatives.yaml"  # packaged: <packaged>/ATen/native → autograd
        if candidate.is_file():
            found.append(candidate)
    return found


def workspace_derivatives(roots: Iterable[Path]) -> list[Path]:
    """derivatives.yaml files in the workspace folders (checkout or packaged layout), not searched deeper."""
    found: list[Path] = []
    for root in roots:
        for relative in WORKSPACE_DERIVATIVES:
            candidate = root / relative
            if candidate.is_file():
                try:
                    path = candidate.resolve()
                except (OSError, RuntimeError):
                    path = candidate
                if path not in found:
                    found.append(path)
    return found


__all__ = ["MANUAL_FILES", "derivatives_for_native", "manual_files", "workspace_derivatives"]
