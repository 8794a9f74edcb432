"""The whole-result cache: a check of unchanged inputs is answered from disk (derivls.base.diskcache).

`check_key(...)` names everything a check's diagnostics (and its "using torch X rules (...)" line)
depend on; `load`/`store` read and write the value under it. The same key serves `derivls check` and
the server's boot phase (derivls/server/runtime/boot.py), which publishes the cached diagnostics of a
derivatives.yaml buffer before pygls is even imported.

This module is on the fast path: it imports nothing but the standard library, derivls.base.diskcache,
derivls.base.discovery and derivls.derivatives.formulas.sources (all light). It must not import the ATen
model or the loader; tests/unit/test_resultcache.py checks `sys.modules` after a hit.

The key's parts (each one changes the key):

- the derivatives.yaml: the path as given, its absolute and resolved forms (diagnostics and the
  layout rules read them) and its **content** (the server passes its buffer's text);
- the options: profile, torch version, the native_functions.yaml / tags.yaml paths as given (and
  absolute: messages quote them);
- the layout (discovery.layout_of: checkout / wheel / lone file, torchgen/ and tools/codegen/
  present), which picks the profile;
- native_functions.yaml and tags.yaml as discovery finds them (the paths tried, the paths found) and
  their **content**;
- the C++ sources the formula checks read (formulas/sources.py: FunctionsManual.h, TensorBody.h,
  TensorBase.h, the Functions.cpp template, found from the derivatives and the native path): every
  path looked at, absent or with its **content**;
- the release detection inputs (derivatives/releases.py): `<root>/version.txt` of a checkout and
  `torch/version.py` of a wheel, absent or with their content;
- derivls's version, its code fingerprint and the Python version (diskcache.content_key's salt).

Content, not (size, mtime): hashing every input costs ~2 ms for the real files (1.5 MB), and it stays
right when a tool restores an older file with its old mtime (`cp -p`, `rsync -t`, `tar x`), or when a
file is rewritten twice within the file system's time granularity. Any input that exists but is not a
plain readable regular file (a FIFO, a directory, a file over derivls's size limit) makes the check
uncacheable: the full check then reports it as usual.

`check --compile` is never answered from this cache: its compiler's findings depend on a toolchain and
headers outside the key (derivls.compile keeps its own cache); `--no-cache` neither reads nor writes.
"""

from __future__ import annotations

import os
import stat
from pathlib import Path

from derivls.base.diagnostics import Diagnostic
from derivls.base.diskcache import DiskCache, content_key
from derivls.base.frozen import frozen_dataclass

KIND = "check-result"
_MAX_BYTES = 64 * 1024 * 1024  # derivls.base.limits.MAX_FILE_BYTES (not imported: it pulls typing in)
_ABSENT = b"\x00absent"


class Uncacheable(Exception):
    """An input derivls reads is not a plain readable regular file: do not use the cache."""


@frozen_dataclass(slots=True)
class CachedCheck:
    """What `write_diagnostics` needs for one file, whatever the format."""

    diagnostics: tuple[Diagnostic, ...]
    rules: str | None  # "torch 2.x rules (...)"; None for the legacy profile
    # the diagnostics of its native_functions.yaml / tags.yaml themselves: ((path, diagnostics), ...)
    native: tuple[tuple[str, tuple[Diagnostic, ...]], ...] = ()


def file_bytes(path: str | os.PathLike[str] | None, *, optional: bool = True) -> bytes:
    """The content of a file the check may read; `_ABSENT` when it does not exist (Uncacheable if `optional`
    is False), Uncacheable when it is not a regular file or cannot be read."""
    if path is None:
        return _ABSENT
    try:
        info = os.stat(path)
    except FileNotFoundError:
        if optional:
            return _ABSENT
        raise Uncacheable(f"{path} does not exist") from None
    except (OSError, ValueError) as e:
        raise Uncacheable(str(e)) from None
    if not stat.S_ISREG(info.st_mode) or info.st_size > _MAX_BYTES:
        raise Uncacheable(f"{path} is not a regular file of at most {_MAX_BYTES} bytes")
    try:
        with open(path, "rb") as f:
            data = f.read(_MAX_BYTES + 1)
    except OSError as e:
        raise Uncacheable(str(e)) from None
    if len(data) > _MAX_BYTES:
        raise Uncacheable(f"{path} grew over the size limit")
    return data


def _resolved(path: Path) -> Path:
    try:
        return path.resolve()
    except (OSError, RuntimeError):
        return Path(os.path.abspath(path))


def version_files(path: Path | None) -> list[Path]:
    """The files derivatives/releases.py reads to tell the release of `path`'s tree: a checkout's
    version.txt (from tools/autograd/… or aten/src/ATen/native/…) and a wheel's torch/version.py."""
    if path is None:
        return []
    here = _resolved(Path(path))
    found = []
    parent = here.parent
    for layout in (("tools", "autograd"), ("aten", "src", "ATen", "native")):
        if parent.parts[-len(layout) :] == layout:
            found.append(parent.parents[len(layout) - 1] / "version.txt")
    parts = here.parts
    for i in range(len(parts) - 1, 0, -1):
        if parts[i] == "packaged" and parts[i - 1] == "torchgen":
            found.append(Path(*parts[: i - 1]) / "torch" / "version.py")
            break
    return found


def check_key(
    derivatives: Path,
    native: Path | None = None,
    tags: Path | None = None,
    profile: str = "auto",
    torch_version: str | None = None,
    *,
    text: str | None = None,
    kind: str = KIND,
    extra: tuple[str, ...] = (),
) -> str | None:
    """The key of a check of `derivatives` with these options (`text`: its buffer, else the file's
    content); None when an input cannot be cached (see Uncacheable) — the check then runs in full.
    `kind` and `extra` set other consumers apart (the server's published diagnostics: boot.py)."""
    from derivls.base.discovery import find_native_files, layout_of
    from derivls.derivatives.formulas.sources import find_sources

    try:
        content = text.encode("utf-8", "surrogatepass") if text is not None else file_bytes(derivatives, optional=False)
        for given in (native, tags):
            if given is not None and not os.path.isfile(given):
                return None  # a UsageError of the full check
        parts: list[str | bytes | None] = [
            str(derivatives),
            os.path.abspath(derivatives),
            str(_resolved(derivatives)),
            content,
            profile,
            torch_version,
            str(native) if native is not None else None,
            os.path.abspath(native) if native is not None else None,
            str(tags) if tags is not None else None,
            os.path.abspath(tags) if tags is not None else None,
            repr(layout_of(derivatives)),
        ]
        files = find_native_files(derivatives, native, tags)
        parts += [repr(files), file_bytes(files.native), file_bytes(files.tags)]
        seen: set[Path] = set()
        for sources in (find_sources(derivatives, files.native), find_sources(None, files.native)):
            for path in sources.tried:
                if path not in seen:
                    seen.add(path)
                    parts += [str(path), file_bytes(path)]
        for path in (*version_files(derivatives), *version_files(files.native)):
            parts += [str(path), file_bytes(path)]
    except Uncacheable:
        return None
    return content_key(kind, *extra, *parts)


def load(cache: DiskCache, key: str | None) -> CachedCheck | None:
    """The cached result under `key`; None on a miss (or a foreign value, which is ignored)."""
    if key is None or not cache.enabled:
        return None
    value = cache.get(key)
    return value if isinstance(value, CachedCheck) else None


def store(cache: DiskCache, key: str | None, value: CachedCheck) -> bool:
    if key is None or not cache.enabled:
        return False
    return cache.put(key, value)


__all__ = ["KIND", "CachedCheck", "Uncacheable", "check_key", "file_bytes", "load", "store", "version_files"]
