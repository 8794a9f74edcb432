"""How derivls starts a process of its own: from a neutral folder, the workspace off sys.path, tied
to its parent's life.

- `python_command(module)`: `[python, -P, -m, module]` (Python 3.11+: `-P` keeps the working folder
  off sys.path; on 3.10 the neutral cwd below is what sys.path[0] names).
- `neutral_folder()`: the working folder a child starts in: derivls's cache folder when it is
  usable (private, the user's own: cachedir.py), else the filesystem root; never a workspace.
- `die_with_parent()`: called first in a child; on Linux the kernel sends it SIGTERM when its parent
  dies (prctl PR_SET_PDEATHSIG, through ctypes), and it exits at once if the parent is already gone.
  Elsewhere a no-op: the parent kills its children on exit (jobs/background.py's kill_all).
"""

from __future__ import annotations

import os
import signal
import sys

PARENT_ENV = "DERIVLS_PARENT_PID"  # the pid a child started by python_command must outlive not
PR_SET_PDEATHSIG = 1


def python_command(module: str) -> list[str]:
    flags = ["-P"] if sys.version_info >= (3, 11) else []
    return [sys.executable, *flags, "-m", module]


def neutral_folder() -> str:
    from derivls.base.cachedir import CacheFolderRefused, cache_directory, check_folder

    try:
        folder = cache_directory()
        check_folder(folder, create=True)
        return str(folder)
    except (CacheFolderRefused, OSError):
        return os.path.abspath(os.sep)


def child_environment() -> dict[str, str]:
    """The environment of a child: this process's, with its pid for `die_with_parent` to check."""
    return {**os.environ, PARENT_ENV: str(os.getpid())}


def die_with_parent(sig: int = signal.SIGTERM, parent: int | None = None) -> None:
    """Ask the kernel for `sig` when the parent dies (Linux); exit now if it is already gone."""
    if not sys.platform.startswith("linux"):
        return
    try:
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, int(sig), 0, 0, 0)
    except (OSError, AttributeError):
        return
    if parent is None:
        named = os.environ.get(PARENT_ENV, "")
        parent = int(named) if named.isdigit() else None
    if parent is not None and os.getppid() != parent:
        os._exit(1)  # the parent died before the request took effect
    global _watched
    _watched = parent


_watched: int | None = None  # the parent die_with_parent watches (None: not called, or no parent named)


def exit_if_orphaned() -> None:
    """SystemExit, as the parent's death's SIGTERM would raise, when the parent die_with_parent watches is
    gone: for loops that poll anyway (the compile engine's), in case that signal was lost or is late."""
    if _watched is not None and os.getppid() != _watched:
        raise SystemExit(128 + signal.SIGTERM)


def set_exit_on_term() -> None:
    """SIGTERM raises SystemExit, so `with`/`finally` blocks (temporary folders, killing compilers) run."""

    def _exit(signum: int, frame: object) -> None:
        from derivls.base.bounded import defer_exit

        if defer_exit(128 + signum):  # starting a compiler: raised once it is registered, to be killed
            return
        raise SystemExit(128 + signum)

    signal.signal(signal.SIGTERM, _exit)


__all__ = [
    "PARENT_ENV",
    "child_environment",
    "die_with_parent",
    "exit_if_orphaned",
    "neutral_folder",
    "python_command",
    "set_exit_on_term",
]
