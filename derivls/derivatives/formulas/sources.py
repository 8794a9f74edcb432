"""Where the C++ sources a formula's names come from live, relative to derivatives.yaml (or to
native_functions.yaml when only that is known).

Checkout (`tools/autograd/derivatives.yaml` under a root):
  torch/csrc/autograd/FunctionsManual.h, aten/src/ATen/templates/TensorBody.h,
  aten/src/ATen/core/TensorBase.h, tools/autograd/templates/Functions.cpp (and beside it Functions.h and
  VariableType.cpp).
Wheel (`<site>/torchgen/packaged/autograd/derivatives.yaml`):
  <site>/torch/include/torch/csrc/autograd/FunctionsManual.h, torchgen/packaged/ATen/templates/TensorBody.h
  and torch/include/ATen/core/TensorBody.h, torch/include/ATen/core/TensorBase.h,
  torchgen/packaged/autograd/templates/Functions.cpp.
Nothing is guessed: a file not found is None, and `missing` names what was looked for.
"""

from __future__ import annotations

import os
from pathlib import Path

from derivls.base.frozen import frozen_dataclass


@frozen_dataclass
class Sources:
    functions_manual: Path | None
    tensor_body: tuple[Path, ...]  # the template and/or the generated header
    tensor_base: Path | None
    functions_template: Path | None
    tried: tuple[Path, ...]

    @property
    def templates(self) -> tuple[Path | None, Path | None, Path | None]:
        """The codegen templates whose `using` lines formulas/headers.py reads: Functions.cpp, Functions.h (the
        names the backward formulas see) and VariableType.cpp (the namespaces the forward formulas see)."""
        t = self.functions_template
        if t is None:
            return None, None, None
        return t, t.with_name("Functions.h"), t.with_name("VariableType.cpp")

    @property
    def missing(self) -> tuple[str, ...]:
        names = []
        if self.functions_manual is None:
            names.append("FunctionsManual.h")
        if not self.tensor_body:
            names.append("TensorBody.h")
        if self.tensor_base is None:
            names.append("TensorBase.h")
        return tuple(names)


def _first(paths: list[Path], tried: list[Path]) -> Path | None:
    for p in paths:
        tried.append(p)
        if p.is_file():
            return p
    return None


def _checkout(root: Path) -> Sources:
    tried: list[Path] = []
    return Sources(
        _first([root / "torch/csrc/autograd/FunctionsManual.h"], tried),
        tuple(p for p in [_first([root / "aten/src/ATen/templates/TensorBody.h"], tried)] if p is not None),
        _first([root / "aten/src/ATen/core/TensorBase.h"], tried),
        _first([root / "tools/autograd/templates/Functions.cpp"], tried),
        tuple(tried),
    )


def _wheel(site: Path) -> Sources:
    tried: list[Path] = []
    include = site / "torch" / "include"
    packaged = site / "torchgen" / "packaged"
    body = [
        _first([packaged / "ATen/templates/TensorBody.h"], tried),
        _first([include / "ATen/core/TensorBody.h"], tried),
    ]
    return Sources(
        _first([include / "torch/csrc/autograd/FunctionsManual.h"], tried),
        tuple(p for p in body if p is not None),
        _first([include / "ATen/core/TensorBase.h"], tried),
        _first([packaged / "autograd/templates/Functions.cpp"], tried),
        tuple(tried),
    )


TORCH_INCLUDE = (
    "DERIVLS_TORCH_INCLUDE"  # a torch `include` folder for the sources the layout lacks (`check --torch-include`)
)


def find_sources(derivatives: str | Path | None = None, native: str | Path | None = None) -> Sources:
    """The sources of the tree `derivatives` (else `native`) belongs to; empty when neither is in a known layout.
    What the layout lacks is looked for in $DERIVLS_TORCH_INCLUDE when it is set (the headers a torch wheel
    installs: torch/csrc/autograd/FunctionsManual.h, ATen/core/TensorBody.h and TensorBase.h)."""
    found = _layout_sources(derivatives, native)
    include = os.environ.get(TORCH_INCLUDE)
    return with_include(found, Path(include)) if include else found


def with_include(found: Sources, include: Path) -> Sources:
    """`found`, with what it lacks taken from a torch `include` folder."""
    tried = list(found.tried)
    manual = found.functions_manual or _first([include / "torch/csrc/autograd/FunctionsManual.h"], tried)
    body = found.tensor_body or tuple(p for p in [_first([include / "ATen/core/TensorBody.h"], tried)] if p)
    base = found.tensor_base or _first([include / "ATen/core/TensorBase.h"], tried)
    return Sources(manual, body, base, found.functions_template, tuple(tried))


def _layout_sources(derivatives: str | Path | None, native: str | Path | None) -> Sources:
    for path in (derivatives, native):
        if path is None:
            continue
        p = Path(path).resolve()
        names = [q.name for q in p.parents[:5]] + [""] * 5
        if names[:3] == ["autograd", "packaged", "torchgen"]:
            return _wheel(p.parents[3])  # <site>/torchgen/packaged/autograd/derivatives.yaml
        if names[:4] == ["native", "ATen", "packaged", "torchgen"]:
            return _wheel(p.parents[4])  # <site>/torchgen/packaged/ATen/native/native_functions.yaml
        if names[:2] == ["autograd", "tools"]:
            return _checkout(p.parents[2])  # <root>/tools/autograd/derivatives.yaml
        if names[:4] == ["native", "ATen", "src", "aten"]:
            return _checkout(p.parents[4])  # <root>/aten/src/ATen/native/native_functions.yaml
    return Sources(None, (), None, None, ())
