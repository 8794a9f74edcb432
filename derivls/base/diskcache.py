"""A small persistent cache of pickled values, keyed by content hashes and the derivls version.

It lives in the user's cache folder (never in a workspace): `$DERIVLS_CACHE_DIR`, else the
platform's cache folder (cachedir.py: XDG on Linux, ~/Library/Caches on macOS, %LOCALAPPDATA% on
Windows). Reading it never runs code: the folder and each file are checked first (owner, mode,
regular file, size: cachedir.py), and values are unpickled by safepickle.py, which finds only
derivls's own value types; anything else is a miss. Entries are written atomically (a temporary
file in the same folder, then `os.replace`), so concurrent processes never read half a file; the
last writer wins, and both wrote the same value. An entry that cannot be read or unpickled, or that
was written by another derivls version or Python, is ignored and removed (the caller rebuilds it
and writes it again). The folder is kept under a size bound by removing the least recently used
entries. Setting `DERIVLS_NO_CACHE=1` (or `--no-cache`) turns it off.

Values are pickled: anything cached must pickle without per-process state (e.g. an object must not
keep a `hash()` of a str in its instance dict; string hashes change between processes).
"""

from __future__ import annotations

import contextlib
import os
import pickle
import sys
import time
from collections.abc import Generator, Iterator
from pathlib import Path

from derivls import __version__
from derivls.base.cachedir import CacheFolderRefused, cache_directory, check_folder, read_file
from derivls.base.exits import ended
from derivls.base.lazylog import info
from derivls.base.safepickle import loads as safe_loads
from derivls.base.writebehind import defer, wait_for_writer

try:  # hashlib's own blake2b, without importing OpenSSL's _hashlib (~4 ms of `check`'s start)
    from _blake2 import blake2b
except ImportError:  # pragma: no cover - another Python
    from hashlib import blake2b

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import BinaryIO


class _Oversized(Exception):
    """A pickled value over max_bytes: not stored."""


DEFAULT_MAX_BYTES = 512 * 1024 * 1024
SUFFIX = ".pickle"
TEMPORARY = ".tmp"  # a value being written (renamed to its SUFFIX name when complete)
STALE_SECONDS = 3600  # a temporary file this old was left by a writer that was killed
WRITE_STEP = 1 << 20  # bytes written per step of `storing`


def code_fingerprint() -> str:
    """The derivls code itself (each module's size and mtime): a checkout being worked on keeps its
    version number while its classes change, and must not read what older code pickled."""
    root = Path(__file__).resolve().parents[1]  # the package (this module is in base/)
    h = blake2b(digest_size=12)
    for folder, _, files in sorted(os.walk(root)):
        for name in sorted(files):
            if name.endswith(".py"):
                stat = os.stat(os.path.join(folder, name))
                h.update(f"{folder[len(str(root)) :]}/{name} {stat.st_size} {stat.st_mtime_ns}\n".encode())
    return h.hexdigest()


# Part of every key: a cache written by another derivls (or other derivls code) or another Python is never read.
_SALT = (
    f"derivls {__version__} {code_fingerprint()} python {sys.version_info[0]}.{sys.version_info[1]} "
    f"pickle {pickle.HIGHEST_PROTOCOL}"
)


def default_directory() -> Path | None:
    """The cache folder (cachedir.cache_directory); None, said once on stderr, when it is refused."""
    try:
        return cache_directory()
    except CacheFolderRefused as e:
        refused(str(e))
        return None


_said: set[str] = set()


def refused(why: str) -> None:
    """One line on stderr (the server's log) per reason and process: the run goes on without the cache."""
    if why in _said:
        return
    _said.add(why)
    info(__name__, "cache: %s", why)
    try:
        print(f"derivls: warning: {ended(why)}", file=sys.stderr, flush=True)
    except (OSError, ValueError):
        pass


def disabled_by_environment() -> bool:
    return os.environ.get("DERIVLS_NO_CACHE", "").strip().lower() not in ("", "0", "false", "no")


def content_key(kind: str, *parts: str | bytes | None) -> str:
    """A file-name-safe key over `kind`, the derivls/Python version and every part (None counts too)."""
    h = blake2b(digest_size=20)
    for part in (_SALT, kind, *parts):
        if part is None:
            h.update(b"\x00none\x00")
            continue
        data = part.encode("utf-8", "surrogatepass") if isinstance(part, str) else part
        h.update(len(data).to_bytes(8, "little"))
        h.update(data)
    return f"{kind}-{h.hexdigest()}"


class DiskCache:
    """get/put pickled values by key; every failure is logged and treated as a miss."""

    def __init__(
        self, directory: Path | None = None, *, max_bytes: int = DEFAULT_MAX_BYTES, enabled: bool = True
    ) -> None:
        found = directory if directory is not None else default_directory() if enabled else None
        self.directory = found if found is not None else Path(os.devnull)
        self.max_bytes = max_bytes
        self.enabled = enabled and found is not None and not disabled_by_environment()
        self._checked = False  # the folder was found usable (cachedir.check_folder)

    def _usable(self, create: bool) -> bool:
        """Whether the folder may be read and written (checked once; refused: the cache is off, said once)."""
        if self._checked:
            return True
        try:
            check_folder(self.directory, create=create)
        except CacheFolderRefused as e:
            if create or self.directory.exists():
                refused(str(e))
                self.enabled = False
            return False
        self._checked = True
        return True

    def _path(self, key: str) -> Path:
        return self.directory / f"{key}{SUFFIX}"

    def get(self, key: str, *, waited: bool = False) -> object | None:
        if not self.enabled:
            return None
        if not self._usable(create=False):
            return None
        path = self._path(key)
        try:
            data = read_file(path, self.max_bytes)
        except FileNotFoundError:
            if waited or not wait_for_writer(self.directory):  # a detached writer may be writing it (writebehind.py)
                return None
            return self.get(key, waited=True)
        except OSError as e:
            info(__name__, "cache: cannot read %s: %r", path, e)
            return None
        if data is None:  # not a regular file of ours within the bound: a miss, left alone
            info(__name__, "cache: not reading %s (not a private regular file within %d bytes)", path, self.max_bytes)
            return None
        try:
            value = safe_loads(data)
        except Exception as e:  # a truncated, corrupted or foreign file: drop it, the caller rebuilds
            info(__name__, "cache: dropping unreadable %s: %r", path, e)
            self._remove(path)
            return None
        try:
            os.utime(path)  # least recently used goes first when the folder is pruned
        except OSError:
            pass
        return value

    def put(self, key: str, value: object) -> bool:
        """Store `value`; False (and logged) when it cannot be pickled or written, or is over max_bytes.
        It is pickled straight into the temporary file: no second copy of it in memory."""
        if not self.enabled:
            return False
        if defer(self.directory, lambda: self.store_now(key, value)):
            return True  # written after the command's answer (writebehind.py)
        return self.store_now(key, value)

    def store_now(self, key: str, value: object) -> bool:
        """`put`, never deferred."""
        try:
            with self._replacing(key) as f:
                pickle.dump(value, f, protocol=pickle.HIGHEST_PROTOCOL)
                if f.tell() > self.max_bytes:
                    raise _Oversized
        except (_Oversized, CacheFolderRefused):
            return False
        except Exception as e:  # no folder, unpicklable, or the disk is full: nothing is stored
            info(__name__, "cache: cannot store %s: %r", key, e)
            return False
        self.prune()
        return True

    def storing(self, key: str, value: object) -> Generator[None, None, bool]:
        """`store_now` in steps, for an event loop that must stay responsive: pickling is one step, then
        each WRITE_STEP bytes written is one (the 10x file's 12 MB of entry records: ~15 ms at once).
        Never deferred. Returns (StopIteration.value) whether it was stored."""
        if not self.enabled:
            return False
        try:
            data = pickle.dumps(value, protocol=pickle.HIGHEST_PROTOCOL)
        except Exception as e:  # unpicklable: nothing is stored
            info(__name__, "cache: cannot store %s: %r", key, e)
            return False
        if len(data) > self.max_bytes:
            return False
        yield
        try:
            if not self._usable(create=True):
                return False
            with self._replacing(key) as f:
                view = memoryview(data)
                for start in range(0, len(view), WRITE_STEP):
                    f.write(view[start : start + WRITE_STEP])
                    yield
        except Exception as e:  # no folder, or the disk is full: nothing is stored
            info(__name__, "cache: cannot store %s: %r", key, e)
            return False
        self.prune()
        return True

    @contextlib.contextmanager
    def _replacing(self, key: str) -> Iterator[BinaryIO]:
        """A new temporary file in the folder, which becomes `key`'s value (atomically) when the block ends
        normally; removed when it raises (also GeneratorExit: steps of `storing` that were abandoned)."""
        import tempfile  # only when writing

        if not self._usable(create=True):
            raise CacheFolderRefused(f"the cache folder {self.directory} is not used")
        fd, tmp = tempfile.mkstemp(prefix=f".{key}.", suffix=TEMPORARY, dir=self.directory)
        try:
            with os.fdopen(fd, "wb") as f:
                yield f
            os.replace(tmp, self._path(key))
        except BaseException:
            self._remove(Path(tmp))
            raise

    def prune(self) -> None:
        """Remove least recently used entries until the folder holds at most max_bytes, and temporary
        files a writer killed mid-write left behind (older than STALE_SECONDS)."""
        try:
            entries = []
            stale_before = time.time_ns() - STALE_SECONDS * 1_000_000_000
            for entry in os.scandir(self.directory):
                if not entry.is_file(follow_symlinks=False):
                    continue
                if entry.name.endswith(SUFFIX):
                    stat = entry.stat(follow_symlinks=False)
                    entries.append((stat.st_mtime_ns, stat.st_size, entry.path))
                elif entry.name.endswith(TEMPORARY) and entry.stat(follow_symlinks=False).st_mtime_ns < stale_before:
                    self._remove(Path(entry.path))
        except OSError:
            return
        total = sum(size for _, size, _ in entries)
        for _, size, path in sorted(entries):
            if total <= self.max_bytes:
                break
            self._remove(Path(path))
            total -= size

    @staticmethod
    def _remove(path: Path) -> None:
        try:
            path.unlink()
        except OSError:
            pass


__all__ = ["DiskCache", "code_fingerprint", "content_key", "default_directory", "disabled_by_environment"]
