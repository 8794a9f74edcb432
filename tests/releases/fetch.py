"""Fetch the torchgen of PyTorch releases into a cache outside the repository.

For each release X, ``<cache>/X/`` holds only what the release tests read from that release's wheel:

    torchgen/                                              (the whole package, packaged/ included)
    torch/version.py
    torch/include/torch/csrc/autograd/FunctionsManual.h
    torch/include/torch/csrc/autograd/generated/Functions.h
    torch/include/ATen/core/TensorBody.h, TensorBase.h

The wheel (0.5-0.9 GB) is downloaded with pip into ``<cache>/wheels/X/``, the files above are
extracted, and the wheel is deleted. The cache is ``$DERIVLS_RELEASES_CACHE``, else
``~/.cache/derivls-test-releases``. A release whose folder is complete is not fetched again.

    python -m tests.releases.fetch [X ...]      # default: every release of RELEASES
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import time
import zipfile
from pathlib import Path

# every release the matrix covers (2.13.0 included: CI fetches it like the others)
RELEASES = (
    "2.1.2", "2.2.2", "2.3.1", "2.4.1", "2.5.1", "2.6.0", "2.7.1", "2.8.0",
    "2.9.1", "2.10.0", "2.11.0", "2.12.1", "2.13.0", "2.14.1", "2.15.0",
)  # fmt: skip

FILES = (
    "torch/version.py",
    "torch/include/torch/csrc/autograd/FunctionsManual.h",
    "torch/include/torch/csrc/autograd/generated/Functions.h",
    "torch/include/ATen/core/TensorBody.h",  # with TensorBase.h: the Tensor methods formulas may call
    "torch/include/ATen/core/TensorBase.h",
)
PREFIXES = ("torchgen/",)
COMPLETE = ".complete"  # written last: a folder without it is a partial extraction


def cache_dir() -> Path:
    configured = os.environ.get("DERIVLS_RELEASES_CACHE")
    return Path(configured).expanduser() if configured else Path.home() / ".cache" / "derivls-test-releases"


def release_dir(version: str, cache: Path | None = None) -> Path:
    return (cache or cache_dir()) / version


def is_complete(folder: Path) -> bool:
    """Every file of FILES is there (a folder extracted by an older FILES is fetched again), with the
    marker written last or, for a folder extracted by hand, torchgen/packaged/."""
    if not all((folder / f).is_file() for f in FILES):
        return False
    return (folder / COMPLETE).is_file() or (folder / "torchgen" / "packaged").is_dir()


def _wanted(name: str) -> bool:
    return name in FILES or name.startswith(PREFIXES)


def extract(wheel: Path, target: Path) -> None:
    """Extract the wanted members of a wheel into target (atomically: a temp folder, then a rename)."""
    partial = target.with_name(target.name + ".partial")
    shutil.rmtree(partial, ignore_errors=True)
    partial.mkdir(parents=True)
    with zipfile.ZipFile(wheel) as zf:
        members = [m for m in zf.namelist() if _wanted(m) and not m.endswith("/")]
        missing = [f for f in FILES if f not in members]
        if missing:
            raise RuntimeError(f"{wheel.name} lacks {', '.join(missing)}")
        for m in members:
            zf.extract(m, partial)
    (partial / COMPLETE).write_text(wheel.name + "\n", encoding="utf-8")
    shutil.rmtree(target, ignore_errors=True)
    partial.rename(target)


def download(version: str, cache: Path) -> Path:
    dest = cache / "wheels" / version
    dest.mkdir(parents=True, exist_ok=True)
    existing = _wheels(dest, version)
    if existing:
        return existing[0]
    env = dict(os.environ, PIP_CONFIG_FILE=os.devnull)  # ignore local constraints that cap torch
    cmd = [
        sys.executable, "-m", "pip", "download", "--quiet", "--no-deps", "--only-binary=:all:",
        "--python-version", "3.11", "--platform", "manylinux_2_28_x86_64", "--platform", "manylinux1_x86_64",
        f"torch=={version}", "-d", str(dest),
    ]  # fmt: skip
    # Progress on the terminal even under pytest's capture (a release takes minutes to fetch).
    progress = sys.__stderr__ or sys.stderr
    print(f"[releases] torch {version}: pip download (0.5-0.9 GB) into {dest} ...", file=progress, flush=True)
    start = time.monotonic()
    subprocess.run(cmd, check=True, env=env)
    wheels = _wheels(dest, version)
    if not wheels:
        raise RuntimeError(f"pip downloaded no torch {version} wheel into {dest}")
    size = wheels[0].stat().st_size / 1e9
    print(f"[releases] torch {version}: {size:.2f} GB in {time.monotonic() - start:.0f} s", file=progress, flush=True)
    return wheels[0]


def _wheels(folder: Path, version: str) -> list[Path]:
    """The torch wheels of `version` in `folder`: `torch-2.13.0-…` and local builds such as `torch-2.13.0+cpu-…`."""
    return sorted(w for w in folder.glob(f"torch-{version}*.whl") if w.name[len(f"torch-{version}")] in "-+")


def ensure(version: str, cache: Path | None = None) -> Path:
    """The extracted folder of one release, fetching it first if the cache lacks it."""
    cache = cache or cache_dir()
    target = release_dir(version, cache)
    if is_complete(target):
        return target
    wheel = download(version, cache)
    extract(wheel, target)
    wheel.unlink()
    return target


def main(argv: list[str]) -> int:
    for version in argv or RELEASES:
        print(f"{version}: {ensure(version)}", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
