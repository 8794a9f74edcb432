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

from pathlib import Path

from derivls.frozen import frozen_dataclass


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


def find_sources(derivatives: str | Path | None = None, native: str | Path | None = None) -> Sources:
    """The sources of the tree `derivatives` (else `native`) belongs to; empty when neither is in a known layout."""
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
