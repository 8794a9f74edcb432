"""`derivls daemon start | stop | status`: the check daemon of this user, Python and environment.

Also the daemon process's entry, `python -P -m derivls.cli.daemon SOCKET` (derivls.daemon.client starts
it): it hands derivls.daemon.serve the CLI's parser and command runner, so the daemon never imports the CLI.
"""

from __future__ import annotations

import argparse
import sys

from derivls.base.exits import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, error_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO

ASK_SECONDS = 10.0  # for the daemon's answer to `status` or `stop` (DERIVLS_DAEMON_ASK_SECONDS)
STOP_SECONDS = 10.0  # for a daemon sent SIGTERM to be gone


def add_daemon_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser(
        "daemon",
        help="start, stop or show the check daemon `check --daemon` asks (a warm check after an edit)",
        description="A derivls process that keeps each derivatives.yaml's analysis warm, so that `derivls check "
        "--daemon` after an edit analyses only the edited entries. It listens on a socket in your private cache "
        "folder, answers only you, runs no compiler, and stops after DERIVLS_DAEMON_IDLE seconds idle (30 "
        "minutes by default) or when derivls's code changes.",
    )
    parser.add_argument("action", choices=("start", "stop", "status"))


def run_daemon(args: argparse.Namespace, out: TextIO | None = None) -> int:
    from derivls.daemon.address import Unreachable, env_number, socket_path
    from derivls.daemon.client import ask, ask_started, start

    out = sys.stdout if out is None else out
    try:
        path = socket_path()
    except Unreachable as e:
        sys.stderr.write(error_line("daemon", f"no daemon can be used: {e}") + "\n")
        return EXIT_USAGE
    seconds = env_number("DERIVLS_DAEMON_ASK_SECONDS", ASK_SECONDS)
    status = ask(path, {"status": True}, timeout=seconds)
    busy = lock_holder(path) if status is None else None  # alive, but no answer in time (a long check)
    if args.action == "status":
        if busy is not None:
            out.write(f"derivls daemon: running (pid {busy}) but busy: no answer within {seconds:g} s\n")
            return EXIT_OK
        if status is None:
            out.write("derivls daemon: not running\n")
            return EXIT_ERRORS
        out.write(_describe(status) + "\n")
        return EXIT_OK
    if args.action == "stop":
        if busy is not None:
            return _terminate(path, busy, out)
        if status is None:
            out.write("derivls daemon: not running\n")
            return EXIT_OK
        stopped = ask(path, {"stop": True}, timeout=seconds)
        out.write(f"derivls daemon: stopped (pid {stopped.get('stopped')})\n" if stopped else "derivls daemon: gone\n")
        return EXIT_OK
    if status is not None:
        out.write(_describe(status) + "\n")
        return EXIT_OK
    process = start(path)
    if process is None:
        return EXIT_ERRORS
    status = ask_started(path, {"status": True}, process)
    if status is not None:
        out.write(_describe(status) + "\n")
        return EXIT_OK
    sys.stderr.write(error_line("daemon", f"the daemon did not start (see {path}.log)") + "\n")
    return EXIT_ERRORS


def lock_holder(path: str) -> int | None:
    """The pid of the daemon holding the lock of the address `path` (alive: the lock is its life), else None."""
    import fcntl
    import os

    try:
        fd = os.open(path + ".lock", os.O_RDONLY | getattr(os, "O_NOFOLLOW", 0) | getattr(os, "O_NONBLOCK", 0))
    except OSError:
        return None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            text = os.read(fd, 32).decode("ascii", "replace").strip()
            return int(text) if text.isdigit() else None
        except OSError:
            return None
        return None  # (no daemon holds it: a lock file left behind)
    finally:
        os.close(fd)


def _terminate(path: str, pid: int, out: TextIO) -> int:
    """Stop the daemon `pid` that does not answer: SIGTERM (its first one stops it), SIGCONT should it be stopped
    itself; then wait for its lock to be released."""
    import os
    import signal
    import time

    for sig in (signal.SIGTERM, signal.SIGCONT):
        try:
            os.kill(pid, sig)
        except ProcessLookupError:
            break
        except OSError as e:
            sys.stderr.write(error_line("daemon", f"cannot stop the daemon (pid {pid}): {e.strerror}") + "\n")
            return EXIT_ERRORS
    deadline = time.monotonic() + STOP_SECONDS
    while lock_holder(path) == pid and time.monotonic() < deadline:
        time.sleep(0.05)
    if lock_holder(path) == pid:
        sys.stderr.write(error_line("daemon", f"the daemon (pid {pid}) did not stop within {STOP_SECONDS:g} s") + "\n")
        return EXIT_ERRORS
    out.write(f"derivls daemon: stopped (pid {pid}, which was busy)\n")
    return EXIT_OK


def _describe(status: dict[str, object]) -> str:
    return (
        f"derivls daemon: running (pid {status.get('pid')}, up {status.get('seconds')} s, {status.get('served')} "
        f"checks answered, {status.get('projects')} projects open, {status.get('rss_mb')} MB resident, stops after "
        f"{status.get('idle')} s idle)"
    )


__all__ = ["add_daemon_command", "run_daemon"]


def serve_daemon(argv: list[str]) -> int:
    """The daemon process: serve the address argv[0] with the CLI's parser and runner (imported here, before the
    first request, so that request pays for the check's modules only once)."""
    import derivls.cli.commandline as commands
    from derivls.daemon import serve

    return serve.main(argv, commands)


if __name__ == "__main__":
    raise SystemExit(serve_daemon(sys.argv[1:]))
