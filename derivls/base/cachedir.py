"""Where derivls's cache folder is, and whether it may be read.

Location (the platform's convention), `DERIVLS_CACHE_DIR` first:
- Linux and other POSIX systems: `$XDG_CACHE_HOME/derivls`, else `~/.cache/derivls`;
- macOS: `~/Library/Caches/derivls`;
- Windows: `%LOCALAPPDATA%\\derivls\\Cache`.
A relative `DERIVLS_CACHE_DIR` is refused (no cache, one line on stderr); a relative
`XDG_CACHE_HOME` / `LOCALAPPDATA` is ignored (the XDG rule), as if unset. Everything derivls keeps
(the pickled indexes and results, the precompiled headers under `pch/`) lives under this one folder.

Protection (`check_folder`, `read_file`): the folder is created 0700; an existing folder must be a
directory owned by the user running derivls and not writable by group or others (one owned by the
user but looser, as an older derivls left it under umask 002, is tightened to 0700 first); else it
is not used. A file is read only when it is a regular file (opened without following a symlink,
without blocking on a FIFO), owned by the user, not writable by group or others, and at most the
size bound. On Windows (no owner or mode bits in `os.stat`) only the file checks apply.
"""

from __future__ import annotations

import os
import stat
import sys
from pathlib import Path

ENV = "DERIVLS_CACHE_DIR"


class CacheFolderRefused(Exception):
    """The cache folder may not be used: one line saying why."""


def platform_base() -> Path:
    """The platform's per-user cache folder (derivls's folder is inside it)."""
    if sys.platform == "darwin":
        return Path.home() / "Library" / "Caches"
    if sys.platform == "win32":
        local = os.environ.get("LOCALAPPDATA", "")
        return Path(local) if local and os.path.isabs(local) else Path.home() / "AppData" / "Local"
    xdg = os.path.expanduser(os.environ.get("XDG_CACHE_HOME", ""))
    return Path(xdg) if xdg and os.path.isabs(xdg) else Path.home() / ".cache"


def cache_directory() -> Path:
    """derivls's cache folder; CacheFolderRefused for a relative DERIVLS_CACHE_DIR."""
    explicit = os.environ.get(ENV)
    if explicit:
        path = os.path.expanduser(explicit)
        if not os.path.isabs(path):
            raise CacheFolderRefused(f"{ENV}={explicit!r} is not an absolute path: the cache is not used")
        return Path(path)
    base = platform_base()
    return base / "derivls" / "Cache" if sys.platform == "win32" else base / "derivls"


def _owner_checks() -> bool:
    return hasattr(os, "geteuid") and sys.platform != "win32"


def check_folder(folder: Path, *, create: bool) -> None:
    """Make sure `folder` may be used (created 0700 when `create` and absent); CacheFolderRefused if not."""
    try:
        info = os.stat(folder)
    except FileNotFoundError:
        if not create:
            raise CacheFolderRefused(f"{folder} does not exist") from None
        try:
            folder.parent.mkdir(parents=True, exist_ok=True)
            os.mkdir(folder, 0o700)
        except FileExistsError:
            pass
        except OSError as e:
            raise CacheFolderRefused(f"cannot create the cache folder {folder}: {e.strerror}") from None
        try:
            info = os.stat(folder)
        except OSError as e:
            raise CacheFolderRefused(f"cannot use the cache folder {folder}: {e.strerror}") from None
    except OSError as e:
        raise CacheFolderRefused(f"cannot use the cache folder {folder}: {e.strerror}") from None
    if not stat.S_ISDIR(info.st_mode):
        raise CacheFolderRefused(f"the cache folder {folder} is not a folder: the cache is not used")
    if not _owner_checks():
        return
    if info.st_uid != os.geteuid():
        raise CacheFolderRefused(
            f"the cache folder {folder} belongs to another user (uid {info.st_uid}): the cache is not used"
        )
    if info.st_mode & 0o022:
        try:
            os.chmod(folder, 0o700)  # ours, left group-writable by an older derivls: made private
        except OSError:
            raise CacheFolderRefused(
                f"the cache folder {folder} is writable by group or others: the cache is not used"
            ) from None


def read_file(path: Path, max_bytes: int) -> bytes | None:
    """The content of a cache file, or None when it is absent, not a regular file (a FIFO, a device, a
    symlink), not the user's own, writable by group or others, or over `max_bytes`. Raises OSError
    only for other read errors."""
    flags = os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    try:
        fd = os.open(path, flags)
    except FileNotFoundError:
        raise
    except OSError:
        if os.path.islink(path) or not os.path.isfile(path):
            return None  # a symlink (O_NOFOLLOW: ELOOP), a folder...
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode) or info.st_size > max_bytes:
            return None
        if _owner_checks() and (info.st_uid != os.geteuid() or info.st_mode & 0o022):
            return None
        if hasattr(os, "set_blocking"):
            os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            data = f.read(max_bytes + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    return data if len(data) <= max_bytes else None


def folder_size(folder: Path) -> tuple[int, int]:
    """(bytes, files) under `folder` (symlinks not followed)."""
    total = files = 0
    for root, _, names in os.walk(folder):
        for name in names:
            try:
                total += os.lstat(os.path.join(root, name)).st_size
                files += 1
            except OSError:
                pass
    return total, files


__all__ = ["ENV", "CacheFolderRefused", "cache_directory", "check_folder", "folder_size", "platform_base", "read_file"]
