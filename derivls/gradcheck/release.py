"""Which PyTorch release a derivatives.yaml follows, and whether a torch matches it (said
before a gradcheck runs)."""

from __future__ import annotations

from pathlib import Path


def file_release(path: Path) -> str | None:
    """The PyTorch version the file belongs to (a checkout's version.txt, a wheel's torch/version.py)."""
    from derivls.derivatives import releases

    for found in (releases._checkout_version(path), releases._wheel_version(path, None)):
        if found is not None:
            return found[1]
    return None


def _minor(version: str) -> tuple[int, int] | None:
    from derivls.derivatives.releases import parse_version

    parsed = parse_version(version.split("+")[0])
    return (parsed[0], parsed[1]) if parsed else None


def release_mismatch(path: Path, torch_version: str) -> str | None:
    """Why the file's formulas cannot be compiled against this torch (None: they can)."""
    release = file_release(path)
    if release is None:
        return None
    if _minor(release) != _minor(torch_version):
        return (
            f"{path} is from PyTorch {release} but the chosen Python has torch {torch_version}: the formulas are "
            "compiled against that torch's headers; choose its Python (--python) or pass --force"
        )
    return None


__all__ = ["file_release", "release_mismatch"]
