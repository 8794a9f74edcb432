"""Where the derivatives.yaml, native_functions.yaml and tags.yaml of a workspace live.

Order for native_functions.yaml: an explicit setting; a pytorch checkout found
by walking up from derivatives.yaml; the packaged layout of a torch wheel
(`torchgen/packaged/autograd/derivatives.yaml` → `../ATen/native/`).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

from derivls.frozen import frozen_dataclass
from derivls.limits import resolve_lenient

CHECKOUT_DERIVATIVES = Path("tools/autograd/derivatives.yaml")
CHECKOUT_NATIVE = Path("aten/src/ATen/native/native_functions.yaml")
PACKAGED_NATIVE = Path("../ATen/native/native_functions.yaml")


@frozen_dataclass
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


def find_native_files(derivatives: Path, native: Path | None = None, tags: Path | None = None) -> NativeFiles:
    tried: list[Path] = []
    if native is not None:
        return NativeFiles(native, tags if tags is not None else _tags_beside(native), (native,))
    here = resolve_lenient(derivatives).parent
    packaged = resolve_lenient(here / PACKAGED_NATIVE)  # a symlink loop there: not found, not a traceback
    tried.append(packaged)
    if packaged.is_file() and here.name == "autograd":
        return NativeFiles(packaged, tags if tags is not None else _tags_beside(packaged), tuple(tried))
    for folder in (here, *here.parents):
        candidate = folder / CHECKOUT_NATIVE
        tried.append(candidate)
        if candidate.is_file():
            return NativeFiles(candidate, tags if tags is not None else _tags_beside(candidate), tuple(tried))
    return NativeFiles(None, tags, tuple(tried))


def _tags_beside(native: Path) -> Path | None:
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


def packaged_derivatives() -> Path | None:
    """torchgen/packaged/autograd/derivatives.yaml of an installed torch, found without importing it."""
    for entry in sys.path:
        if not entry or not os.path.isdir(entry):
            continue
        candidate = Path(entry) / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"
        if candidate.is_file():
            return candidate
    return None
