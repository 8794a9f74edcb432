"""The reach index of a torch build: which aten overloads each OpInfo's samples reach at the dispatcher.

The gradcheck child builds it (`reach_index` in child/reach.py: every OpInfo's float64 samples under a
dispatch mode, forward and backward, then ModuleInfo samples: ~10 s) when the request carries none, and sends it as a `reach-index` event; it is kept
here, in derivls's cache folder (`<cache>/gradcheck/reach-<key>.json`, the key from the torch folder
and its version.py: one per torch build), and sent with every later request. An overload no OpInfo of
its own name reaches (`_softmax`, `upsample_bilinear2d`) then gets the samples of those that reach it.
"""

from __future__ import annotations

import hashlib
import json
import os
from pathlib import Path
from typing import Any

from derivls.base.cachedir import read_file

FORMAT = 3  # bump when child/reach.py's reach_index changes what it records
MAX_BYTES = 4 * 1024 * 1024


def index_path(root: Path, torch_folder: Path | None) -> Path | None:
    """Where the index of the torch in `torch_folder` is kept (None: no torch found)."""
    if torch_folder is None:
        return None
    try:
        version = (torch_folder / "version.py").read_bytes()
    except OSError:
        return None
    stamp = f"{FORMAT}:{torch_folder.resolve()}:".encode() + version
    return root / "gradcheck" / f"reach-{hashlib.sha256(stamp).hexdigest()[:20]}.json"


def file_for(python: str | None, cache: Path | None = None) -> Path | None:
    """Where the index of `python`'s torch build is kept, in `cache` or derivls's cache folder (None: no cache folder
    or no torch)."""
    from derivls.compile.toolchain import SetupError, cache_root

    try:
        root = cache or cache_root()
    except SetupError:
        return None
    return index_path(root, torch_folder_of(python))


def torch_folder_of(python: str | None) -> Path | None:
    """The folder of `python`'s torch (default: this Python's), remembered while it exists (runner.torch_folder)."""
    import sys

    from derivls.gradcheck.runner import torch_folder

    return torch_folder(python or sys.executable)


def load(path: Path | None) -> dict[str, list[str]] | None:
    """The kept index, or None (absent, unreadable, not the user's own, not an index)."""
    if path is None:
        return None
    try:
        data = read_file(path, MAX_BYTES)
    except OSError:
        return None
    if data is None:
        return None
    try:
        index = json.loads(data)
    except ValueError:
        return None
    if not isinstance(index, dict) or not all(
        isinstance(k, str) and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in index.items()
    ):
        return None
    return index


def save(path: Path | None, index: Any) -> None:
    """Keep the child's index (written aside, then renamed: a concurrent reader sees all of it or nothing)."""
    if path is None or not isinstance(index, dict):
        return
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(index, sort_keys=True), encoding="utf-8")
        os.replace(tmp, path)
    except OSError:
        pass
