"""The daemon: `python -P -m derivls.daemon.serve SOCKET`, started by derivls.daemon.client.

One request at a time, each a `derivls check` command line and the client's working folder, answered with
what that command would print and its exit status: the command line is parsed by derivls's own parser and
run by derivls.cli.run_command, with the daemon's open projects (derivls.daemon.projects) in place of the
whole-result cache. `--compile` (it runs a compiler), `--since` (it runs git) and `--no-cache` (it is
process-wide) are answered "run it yourself"; so is anything the daemon fails at (the client then runs
the check as usual): the daemon starts no process but the forks of derivls's own analysis and cache writer.

Bounds: it stops after address.idle_seconds() without a request, when derivls's code on disk changes
(the reply says so and the client starts a new one), on a `stop` request, or on SIGTERM; RLIMIT_AS is
MEMORY; a request is read within REQUEST_SECONDS and is at most address.MAX_MESSAGE bytes, a reply is
written within REPLY_SECONDS; a peer of another user id is closed unanswered. A lock file beside the socket makes one daemon per address: a second one exits.
What it prints (a traceback of its own failure) goes to `<socket>.log`, which it truncates at start.
"""

from __future__ import annotations

import argparse
import contextlib
import io
import os
import signal
import socket
import struct
import sys
import time
import traceback

from derivls.daemon.address import MAX_MESSAGE, env_number, idle_seconds, receive, send

MEMORY = 6 << 30  # address space: a project is ~0.3-0.5 GB resident; KEEP of them and the forked cold pass
REQUEST_SECONDS = 10.0
REPLY_SECONDS = 60.0
LOCK_SECONDS = 10.0  # how long a new daemon waits for the one it replaces (stopping: code changed) to go


class Daemon:
    def __init__(self, path: str, idle: float) -> None:
        from derivls.daemon.projects import Projects
        from derivls.diskcache import code_fingerprint

        self.path, self.idle = path, idle
        self.projects = Projects()
        self.fingerprint = code_fingerprint()
        self.started, self.served = time.time(), 0
        self.home = os.getcwd()
        self.stopping = False
        self.parser: argparse.ArgumentParser | None = None

    def serve(self, listener: socket.socket) -> None:
        listener.settimeout(self.idle)
        while not self.stopping:
            try:
                conn, _ = listener.accept()
            except TimeoutError:
                return  # idle
            with conn:
                try:
                    self.answer(conn)
                except (OSError, EOFError, ValueError, UnicodeDecodeError) as e:
                    print(f"derivls daemon: a request was dropped: {e}", file=sys.stderr, flush=True)

    def answer(self, conn: socket.socket) -> None:
        if not same_user(conn):
            return
        conn.settimeout(REQUEST_SECONDS)
        request = receive(conn, MAX_MESSAGE)
        if not isinstance(request, dict):
            raise ValueError("a request is a JSON object")
        conn.settimeout(REPLY_SECONDS)  # (for the reply: a client that stops reading is dropped, not waited for)
        if request.get("stop"):
            self.stopping = True
            send(conn, {"stopped": os.getpid()})
            return
        if request.get("status"):
            send(conn, self.status())
            return
        from derivls.diskcache import code_fingerprint

        if code_fingerprint() != self.fingerprint:
            self.stopping = True
            send(conn, {"stale": "derivls's code changed on disk since this daemon started"})
            return
        argv, cwd = request.get("argv"), request.get("cwd")
        if not isinstance(argv, list) or not all(isinstance(a, str) for a in argv) or not isinstance(cwd, str):
            raise ValueError("a request has argv (strings) and cwd (a string)")
        reply = self.run(argv, cwd)
        send(conn, reply)
        self.served += "code" in reply  # (not a fallback: the client ran that one)

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
        from derivls.cli import build_parser, run_command

        out, err = io.StringIO(), io.StringIO()
        try:
            os.chdir(cwd)
        except OSError as e:
            return {"fallback": f"cannot enter {cwd}: {e.strerror}"}
        try:
            with contextlib.redirect_stdout(out), contextlib.redirect_stderr(err):
                if self.parser is None:
                    self.parser = build_parser("check")  # (reusable: parse_args makes a new namespace)
                parser = self.parser
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
                code = run_command(args, parser)
        except Exception:  # a defect of derivls: the client runs the check itself, and the log keeps this
            traceback.print_exc(file=sys.stderr)
            sys.stderr.flush()
            return {"fallback": "the daemon failed (its log has the traceback)"}
        finally:
            os.chdir(self.home)
        return {"code": code, "stdout": out.getvalue(), "stderr": err.getvalue()}


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


def main(argv: list[str]) -> int:
    path = argv[0]
    idle = idle_seconds()
    limit_memory(int(env_number("DERIVLS_DAEMON_MEMORY", MEMORY)))

    def _stop(signum: int, frame: object) -> None:
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _stop)
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
        daemon = Daemon(path, idle)
        import derivls.cli  # noqa: F401  (the first request then pays for the check's modules only once)

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


if __name__ == "__main__":
    raise SystemExit(main(sys.argv[1:]))
