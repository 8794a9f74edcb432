"""The daemon: `python -P -m derivls.cli.daemon SOCKET`, started by derivls.daemon.client.

Each request is a `derivls check` command line and the client's working folder, answered with what that
command would print and its exit status: the command line is parsed by derivls's own parser and run by
its run_command, both handed in by the process's entry (`Commands`: the daemon sits below the CLI and
never imports it), with the daemon's open projects (derivls.daemon.projects) in place of the
whole-result cache. `--compile` (it runs a compiler), `--since` (it runs git) and `--no-cache` (it is
process-wide) are answered "run it yourself"; so is anything the daemon fails at (the client then runs
the check as usual): the daemon starts no process but the forks of derivls's own analysis and cache writer.

One thread: checks run one at a time, but requests are read and replies written without blocking, so a
client that sends slowly (or reads slowly) holds no one else up: each connection's whole request (header
and body) must arrive within request_seconds() of its connection, each whole reply leave within
REPLY_SECONDS, or the connection is dropped. An `@FILE` of the command line that is not a regular file (a
FIFO would block the daemon in open(), a device) is refused before the parser opens it.

Bounds: it stops after address.idle_seconds() without a connection, when derivls's code on disk changes
(the reply says so and the client starts a new one), on a `stop` request, on the first SIGTERM, or when
its socket or the cache folder's `daemon` folder is gone or replaced (`derivls cache --clear`: checked
every WATCH_SECONDS); RLIMIT_AS is MEMORY; a request is at most address.MAX_MESSAGE bytes; a peer of
another user id is closed unanswered. A lock file beside the socket makes one daemon per address: a second
one exits. What it prints (a traceback of its own failure) goes to `<socket>.log`, which it truncates at
start.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import json
import os
import selectors
import signal
import socket
import stat
import struct
import sys
import time
import traceback
from typing import Protocol

from derivls.daemon.address import MAX_MESSAGE, env_number, idle_seconds, send

MEMORY = 6 << 30  # address space: a project is ~0.3-0.5 GB resident; KEEP of them and the forked cold pass
REQUEST_SECONDS = 10.0  # a whole request, from its connection (DERIVLS_DAEMON_REQUEST_SECONDS)
REPLY_SECONDS = 60.0  # a whole reply
WATCH_SECONDS = 1.0  # how often it checks that its socket and folder are still there
LOCK_SECONDS = 10.0  # how long a new daemon waits for the one it replaces (stopping: code changed) to go
_HEADER = struct.Struct(">I")  # (address's framing: a 4-byte big-endian length, then that much UTF-8 JSON)


def request_seconds() -> float:
    return env_number("DERIVLS_DAEMON_REQUEST_SECONDS", REQUEST_SECONDS)


class Commands(Protocol):
    """What the daemon runs a request with: derivls's parser and command runner (the CLI's module, handed in by
    the entry that starts the daemon, derivls.cli.daemon; the daemon never imports the CLI above it)."""

    def build_parser(self, command: str | None = None) -> argparse.ArgumentParser: ...

    def run_command(self, args: argparse.Namespace, parser: argparse.ArgumentParser) -> int: ...


class Terminated(BaseException):
    """SIGTERM: not an Exception, and not SystemExit (which a usage error of the parser raises), so no
    handler of a request takes it for something else: the first one stops the daemon."""


class Incoming:
    """A request arriving on a connection: its bytes so far and its deadline."""

    def __init__(self, deadline: float) -> None:
        self.deadline = deadline
        self.data = bytearray()
        self.size: int | None = None

    def feed(self, chunk: bytes) -> bool:
        """Add what was received; whether the message is complete. ValueError when it is over MAX_MESSAGE."""
        self.data += chunk
        if self.size is None and len(self.data) >= _HEADER.size:
            self.size = _HEADER.unpack_from(self.data)[0]
            if self.size > MAX_MESSAGE:
                raise ValueError(f"a message of {self.size} bytes (at most {MAX_MESSAGE})")
        return self.size is not None and len(self.data) >= _HEADER.size + self.size

    def value(self) -> object:
        assert self.size is not None
        return json.loads(bytes(self.data[_HEADER.size : _HEADER.size + self.size]).decode("utf-8", "surrogatepass"))


class Outgoing:
    """A reply leaving on a connection: what is left to send and its deadline."""

    def __init__(self, value: object, deadline: float) -> None:
        data = json.dumps(value).encode("utf-8", "surrogatepass")
        self.left = memoryview(_HEADER.pack(len(data)) + data)
        self.deadline = deadline
        self.failed: str | None = None

    def send(self, conn: socket.socket) -> bool:
        """Send what the socket takes now; whether it is done (all sent, or the peer is gone: `failed` says why)."""
        try:
            while self.left:
                self.left = self.left[conn.send(self.left) :]
        except (BlockingIOError, InterruptedError):
            pass
        except OSError as e:  # (the client went away before reading: EPIPE, ECONNRESET)
            self.failed, self.left = str(e), memoryview(b"")
        return not self.left


def _log(message: str) -> None:
    print(f"derivls daemon: {message}", file=sys.stderr, flush=True)


class Daemon:
    def __init__(self, path: str, idle: float, commands: Commands) -> None:
        from derivls.base.diskcache import code_fingerprint
        from derivls.daemon.projects import Projects

        self.path, self.idle, self.commands = path, idle, commands
        self.projects = Projects()
        self.fingerprint = code_fingerprint()
        self.started, self.served = time.time(), 0
        self.home = os.getcwd()
        self.stopping = False
        self.parser: argparse.ArgumentParser | None = None
        self.watched: list[tuple[str, int]] = []  # (path, inode): gone or replaced, the daemon stops

    def watch(self, path: str) -> None:
        with contextlib.suppress(OSError):
            self.watched.append((path, os.stat(path).st_ino))

    def moved(self) -> str | None:
        """Why this daemon must go (a watched path gone or replaced: `derivls cache --clear`), else None."""
        for path, inode in self.watched:
            try:
                if os.stat(path).st_ino != inode:
                    return f"{path} was replaced"
            except FileNotFoundError:
                return f"{path} is gone"
            except OSError:
                continue
        return None

    def serve(self, listener: socket.socket) -> None:
        """Accept, read, answer and reply until idle, stopped or moved; no connection waits on another's."""
        listener.setblocking(False)
        selector = selectors.DefaultSelector()
        selector.register(listener, selectors.EVENT_READ)
        reading: dict[socket.socket, Incoming] = {}
        writing: dict[socket.socket, Outgoing] = {}

        def drop(conn: socket.socket, why: str | None = None) -> None:
            reading.pop(conn, None)
            writing.pop(conn, None)
            with contextlib.suppress(KeyError, ValueError):
                selector.unregister(conn)
            conn.close()
            if why is not None:
                _log(f"a request was dropped: {why}")

        def handle(conn: socket.socket) -> None:
            """A connection ready: its reply sent on, or its request read on (and answered, once whole)."""
            if conn in writing:
                if writing[conn].send(conn):
                    drop(conn, writing[conn].failed)
                return
            if self.stopping:  # (a stop came first in this round: no more checks)
                drop(conn)
                return
            began = time.monotonic()
            reply = self._read(conn, reading[conn])
            if reply is None:
                return
            busy = time.monotonic() - began  # (a check ran: the others' time to send is not theirs)
            for other in reading.values():
                other.deadline += busy
            if isinstance(reply, str):
                drop(conn, reply)
                return
            del reading[conn]
            outgoing = Outgoing(reply, time.monotonic() + REPLY_SECONDS)
            if outgoing.send(conn):
                drop(conn, outgoing.failed)
            else:
                writing[conn] = outgoing
                selector.modify(conn, selectors.EVENT_WRITE)

        last = watched = time.monotonic()
        try:
            while not self.stopping or writing:
                now = time.monotonic()
                if self.stopping:  # (the replies left are sent, within their bound: no new work)
                    with contextlib.suppress(KeyError, ValueError):
                        selector.unregister(listener)
                    for conn in list(reading):
                        drop(conn)
                for conn, incoming in list(reading.items()):
                    if now > incoming.deadline:
                        drop(conn, f"not complete within {request_seconds():g} s")
                for conn, outgoing in list(writing.items()):
                    if now > outgoing.deadline:
                        drop(conn, f"the reply was not taken within {REPLY_SECONDS:g} s")
                if now - watched >= WATCH_SECONDS:
                    watched = now
                    moved = self.moved()
                    if moved is not None:
                        _log(f"stopping: {moved}")
                        return
                if not self.stopping and not reading and not writing and now - last >= self.idle:
                    return
                waits = [watched + WATCH_SECONDS, last + self.idle]
                waits += [c.deadline for c in reading.values()] + [c.deadline for c in writing.values()]
                for key, _mask in selector.select(max(0.0, min(waits) - now)):
                    conn = key.fileobj  # type: ignore[assignment]
                    if conn is listener:
                        last = time.monotonic()
                        for accepted in self._accept(listener):
                            reading[accepted] = Incoming(last + request_seconds())
                            selector.register(accepted, selectors.EVENT_READ)
                    elif conn in writing or conn in reading:
                        try:
                            handle(conn)
                        except OSError as e:  # (a connection's trouble is that connection's alone)
                            drop(conn, str(e))
        finally:
            for conn in [*reading, *writing]:
                conn.close()
            selector.close()

    def _accept(self, listener: socket.socket) -> list[socket.socket]:
        accepted: list[socket.socket] = []
        while True:
            try:
                conn, _ = listener.accept()
            except (BlockingIOError, InterruptedError):
                return accepted
            except OSError as e:  # (out of file descriptors: the next select tries again)
                _log(f"a connection was not accepted: {e}")
                return accepted
            if not same_user(conn):
                conn.close()
                continue
            conn.setblocking(False)
            accepted.append(conn)

    def _read(self, conn: socket.socket, incoming: Incoming) -> dict[str, object] | str | None:
        """What arrived: the reply once the request is complete, None while it is not, a string (why) to drop it."""
        try:
            chunk = conn.recv(1 << 16)
        except (BlockingIOError, InterruptedError):
            return None
        except OSError as e:
            return str(e)
        if not chunk:
            return "the peer closed the connection"
        try:
            if not incoming.feed(chunk):
                return None
            return self.respond(incoming.value())
        except (ValueError, UnicodeDecodeError) as e:
            return str(e)

    def answer(self, conn: socket.socket) -> None:
        """Read one request from `conn` (blocking, within request_seconds() in all) and send its reply."""
        if not same_user(conn):
            return
        deadline = time.monotonic() + request_seconds()
        incoming = Incoming(deadline)
        while True:
            conn.settimeout(max(0.001, deadline - time.monotonic()))
            chunk = conn.recv(1 << 16)
            if not chunk:
                raise EOFError("the peer closed the connection")
            if incoming.feed(chunk):
                break
        reply = self.respond(incoming.value())
        conn.settimeout(REPLY_SECONDS)
        send(conn, reply)

    def respond(self, request: object) -> dict[str, object]:
        """The reply to one request; ValueError when it is malformed."""
        if not isinstance(request, dict):
            raise ValueError("a request is a JSON object")
        if request.get("stop"):
            self.stopping = True
            return {"stopped": os.getpid()}
        if request.get("status"):
            return self.status()
        from derivls.base.diskcache import code_fingerprint

        if code_fingerprint() != self.fingerprint:
            self.stopping = True
            return {"stale": "derivls's code changed on disk since this daemon started"}
        argv, cwd = request.get("argv"), request.get("cwd")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not isinstance(cwd, str):
            raise ValueError("a request has argv (strings) and cwd (a string)")
        reply = self.run(argv, cwd)
        self.served += "code" in reply  # (not a fallback: the client ran that one)
        return reply

    def status(self) -> dict[str, object]:
        return {
            "pid": os.getpid(),
            "seconds": round(time.time() - self.started, 1),
            "served": self.served,
            "projects": len(self.projects),
            "opened": self.projects.opened,
            "idle": self.idle,
            "rss_mb": rss_mb(),
        }

    def run(self, argv: list[str], cwd: str) -> dict[str, object]:
        """What `derivls <argv>` run in `cwd` prints and returns; {"fallback": why} to have the client run it."""
        out, err = io.StringIO(), io.StringIO()
        try:
            os.chdir(cwd)
        except OSError as e:
            return {"fallback": f"cannot enter {cwd}: {e.strerror}"}
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if self.parser is None:
                    self.parser = self.commands.build_parser("check")  # (reusable: parse_args makes a new namespace)
                parser = self.parser
                refused = argument_file_refusal(argv)
                if refused is not None:
                    from derivls.base.exits import EXIT_USAGE, error_line

                    return {"code": EXIT_USAGE, "stdout": "", "stderr": error_line("check", refused) + "\n"}
                try:
                    args = parser.parse_args(argv)
                except SystemExit as e:  # a usage error: argparse printed it
                    return {
                        "code": e.code if isinstance(e.code, int) else 2,
                        "stdout": out.getvalue(),
                        "stderr": err.getvalue(),
                    }
                if args.command != "check" or args.compile or args.no_cache or args.since is not None:
                    return {"fallback": "the daemon answers `check` without --compile, --since or --no-cache"}
                args.resident = self.projects
                code = self.commands.run_command(args, parser)
        except Exception:  # a defect of derivls: the client runs the check itself, and the log keeps this
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            return {"fallback": "the daemon failed (its log has the traceback)"}
        finally:
            os.chdir(self.home)
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


def argument_file_refusal(argv: list[str], depth: int = 0) -> str | None:
    """Why an `@FILE` of `argv` (or of a file it names, should the parser read those too) is refused: it is not
    a regular file (a FIFO would block the daemon in open(), a device may never end), so the parser never opens
    it; worded as derivls.base.limits.read_regular_file words it for `check`. None when every one is a regular file
    or missing (the parser then says so, as `check` does)."""
    from derivls.base.limits import _kind, read_regular_file

    for arg in argv:
        if not arg.startswith("@"):
            continue
        name = arg[1:]
        try:
            mode = os.stat(name).st_mode
        except OSError:
            continue
        if not stat.S_ISREG(mode):
            return f"@{name}: the paths file {name} is {_kind(mode)}, not a regular file; refused"
        if depth < 8:
            try:
                nested = argument_file_refusal(read_regular_file(name, "the paths file").splitlines(), depth + 1)
            except (OSError, UnicodeDecodeError):
                continue
            if nested is not None:
                return nested
    return None


def same_user(conn: socket.socket) -> bool:
    """The peer runs as this user (Linux: SO_PEERCRED; elsewhere the folder's 0700 mode is the check)."""
    option = getattr(socket, "SO_PEERCRED", None)
    if option is None:
        return True
    creds = conn.getsockopt(socket.SOL_SOCKET, option, struct.calcsize("3i"))
    _pid, uid, _gid = struct.unpack("3i", creds)
    return uid == os.geteuid()


def rss_mb() -> float | None:
    try:
        with open("/proc/self/statm", "rb") as f:
            return round(int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / (1 << 20), 1)
    except (OSError, ValueError, IndexError):
        return None


def lock(path: str) -> int | None:
    """The address's lock (held for the daemon's life); None when another daemon keeps it."""
    import fcntl  # (POSIX only, as the daemon: address.folder refuses where there are no Unix sockets)

    fd = os.open(path + ".lock", os.O_RDWR | os.O_CREAT | getattr(os, "O_NOFOLLOW", 0), 0o600)
    deadline = time.monotonic() + env_number("DERIVLS_DAEMON_LOCK_SECONDS", LOCK_SECONDS, zero=True)
    while True:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            return fd
        except BlockingIOError:
            if time.monotonic() > deadline:
                os.close(fd)
                return None
            time.sleep(0.05)


def limit_memory(limit: int) -> None:
    try:
        import resource

        soft, hard = resource.getrlimit(resource.RLIMIT_AS)
        if hard == resource.RLIM_INFINITY or hard > limit:
            resource.setrlimit(resource.RLIMIT_AS, (limit, hard if hard != resource.RLIM_INFINITY else limit))
    except (ImportError, ValueError, OSError):
        pass


def main(argv: list[str], commands: Commands) -> int:
    """Serve the address argv[0], running each request with `commands` (the CLI's parser and runner)."""
    path = argv[0]
    idle = idle_seconds()
    limit_memory(int(env_number("DERIVLS_DAEMON_MEMORY", MEMORY)))

    def _stop(signum: int, frame: object) -> None:
        raise Terminated

    signal.signal(signal.SIGTERM, _stop)
    try:
        return _serve(path, idle, commands)
    except Terminated:
        return 128 + signal.SIGTERM


def _serve(path: str, idle: float, commands: Commands) -> int:
    held = lock(path)
    if held is None:
        print("derivls daemon: another daemon holds this address", file=sys.stderr, flush=True)
        return 0
    listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        with contextlib.suppress(FileNotFoundError):
            os.unlink(path)  # left by a daemon that was killed (the lock says none serves it)
        old = os.umask(0o177)
        try:
            listener.bind(path)  # created 0600, in a 0700 folder
        finally:
            os.umask(old)
        bound = os.stat(path).st_ino
        listener.listen(16)
        daemon = Daemon(path, idle, commands)
        daemon.watch(path)
        with contextlib.suppress(Exception):  # (a refused cache folder: only the socket is watched)
            from derivls.base.cachedir import cache_directory

            daemon.watch(str(cache_directory() / "daemon"))
        os.ftruncate(held, 0)
        os.write(held, str(os.getpid()).encode())
        daemon.serve(listener)
    finally:
        listener.close()
        with contextlib.suppress(OSError, UnboundLocalError):
            if os.stat(path).st_ino == bound:
                os.unlink(path)
        os.close(held)
    return 0
