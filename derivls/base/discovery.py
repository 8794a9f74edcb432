"""Every layout rule: where derivatives.yaml, native_functions.yaml, tags.yaml and FunctionsManual live.

Three layouts exist:

- a PyTorch **checkout**: `<root>/tools/autograd/derivatives.yaml`,
  `<root>/aten/src/ATen/native/native_functions.yaml` (+ `tags.yaml` beside it),
  `<root>/torch/csrc/autograd/FunctionsManual.{cpp,h}`; the loader that ships with it is
  `<root>/torchgen/` (PyTorch 2.x) or `<root>/tools/codegen/` (2021);
- a torch **wheel**: `<site>/torchgen/packaged/autograd/derivatives.yaml`,
  `<site>/torchgen/packaged/ATen/native/native_functions.yaml`,
  `<site>/torch/include/torch/csrc/autograd/FunctionsManual.h`;
- a **lone file**: anything else (native_functions.yaml must then be given).

Order for native_functions.yaml: an explicit setting; the wheel layout; a checkout found by walking
up from derivatives.yaml. Nothing else in derivls knows these paths.
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from derivls.base.frozen import frozen_dataclass
from derivls.base.limits import resolve_lenient

CHECKOUT_DERIVATIVES = Path("tools/autograd/derivatives.yaml")
CHECKOUT_NATIVE = Path("aten/src/ATen/native/native_functions.yaml")
PACKAGED_DERIVATIVES = Path("torchgen/packaged/autograd/derivatives.yaml")
PACKAGED_NATIVE = Path("../ATen/native/native_functions.yaml")  # relative to packaged/autograd/
MANUAL_DIR = Path("torch/csrc/autograd")
MANUAL_FILES = ("FunctionsManual.cpp", "FunctionsManual.h")
WHEEL_HEADERS = Path("torch/include")

CHECKOUT = "checkout"
WHEEL = "wheel"
LONE_FILE = "file"


@frozen_dataclass(slots=True)
class Layout:
    """Where a derivatives.yaml stands. `root`: the checkout's root or the wheel's site-packages folder."""

    kind: str  # CHECKOUT | WHEEL | LONE_FILE
    root: Path | None
    has_torchgen: bool = False  # the checkout ships torchgen/ (PyTorch 2.x) or it is a wheel
    has_tools_codegen: bool = False  # the checkout ships tools/codegen/ (the 2021 codegen)


def layout_of(derivatives: Path) -> Layout:
    try:
        here = Path(derivatives).resolve().parent
    except (OSError, RuntimeError):
        return Layout(LONE_FILE, None)
    if here.name == "autograd" and here.parent.name == "packaged" and here.parent.parent.name == "torchgen":
        return Layout(WHEEL, here.parent.parent.parent, has_torchgen=True)
    if here.name == "autograd" and here.parent.name == "tools":
        root = here.parent.parent
        return Layout(
            CHECKOUT,
            root,
            has_torchgen=(root / "torchgen").is_dir(),
            has_tools_codegen=(root / "tools" / "codegen").is_dir(),
        )
    return Layout(LONE_FILE, None)


@frozen_dataclass(slots=True)
class NativeFiles:
    native: Path | None
    tags: Path | None
    tried: tuple[Path, ...]

    def missing_message(self) -> str:
        tried = "\n".join(f"  {p}" for p in self.tried) or "  (nothing)"
        return (
            "native_functions.yaml not found, so schemas cannot be resolved. Looked at:\n"
            f"{tried}\n"
            "Set it with --native FILE (CLI) or the 'derivls.nativeFunctions' setting (editor)."
        )


def find_native_files(derivatives: Path | None, native: Path | None = None, tags: Path | None = None) -> NativeFiles:
    """native_functions.yaml and tags.yaml for `derivatives` (None: only what was given)."""
    if native is not None:
        return NativeFiles(native, tags if tags is not None else tags_beside(native), (native,))
    if derivatives is None:
        return NativeFiles(None, tags, ())
    tried: list[Path] = []
    here = resolve_lenient(derivatives).parent
    packaged = resolve_lenient(here / PACKAGED_NATIVE)  # a symlink loop there: not found, not a traceback
    tried.append(packaged)
    if packaged.is_file() and here.name == "autograd":
        return NativeFiles(packaged, tags if tags is not None else tags_beside(packaged), tuple(tried))
    for folder in (here, *here.parents):
        candidate = folder / CHECKOUT_NATIVE
        tried.append(candidate)
        if candidate.is_file():
            return NativeFiles(candidate, tags if tags is not None else tags_beside(candidate), tuple(tried))
    return NativeFiles(None, tags, tuple(tried))


def tags_beside(native: Path) -> Path | None:
    tags = native.parent / "tags.yaml"
    return tags if tags.is_file() else None


def find_default_derivatives(start: Path | None = None) -> tuple[Path | None, tuple[Path, ...]]:
    """The derivatives.yaml `derivls check` uses with no PATH: a checkout around `start`, else torch's own."""
    start = (start or Path.cwd()).resolve()
    tried: list[Path] = []
    for folder in (start, *start.parents):
        candidate = folder / CHECKOUT_DERIVATIVES
        tried.append(candidate)
        if candidate.is_file():
            return candidate, tuple(tried)
    packaged = packaged_derivatives()
    if packaged is not None:
        tried.append(packaged)
        if packaged.is_file():
            return packaged, tuple(tried)
    return None, tuple(tried)


def nothing_found_message(tried: tuple[Path, ...] | list[Path]) -> str:
    """What `derivls check` says when it finds no derivatives.yaml: every place it looked (the current
    folder first, as find_default_derivatives tries them), and the two ways to get one."""
    places = [f"  {p}" for p in tried]
    if not any(p.as_posix().endswith(PACKAGED_DERIVATIVES.as_posix()) for p in tried):
        places.append(
            f"  {PACKAGED_DERIVATIVES} in every folder of {sys.executable}'s sys.path (no torch installed there)"
        )
    return (
        "no derivatives.yaml given and none found. Looked at:\n"
        + "\n".join(places)
        + "\nTo get one: run `derivls check` inside a PyTorch checkout (it finds tools/autograd/derivatives.yaml),"
        + " or install torch into this Python (`python -m pip install torch`: the wheel carries"
        + f" {PACKAGED_DERIVATIVES} and native_functions.yaml); or pass a PATH."
    )


def packaged_derivatives() -> Path | None:
    """torchgen/packaged/autograd/derivatives.yaml of an installed torch, found without importing it."""
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        candidate = Path(entry) / PACKAGED_DERIVATIVES
        if candidate.is_file():
            return candidate
    return None


# The places a workspace folder may hold its derivatives.yaml: the folder is a checkout, a
# wheel's site-packages, torchgen/, torchgen/packaged/, or the autograd folder itself.
_WORKSPACE_DERIVATIVES = (
    CHECKOUT_DERIVATIVES,
    Path("derivatives.yaml"),
    Path("autograd/derivatives.yaml"),
    Path("packaged/autograd/derivatives.yaml"),
    PACKAGED_DERIVATIVES,
)


def workspace_derivatives(root: Path) -> list[Path]:
    """derivatives.yaml files of a workspace folder (checkout or wheel layout), not searched deeper."""
    return [root / relative for relative in _WORKSPACE_DERIVATIVES if (root / relative).is_file()]


def derivatives_for_native(native: Path) -> list[Path]:
    """The derivatives.yaml that goes with a native_functions.yaml (checkout or wheel layout)."""
    found = []
    parents = native.resolve().parents
    if len(parents) > 4:  # <root>/aten/src/ATen/native/native_functions.yaml
        candidate = parents[4] / CHECKOUT_DERIVATIVES
        if candidate.is_file():
            found.append(candidate)
    if len(parents) > 2:  # torchgen/packaged/ATen/native → torchgen/packaged/autograd
        candidate = parents[2] / "autograd" / "derivatives.yaml"
        if candidate.is_file():
            found.append(candidate)
    return found


def functions_manual_sources(
    derivatives: Path | None, native: Path | None = None, roots: tuple[Path, ...] | list[Path] = ()
) -> list[Path]:
    """FunctionsManual.cpp/.h for a derivatives.yaml: its checkout, the checkout of its
    native_functions.yaml, the workspace `roots`, and a wheel's shipped header; .cpp files first."""
    candidates: list[Path] = []
    layout = layout_of(derivatives) if derivatives is not None else Layout(LONE_FILE, None)
    if layout.kind == CHECKOUT and layout.root is not None:
        candidates.append(layout.root)
    if native is not None:
        parents = Path(native).parents
        if len(parents) > 4:
            candidates.append(parents[4])  # <root>/aten/src/ATen/native/native_functions.yaml
    candidates.extend(roots)
    found: list[Path] = []
    for root in candidates:
        for name in MANUAL_FILES:
            candidate = root / MANUAL_DIR / name
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    if layout.kind == WHEEL and layout.root is not None:
        header = layout.root / WHEEL_HEADERS / MANUAL_DIR / "FunctionsManual.h"
        if header.is_file() and header not in found:
            found.append(header)
    return sorted(found, key=lambda p: p.suffix != ".cpp")
