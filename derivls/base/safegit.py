"""git, run so that it runs nothing but git: the one way derivls starts git (`--since REF`: derivls/project/since.py).

A repository derivls reads may be anyone's, and its `.git/config` names commands git would run: an ssh
command, an upload-pack program, remote and credential helpers (all reached when a partial clone's
missing object is fetched from its promisor remote), an fsmonitor hook. So every git command gets:

- no fetch and no transport: `GIT_NO_LAZY_FETCH=1` (a missing object is an error; git 2.39.4 and newer),
  `GIT_ALLOW_PROTOCOL=none` and `-c protocol.allow=never` (no protocol at all, so no ssh, upload-pack or
  remote helper runs, for older git too);
- no config-driven command: `-c core.fsmonitor=false`, `-c core.hooksPath=/dev/null`, `--no-pager`
  (and `GIT_PAGER=cat`), no terminal prompt (`GIT_TERMINAL_PROMPT=0`), no implicit bare repository
  (`-c safe.bareRepository=explicit`: a folder of the workspace dressed as a bare repository is not one);
  command-line `-c` outranks every configuration file;
- literal paths (`GIT_LITERAL_PATHSPECS=1`), no optional locks (`GIT_OPTIONAL_LOCKS=0`: it writes nothing);
- a start outside the workspace: working folder the filesystem root, the repository named by `-C`; stdin
  /dev/null; bounded as derivls's other children (derivls.base.bounded: its own process group, killed whole at
  SECONDS, RLIMIT_CPU, RLIMIT_AS MEMORY, dies with derivls).

The system's and the user's own git configuration are read as usual (they are the machine's and the user's,
not a repository's; `GIT_CONFIG_NOSYSTEM` is left alone); what a repository's configuration could add
(an `include.path` of a FIFO or /dev/zero) is cut by the bounds. Only plumbing is asked for (rev-parse, ls-tree, cat-file without --textconv or --filters): no diff, filter,
textconv or hook is in their path. A missing git, a timeout or a failure to start is a UsageError.
"""

from __future__ import annotations

import os
import subprocess
from dataclasses import dataclass

from derivls.base.exits import UsageError

SECONDS = 30.0  # one git command, wall clock (and CPU)
MEMORY = 4 << 30  # address space: git maps pack windows of up to 1 GB
ENVIRONMENT = {
    "GIT_NO_LAZY_FETCH": "1",
    "GIT_ALLOW_PROTOCOL": "none",
    "GIT_PROTOCOL_FROM_USER": "0",
    "GIT_TERMINAL_PROMPT": "0",
    "GIT_PAGER": "cat",
    "GIT_OPTIONAL_LOCKS": "0",
    "GIT_LITERAL_PATHSPECS": "1",
}
CONFIG = (
    "core.fsmonitor=false",
    "core.hooksPath=/dev/null",
    "protocol.allow=never",
    "safe.bareRepository=explicit",
)


@dataclass(frozen=True)
class GitResult:
    returncode: int
    stdout: bytes
    stderr: bytes


def git_command(folder: str, *args: str) -> list[str]:
    """The command line of `git <args>` in the repository of `folder`."""
    options = [item for setting in CONFIG for item in ("-c", setting)]
    return ["git", "--no-pager", *options, "-C", folder, *args]


def git_environment() -> dict[str, str]:
    return {**os.environ, **ENVIRONMENT}


def run_git(folder: str, *args: str, seconds: float | None = None) -> GitResult:
    """`git <args>` in the repository of `folder`, hardened and bounded (module doc). Raises UsageError."""
    seconds = SECONDS if seconds is None else seconds
    if os.name != "posix":  # (no process groups or rlimits there: the time bound alone)
        return _run_plain(folder, args, seconds)
    from derivls.base import bounded

    limits = bounded.Limits(seconds=seconds, memory=MEMORY)
    try:
        process = bounded.spawn(
            git_command(folder, *args),
            limits,
            cwd=os.path.abspath(os.sep),
            env=git_environment(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=False,
        )
    except FileNotFoundError:
        raise UsageError("--since needs git, and git is not on PATH.") from None
    except OSError as e:
        raise UsageError(f"git cannot run: {e}.") from None
    try:
        out, err = process.popen.communicate(timeout=limits.seconds)
    except subprocess.TimeoutExpired:
        process.kill(bounded.TIME)
        process.popen.communicate()  # (its pipes closed, once its whole group is dead)
        raise UsageError(f"git did not answer within {limits.seconds:g} s in {folder}.") from None
    except BaseException:
        process.kill()
        raise
    process.wait()  # (its group: anything it left)
    return GitResult(process.popen.returncode, out or b"", err or b"")


def _run_plain(folder: str, args: tuple[str, ...], seconds: float) -> GitResult:
    try:
        done = subprocess.run(
            git_command(folder, *args),
            cwd=os.path.abspath(os.sep),
            env=git_environment(),
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=seconds,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("--since needs git, and git is not on PATH.") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git did not answer within {seconds:g} s in {folder}.") from None
    except OSError as e:
        raise UsageError(f"git cannot run: {e}.") from None
    return GitResult(done.returncode, done.stdout, done.stderr)


__all__ = ["CONFIG", "ENVIRONMENT", "MEMORY", "SECONDS", "GitResult", "git_command", "git_environment", "run_git"]
