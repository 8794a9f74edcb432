"""Every compiler, linker, tool and torch child derivls starts is bounded and dies with derivls.

    limits = Limits(seconds=120, memory=4 * GB)
    done = run(["g++", ...], limits, cwd=work)     # a Completed: returncode, stdout, stderr, limit
    proc = spawn(["g++", ...], limits, cwd=work)   # a Bounded, for callers that run several at once
    proc.expired() / proc.kill() / proc.limit_hit(stderr)

What each process gets, before it runs its first instruction (a `preexec_fn`, after fork, before exec):

- its own process group (`start_new_session`): `kill()` ends the compiler driver *and* what it started
  (cc1plus, as, collect2, ld), which killing the driver alone leaves running under PID 1;
- RLIMIT_AS (address space) at `memory`, RLIMIT_CPU at the time bound (the kernel ends a process that
  spins past it even if derivls itself was killed -9 before it could), RLIMIT_CORE 0;
- PR_SET_PDEATHSIG (Linux): SIGKILL when the thread that started it dies;
- stdin from /dev/null unless the caller passes a pipe (a `#include </proc/self/fd/0>` can't wait on a
  terminal or a pipe), and `TMPDIR` (`scratch`) pointed at a folder derivls owns and removes, so the
  compiler's `cc*.s` and the torch child's files land there.

A SIGTERM that a worker turns into SystemExit (children.set_exit_on_term) while `spawn` is starting a
process waits until the process is registered (`defer_exit`), so the exit's kill_all finds it.

The wall-clock bound is the caller's deadline: `run` waits at most `limits.seconds`, then kills the
group; `spawn`'s caller polls `expired()`. Every live group is killed at this process's exit
(atexit, and `kill_all()` for the workers' SIGTERM paths), so nothing outlives the server.
"""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import threading
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

GB = 1024**3
TIME = "time"
MEMORY = "memory"
# what a compiler (or the C++ runtime) prints when an allocation fails under RLIMIT_AS
_OUT_OF_MEMORY = (
    "out of memory",
    "virtual memory exhausted",
    "cannot allocate memory",
    "std::bad_alloc",
    "memory exhausted",
    "memoryerror",
    "allocation failure",  # gcc: "sorry, unimplemented: PCH allocation failure"
)
_live: dict[int, Bounded] = {}  # pid -> the process, while it may run
_lock = threading.Lock()
_atexit_registered = False


@dataclass(frozen=True)
class Limits:
    """Wall-clock seconds, address space in bytes; CPU seconds default to the wall-clock bound."""

    seconds: float
    memory: int
    cpu_seconds: float | None = None

    def describe(self, which: str) -> str:
        if which == MEMORY:
            return f"{self.memory / GB:.1f} GB of memory"
        return f"{self.seconds:.0f} s"


def env_limits(prefix: str, seconds: float, memory: int) -> Limits:
    """Limits from the environment (`<prefix>_SECONDS`, `<prefix>_MEMORY_MB`) over the defaults given.
    The environment is the user's (a workspace cannot set it): tests and unusual machines use it."""

    def number(name: str, default: float) -> float:
        raw = os.environ.get(f"{prefix}_{name}", "")
        try:
            value = float(raw)
        except ValueError:
            return default
        return value if value > 0 else default

    return Limits(number("SECONDS", seconds), int(number("MEMORY_MB", memory / 2**20) * 2**20))


def _preexec(limits: Limits) -> None:  # pragma: no cover (runs in the forked child)
    import resource

    try:
        resource.setrlimit(resource.RLIMIT_AS, (limits.memory, limits.memory))
    except (ValueError, OSError):
        pass
    cpu = int(limits.cpu_seconds if limits.cpu_seconds is not None else limits.seconds) + 1
    try:
        resource.setrlimit(resource.RLIMIT_CPU, (cpu, cpu + 5))  # SIGXCPU at the soft bound, SIGKILL at the hard
    except (ValueError, OSError):
        pass
    try:
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))
    except (ValueError, OSError):
        pass
    if sys.platform.startswith("linux"):
        try:
            import ctypes

            ctypes.CDLL(None, use_errno=True).prctl(1, int(signal.SIGKILL), 0, 0, 0)  # PR_SET_PDEATHSIG
        except Exception:
            pass


class Bounded:
    """A started process under its limits (see the module's doc)."""

    def __init__(self, popen: subprocess.Popen[Any], limits: Limits) -> None:
        self.popen = popen
        self.limits = limits
        self.started = time.monotonic()
        self.killed_for: str | None = None  # TIME when the wall clock ran out and kill() ended it

    @property
    def pid(self) -> int:
        return self.popen.pid

    def expired(self) -> bool:
        """Whether it has run past its wall-clock bound (the caller then kills it: `kill(TIME)`)."""
        return self.popen.poll() is None and time.monotonic() - self.started > self.limits.seconds

    def remaining(self) -> float:
        return max(0.0, self.limits.seconds - (time.monotonic() - self.started))

    def kill(self, reason: str | None = None) -> None:
        """SIGKILL to its whole process group (the driver and every process it started)."""
        if reason is not None and self.killed_for is None and self.popen.poll() is None:
            self.killed_for = reason
        _killpg(self.popen.pid)
        try:
            self.popen.wait(timeout=10)
        except subprocess.TimeoutExpired:
            pass
        _forget(self)

    def wait(self) -> int:
        """Its exit status, waiting at most until its bound (then it is killed: `killed_for` is TIME)."""
        try:
            self.popen.wait(timeout=self.remaining())
        except subprocess.TimeoutExpired:
            self.kill(TIME)
        _killpg(self.popen.pid)  # what it left in its group (a driver that exited before its cc1plus)
        _forget(self)
        return self.popen.returncode

    def limit_hit(self, stderr: str = "") -> str | None:
        """TIME or MEMORY when a bound ended it (or made it fail), None otherwise."""
        if self.killed_for is not None:
            return self.killed_for
        code = self.popen.returncode
        if code is None or code == 0:
            return None
        if code in (-signal.SIGXCPU, 128 + signal.SIGXCPU) or "CPU time limit exceeded" in stderr:
            return TIME
        lowered = stderr.lower()
        if any(marker in lowered for marker in _OUT_OF_MEMORY):
            return MEMORY
        if code == -signal.SIGKILL or "Killed signal terminated" in stderr:
            return MEMORY  # killed by the kernel (out of memory) or at the hard CPU bound after SIGXCPU
        return None


@dataclass(frozen=True)
class Completed:
    returncode: int
    stdout: str
    stderr: str
    limit: str | None  # TIME, MEMORY or None


def spawn(
    command: list[str],
    limits: Limits,
    *,
    cwd: str | os.PathLike[str],
    scratch: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
    stdin: int | None = subprocess.DEVNULL,
    stdout: int | object = subprocess.DEVNULL,
    stderr: int | object = subprocess.PIPE,
    text: bool = True,
) -> Bounded:
    """Start `command` bounded (module doc); `scratch`: its TMPDIR (default: this process's scratch folder)."""
    global _atexit_registered
    environment = dict(os.environ if env is None else env)
    folder = str(scratch) if scratch is not None else str(scratch_folder())
    environment.update(TMPDIR=folder, TMP=folder, TEMP=folder)
    me = threading.get_ident()
    _registering.add(me)  # a SIGTERM from here to the end of the registration waits for it (defer_exit)
    try:
        popen = subprocess.Popen(  # noqa: S603 (a compiler, a tool or the user's Python: never a shell)
            command,
            cwd=cwd,
            env=environment,
            stdin=stdin,
            stdout=stdout,  # type: ignore[arg-type]
            stderr=stderr,  # type: ignore[arg-type]
            text=text,
            start_new_session=True,
            preexec_fn=lambda: _preexec(limits),  # noqa: PLW1509
        )
        process = Bounded(popen, limits)
        with _lock:
            _live[popen.pid] = process
            if not _atexit_registered:
                import atexit

                atexit.register(kill_all)
                _atexit_registered = True
    finally:
        _registering.discard(me)
        _raise_deferred_exit()
    return process


# Thread idents between starting a process and registering it in _live. A SIGTERM handled there (the
# workers' set_exit_on_term: SystemExit) would leave a process started in its own group that no kill_all
# finds: seen, a compiler's child left running after a kill -9 of the server under load.
_registering: set[int] = set()
_deferred_exit: int | None = None


def defer_exit(code: int) -> bool:
    """For a SIGTERM handler (it runs in the main thread): True when that thread is starting a process, whose
    registration then raises SystemExit(code) once done (so the exit's kill_all finds it); False otherwise."""
    global _deferred_exit
    if threading.get_ident() in _registering:
        _deferred_exit = code
        return True
    return False


def _raise_deferred_exit() -> None:
    global _deferred_exit
    if _deferred_exit is not None and threading.get_ident() not in _registering:
        code, _deferred_exit = _deferred_exit, None
        raise SystemExit(code)


def run(
    command: list[str],
    limits: Limits,
    *,
    cwd: str | os.PathLike[str],
    input: str | None = None,
    scratch: str | os.PathLike[str] | None = None,
    env: dict[str, str] | None = None,
) -> Completed:
    """Run `command` to its end or its bound; its output (text) and which bound, if any, ended it."""
    process = spawn(
        command,
        limits,
        cwd=cwd,
        scratch=scratch,
        env=env,
        stdin=subprocess.PIPE if input is not None else subprocess.DEVNULL,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    try:
        out, err = process.popen.communicate(input, timeout=limits.seconds)
    except subprocess.TimeoutExpired:
        process.kill(TIME)
        out, err = process.popen.communicate()
    except BaseException:
        process.kill()
        raise
    process.wait()
    out_text = out if isinstance(out, str) else (out or b"").decode("utf-8", "replace")
    err_text = err if isinstance(err, str) else (err or b"").decode("utf-8", "replace")
    return Completed(process.popen.returncode, out_text, err_text, process.limit_hit(err_text))


def _killpg(pid: int) -> None:
    try:
        os.killpg(pid, signal.SIGKILL)
    except (ProcessLookupError, PermissionError, OSError):
        pass


def _forget(process: Bounded) -> None:
    with _lock:
        _live.pop(process.popen.pid, None)


def live() -> list[Bounded]:
    with _lock:
        return list(_live.values())


def kill_all() -> None:
    """Kill every bounded process group still running (this process's exit, a worker's SIGTERM)."""
    for process in live():
        _killpg(process.popen.pid)
        _forget(process)


def end_own_group() -> None:
    """A worker's last act when it is stopped (SIGTERM: a cancel, the server's exit or death): kill every
    bounded group it started, remove its scratch folder, then SIGKILL the process group it leads (itself
    and anything else it started). Does nothing in a process that leads no group (the CLI, in a shell's)."""
    remove_scratch()
    if os.getpgrp() == os.getpid():
        _killpg(os.getpid())


# --- the scratch folder: where this process's children put their temporary files ---------------------

SCRATCH_PREFIX = "derivls-"  # + pid + "-" + random: `$TMPDIR/derivls-<pid>-xxxx`
_scratch: Path | None = None


def scratch_folder() -> Path:
    """This process's private temporary folder (0700, made on first use, removed at exit). Folders of
    processes that are gone (killed -9) are removed when the next one is made."""
    global _scratch
    if _scratch is not None and _scratch.is_dir():
        return _scratch
    import atexit
    import tempfile

    remove_stale_scratch()
    _scratch = Path(tempfile.mkdtemp(prefix=f"{SCRATCH_PREFIX}{os.getpid()}-"))
    atexit.register(remove_scratch)
    if _guarded:
        _start_scratch_guard(_scratch)
    return _scratch


_guarded = False
_scratch_guards: list[subprocess.Popen[Any]] = []  # (held: their stdin's write end is this process's life)
# the guard of a long-lived process's scratch folder: waits for end of input (this process gone: a kill -9 runs
# no atexit), then removes the folder if this process is gone (its parent changed). argv: folder, this pid
# (a dying process closes its files before its children are given to another parent: the guard waits for that)
_SCRATCH_GUARD = (
    "import os, shutil, sys, time\n"
    "sys.stdin.read()\n"
    "for _ in range(100):\n"
    "    if os.getppid() != int(sys.argv[2]):\n"
    "        shutil.rmtree(sys.argv[1], ignore_errors=True)\n"
    "        break\n"
    "    time.sleep(0.05)\n"
)


def guard_scratch() -> None:
    """This process is long-lived (the server): its scratch folder, once made, is removed even when it is killed
    -9, by a guard process (a few lines of this Python, in a group of its own, reading a pipe only this process
    writes to). A process that ends normally removes it itself (atexit)."""
    global _guarded
    _guarded = True
    if _scratch is not None and _scratch.is_dir():
        _start_scratch_guard(_scratch)


def _start_scratch_guard(folder: Path) -> None:
    try:
        guard = subprocess.Popen(  # noqa: S603 (this Python, on the guard's own text)
            [sys.executable, "-I", "-c", _SCRATCH_GUARD, str(folder), str(os.getpid())],
            stdin=subprocess.PIPE,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            cwd=os.path.abspath(os.sep),
            start_new_session=True,  # not killed with this process's group: it outlives a kill -9
        )
    except OSError:
        return  # (no guard: the next derivls process removes the folder as a stale one)
    _scratch_guards.append(guard)


def remove_scratch() -> None:
    """Remove this process's scratch folder (after killing what may still write into it)."""
    global _scratch
    import shutil

    kill_all()
    if _scratch is not None:
        shutil.rmtree(_scratch, ignore_errors=True)
        _scratch = None


def remove_stale_scratch(root: str | None = None) -> None:
    """Remove `derivls-<pid>-*` folders (the user's own) whose process is gone."""
    import re
    import shutil
    import tempfile

    mine = getattr(os, "geteuid", lambda: None)()
    try:
        entries = list(os.scandir(root or tempfile.gettempdir()))
    except OSError:
        return
    pattern = re.compile(re.escape(SCRATCH_PREFIX) + r"(\d+)-\w+")
    for entry in entries:
        match = pattern.fullmatch(entry.name)
        if match is None:
            continue
        try:
            if not entry.is_dir(follow_symlinks=False):
                continue
            if mine is not None and entry.stat(follow_symlinks=False).st_uid != mine:
                continue
            os.kill(int(match.group(1)), 0)
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except (OSError, OverflowError):
            continue


__all__ = [
    "GB",
    "MEMORY",
    "TIME",
    "Bounded",
    "Completed",
    "Limits",
    "defer_exit",
    "end_own_group",
    "guard_scratch",
    "env_limits",
    "kill_all",
    "live",
    "remove_scratch",
    "remove_stale_scratch",
    "run",
    "scratch_folder",
    "spawn",
]
