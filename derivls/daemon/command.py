"""`derivls daemon start | stop | status`: the check daemon of this user, Python and environment."""

from __future__ import annotations

import argparse
import sys

from derivls.exits import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, error_line

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


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
    from derivls.daemon.address import Unreachable, socket_path
    from derivls.daemon.client import ask, ask_started, start

    out = sys.stdout if out is None else out
    try:
        path = socket_path()
    except Unreachable as e:
        sys.stderr.write(error_line("daemon", f"no daemon can be used: {e}") + "\n")
        return EXIT_USAGE
    status = ask(path, {"status": True}, timeout=10.0)
    if args.action == "status":
        if status is None:
            out.write("derivls daemon: not running\n")
            return EXIT_ERRORS
        out.write(_describe(status) + "\n")
        return EXIT_OK
    if args.action == "stop":
        if status is None:
            out.write("derivls daemon: not running\n")
            return EXIT_OK
        stopped = ask(path, {"stop": True}, timeout=10.0)
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


def _describe(status: dict[str, object]) -> str:
    return (
        f"derivls daemon: running (pid {status.get('pid')}, up {status.get('seconds')} s, {status.get('served')} "
        f"checks answered, {status.get('projects')} projects open, {status.get('rss_mb')} MB resident, stops after "
        f"{status.get('idle')} s idle)"
    )


__all__ = ["add_daemon_command", "run_daemon"]
