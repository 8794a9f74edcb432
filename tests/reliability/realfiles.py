"""The real 2.13 files (torch's wheel), and workspace layouts built around them."""

from __future__ import annotations

import importlib.util
from pathlib import Path

_spec = importlib.util.find_spec("torchgen")  # found, not imported
assert _spec is not None and _spec.origin is not None, "the reliability suite needs torch (torchgen) installed"
PACKAGED = Path(_spec.origin).parent / "packaged"
REAL_DERIVATIVES = PACKAGED / "autograd" / "derivatives.yaml"
REAL_NATIVE = PACKAGED / "ATen" / "native" / "native_functions.yaml"
REAL_TAGS = PACKAGED / "ATen" / "native" / "tags.yaml"


def packaged_layout(root: Path, aten: Path | None = None) -> Path:
    """root/torchgen/packaged/{autograd/derivatives.yaml (not written), ATen -> the real ATen folder};
    the path of derivatives.yaml."""
    packaged = root / "torchgen" / "packaged"
    (packaged / "autograd").mkdir(parents=True)
    (packaged / "ATen").symlink_to(aten or REAL_NATIVE.parent.parent, target_is_directory=True)
    return packaged / "autograd" / "derivatives.yaml"
