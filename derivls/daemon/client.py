"""`derivls check --daemon ...`: ask this user's daemon (derivls.daemon.serve), starting it when none answers.

On the fast path: derivls/__main__.py calls `run` before importing the command line's parser, so a check a
warm daemon answers costs this process an interpreter, this module and a socket round trip. `run` returns
None whenever the daemon cannot answer (no Unix sockets, no usable cache folder, the daemon failed or was
asked for what it does not run): the caller then runs the check in this process, with the same result.
"""

from __future__ import annotations

import os
import socket
import sys
import time

from derivls.daemon.address import MAX_REPLY, Unreachable, idle_seconds, receive, send, socket_path

TYPE_CHECKING = False  # typing is not imported at run time (the client's fast path)
if TYPE_CHECKING:
    import subprocess

FLAG = "--daemon"
START_SECONDS = 60.0  # for a new daemon to answer its first request (a cold project: seconds)
REPLY_SECONDS = 600.0  # for an answer (a cold project and every entry analysed; a queue of other clients)


def wants_daemon(argv: list[str]) -> bool:
    """`derivls check ... --daemon ...` (before `--`, which ends the options)."""
    if not argv or argv[0] != "check":
        return False
    options = argv[: argv.index("--")] if "--" in argv else argv
    return FLAG in options


def run(argv: list[str]) -> int | None:
    """`derivls <argv>` answered by the daemon: its exit status, its output written here; None: run it here."""
    request: dict[str, object] = {"argv": [a for a in argv if a != FLAG], "cwd": os.getcwd()}
    try:
        path = socket_path()
    except (Unreachable, OSError) as e:
        _here(f"no daemon can be used: {e}")
        return None
    reply = ask(path, request)
    if reply is None or reply.get("stale"):
        process = start(path)
        if process is None:
            return None
        reply = ask_started(path, request, process)
        if reply is None:
            _here(f"the daemon did not answer ({_log_tail(path) or 'no message'})")
            return None
    code = reply.get("code")
    if "fallback" in reply or not isinstance(code, int):
        return None  # (what it does not run: --compile, --no-cache; or it failed, and its log says why)
    for stream, text in ((sys.stdout, reply.get("stdout")), (sys.stderr, reply.get("stderr"))):
        if isinstance(text, str) and text:
            stream.write(text)
            stream.flush()
    return code


def ask(path: str, request: dict[str, object], timeout: float = REPLY_SECONDS) -> dict[str, object] | None:
    """The daemon's reply; None when no daemon listens at `path` (or it went away mid-request)."""
    sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    try:
        sock.settimeout(timeout)
        sock.connect(path)
        send(sock, request)
        reply = receive(sock, MAX_REPLY)
    except (OSError, EOFError, ValueError):
        return None
    finally:
        sock.close()
    return reply if isinstance(reply, dict) else None


def ask_started(path: str, request: dict[str, object], process: subprocess.Popen[bytes]) -> dict[str, object] | None:
    """Ask the daemon just started until it answers (None: it exited, or START_SECONDS passed)."""
    deadline = time.monotonic() + START_SECONDS
    while time.monotonic() < deadline:
        reply = ask(path, request)
        if reply is not None and not reply.get("stale"):
            return reply
        if process.poll() is not None:  # (0: another daemon took the address meanwhile: ask it once more)
            return ask(path, request) if process.returncode == 0 else None
        time.sleep(0.02)
    return None


def start(path: str) -> subprocess.Popen[bytes] | None:
    """Start a daemon for `path` (detached: its own session, a neutral folder, the working folder off
    sys.path, stdin and stdout closed, stderr to `<path>.log`); None (said on stderr) if it cannot."""
    import subprocess

    from derivls.base.children import PARENT_ENV, neutral_folder, python_command

    env = {k: v for k, v in os.environ.items() if k != PARENT_ENV}
    argv = [*python_command("derivls.cli.daemon"), path]
    try:
        log = os.open(path + ".log", os.O_WRONLY | os.O_CREAT | os.O_TRUNC | getattr(os, "O_NOFOLLOW", 0), 0o600)
        try:
            process = subprocess.Popen(
                argv,
                cwd=neutral_folder(),
                env=env,
                stdin=subprocess.DEVNULL,
                stdout=subprocess.DEVNULL,
                stderr=log,
                close_fds=True,
                start_new_session=True,  # it outlives this command: that is what it is for
            )
        finally:
            os.close(log)
    except OSError as e:
        _here(f"cannot start the daemon: {e}")
        return None
    minutes = idle_seconds() / 60
    print(
        f"derivls: started a check daemon (pid {process.pid}); it stops after {minutes:g} minutes idle "
        "or with `derivls daemon stop`",
        file=sys.stderr,
        flush=True,
    )
    return process


def _log_tail(path: str) -> str:
    try:
        with open(path + ".log", "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(f.tell() - 2000, 0))
            lines = f.read().decode("utf-8", "replace").strip().splitlines()
    except OSError:
        return ""
    return lines[-1] if lines else ""


def _here(why: str) -> None:
    print(f"derivls: {why}; checking in this process", file=sys.stderr, flush=True)


__all__ = ["FLAG", "ask", "ask_started", "run", "start", "wants_daemon"]
