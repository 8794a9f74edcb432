"""Where the daemon of this client listens, and the framing of what they say (standard library only:
the client's fast path imports this before anything else of derivls).

The address is `<cache folder>/daemon/<identity>.sock`, where the identity hashes what makes two
processes compute the same check: the Python installation (sys.prefix: a venv is one) and version, derivls's version, and every
DERIVLS_* variable of the environment (DERIVLS_TORCH_INCLUDE, DERIVLS_NO_CACHE, ...) except the parent
pid children carry. The cache folder is per user (HOME, XDG_CACHE_HOME, DERIVLS_CACHE_DIR). derivls's code
itself is checked by the daemon (it stops when its code changes on disk).

A message is a 4-byte big-endian length and that many bytes of UTF-8 JSON, at most MAX_MESSAGE bytes.
"""

from __future__ import annotations

import json
import os
import socket
import struct
import sys

from derivls import __version__

MAX_MESSAGE = 1 << 20  # a request: a command line and a folder (an @FILE is read by the daemon)
MAX_REPLY = 256 << 20  # a reply: the report (bounded by derivls.base.limits.MAX_DIAGNOSTICS per file)
MAX_PATH = 100  # sun_path is 108 bytes on Linux, 104 on macOS
_HEADER = struct.Struct(">I")
_PARENT = "DERIVLS_PARENT_PID"  # derivls.base.children.PARENT_ENV (not imported: it is not on the fast path)


IDLE_SECONDS = 30 * 60  # a daemon stops after this long without a request (DERIVLS_DAEMON_IDLE: seconds)


def env_number(name: str, default: float, zero: bool = False) -> float:
    """A positive number (0 too, with `zero`) from the environment variable `name`, else `default`."""
    try:
        value = float(os.environ.get(name, ""))
    except ValueError:
        return default
    return value if value > 0 or zero and value == 0 else default


def idle_seconds() -> float:
    return env_number("DERIVLS_DAEMON_IDLE", IDLE_SECONDS)


class Unreachable(Exception):
    """No daemon can be asked (no Unix sockets, no usable cache folder, an address too long, ...)."""


def identity(environ: dict[str, str] | None = None, extra: str = "") -> str:
    import hashlib

    items = (os.environ if environ is None else environ).items()
    named = sorted(f"{k}={v}" for k, v in items if k.startswith("DERIVLS_") and k != _PARENT)
    text = "\0".join([sys.prefix, sys.exec_prefix, sys.version, __version__, *named, extra])
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=10).hexdigest()


def folder() -> str:
    """The daemons' folder (created 0700 in the cache folder, checked as it is); Unreachable if refused."""
    from derivls.base.cachedir import CacheFolderRefused, cache_directory, check_folder

    if not hasattr(socket, "AF_UNIX"):
        raise Unreachable("this platform has no Unix sockets")
    try:
        base = cache_directory()
        check_folder(base, create=True)
        path = base / "daemon"
        check_folder(path, create=True)
    except CacheFolderRefused as e:
        raise Unreachable(str(e)) from None
    return str(path)


def socket_path() -> str:
    """`<daemons' folder>/<identity>.sock`; when that is too long for a socket (a deep cache folder: a long HOME,
    a test's), `<short folder>/<identity and that folder>.sock` (short_folder)."""
    home = folder()
    path = os.path.join(home, identity() + ".sock")
    if len(os.fsencode(path)) <= MAX_PATH:
        return path
    return os.path.join(short_folder(path), identity(extra=home) + ".sock")


def short_folder(long: str) -> str:
    """A folder of this user's alone for the sockets whose path would be too long: `derivls-daemon-<uid>` (0700,
    checked as the cache folder is, never a link) in $XDG_RUNTIME_DIR, the temporary folder or /tmp, the first
    where the path fits and the folder is accepted (a link or another user's folder there: the next base is
    tried); Unreachable if none, with each refusal."""
    import tempfile
    from pathlib import Path

    from derivls.base.cachedir import CacheFolderRefused, check_folder

    name = f"derivls-daemon-{os.geteuid()}"
    bases = [os.environ.get("XDG_RUNTIME_DIR", ""), tempfile.gettempdir(), "/tmp"]
    refused: list[str] = []
    for base in dict.fromkeys(b for b in bases if b and os.path.isabs(b)):
        path = os.path.join(base, name)
        if len(os.fsencode(path)) + 26 > MAX_PATH:  # (+ "/" + 20 hex digits + ".sock")
            continue
        if os.path.islink(path):
            refused.append(f"{path} is a link: it is not used for the daemon's socket")
            continue
        try:
            check_folder(Path(path), create=True)
        except CacheFolderRefused as e:
            refused.append(str(e))
            continue
        return path
    if refused:
        raise Unreachable("; ".join(refused))
    raise Unreachable(f"the daemon's socket path would be too long ({long}): set DERIVLS_CACHE_DIR shorter")


def send(sock: socket.socket, value: object) -> None:
    data = json.dumps(value).encode("utf-8", "surrogatepass")
    sock.sendall(_HEADER.pack(len(data)) + data)


def receive(sock: socket.socket, limit: int) -> object:
    """One message; ValueError when it is malformed or over `limit`, EOFError when the peer closed."""
    size = _HEADER.unpack(_exactly(sock, _HEADER.size))[0]
    if size > limit:
        raise ValueError(f"a message of {size} bytes (at most {limit})")
    return json.loads(_exactly(sock, size).decode("utf-8", "surrogatepass"))


def _exactly(sock: socket.socket, size: int) -> bytes:
    parts, left = [], size
    while left:
        part = sock.recv(min(left, 1 << 20))
        if not part:
            raise EOFError("the peer closed the connection")
        parts.append(part)
        left -= len(part)
    return b"".join(parts)


__all__ = [
    "IDLE_SECONDS",
    "MAX_MESSAGE",
    "MAX_REPLY",
    "Unreachable",
    "folder",
    "env_number",
    "identity",
    "idle_seconds",
    "receive",
    "send",
    "short_folder",
    "socket_path",
]
