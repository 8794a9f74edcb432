"""`--since REF`: the entries of a derivatives.yaml whose text differs from a git ref's version of the file.

What a pre-push hook or a pull request's CI job checks: `check --since origin/main` reports the
diagnostics of the changed entries only, `gradcheck --since origin/main` checks their formulas. git is
asked for the ref's blob only (`git rev-parse`, `git cat-file`: no filter, hook or pager runs, and
core.fsmonitor is off), from the file's own folder, with stdin closed and a time limit, the blob's size
capped as the file's is; a missing git, a folder outside a repository or a bad ref is a
UsageError. A file the ref does not have is new: every entry changed.
"""

from __future__ import annotations

import os
import subprocess
from collections.abc import Sequence
from pathlib import Path

from derivls.codes.model import Stage
from derivls.derivatives.document import split_entries
from derivls.diagnostics import Diagnostic
from derivls.exits import UsageError
from derivls.frozen import frozen_dataclass
from derivls.limits import MAX_FILE_BYTES
from derivls.linebreaks import count_line_breaks

GIT_TIMEOUT = 30.0  # seconds for one git command


@frozen_dataclass
class Changed:
    """The changed entries of a file: each one's 0-based first line and its lines [first, end)."""

    ranges: tuple[tuple[int, int], ...]
    entries: tuple[tuple[int, int], ...]  # every entry's lines, changed or not

    @property
    def first_lines(self) -> list[int]:
        return [start for start, _ in self.ranges]

    def keeps(self, d: Diagnostic) -> bool:
        """A diagnostic of a changed entry, about the set-up, or outside every entry (the file's own)."""
        line = d.span.line
        if d.code.stage == Stage.SETUP or not any(start <= line < end for start, end in self.entries):
            return True
        return any(start <= line < end for start, end in self.ranges)

    def filter(self, diagnostics: Sequence[Diagnostic]) -> tuple[Diagnostic, ...]:
        return tuple(d for d in diagnostics if self.keeps(d))


def _git(folder: Path, *args: str) -> subprocess.CompletedProcess[bytes]:
    env = {**os.environ, "GIT_TERMINAL_PROMPT": "0", "GIT_PAGER": "cat", "GIT_OPTIONAL_LOCKS": "0"}
    try:
        return subprocess.run(
            ["git", "-c", "core.fsmonitor=false", "-C", str(folder), *args],
            stdin=subprocess.DEVNULL,
            capture_output=True,
            timeout=GIT_TIMEOUT,
            env=env,
            check=False,
        )
    except FileNotFoundError:
        raise UsageError("--since needs git, and git is not on PATH.") from None
    except subprocess.TimeoutExpired:
        raise UsageError(f"git did not answer within {GIT_TIMEOUT:.0f} s in {folder}.") from None
    except OSError as e:
        raise UsageError(f"git cannot run: {e}.") from None


def _first_line(output: bytes) -> str:
    text = output.decode("utf-8", "replace").strip()
    return text.splitlines()[0] if text else "(no message)"


def text_at(ref: str, path: Path) -> str | None:
    """The file's text at `ref` (None: the ref has no such file). Raises UsageError."""
    if not ref or ref.startswith("-"):
        raise UsageError(f"--since {ref!r} is not a git revision.")
    folder = Path(os.path.abspath(path)).parent
    verified = _git(folder, "rev-parse", "--verify", "--quiet", "--end-of-options", f"{ref}^{{commit}}")
    if verified.returncode != 0:
        inside = _git(folder, "rev-parse", "--git-dir")
        if inside.returncode != 0:
            raise UsageError(f"--since: {path} is not in a git repository ({_first_line(inside.stderr)}).")
        raise UsageError(f"--since: {ref!r} is not a commit of the repository of {path}.")
    commit = verified.stdout.decode().strip()
    blob = f"{commit}:./{os.path.basename(path)}"
    size = _git(folder, "cat-file", "-s", blob)
    if size.returncode != 0:
        return None
    if int(size.stdout.decode().strip() or 0) > MAX_FILE_BYTES:  # read as the file itself would be: capped
        raise UsageError(f"--since: {path} at {ref} is over derivls's limit of {MAX_FILE_BYTES / 1e6:.0f} MB.")
    shown = _git(folder, "cat-file", "blob", blob)
    if shown.returncode != 0:
        raise UsageError(f"--since: git cannot read {path} at {ref}: {_first_line(shown.stderr)}.")
    return shown.stdout.decode("utf-8", "replace")


def _normal(text: str) -> str:
    return "\n".join(line.rstrip() for line in text.splitlines()).strip()


def changed_entries(text: str, before: str | None) -> Changed:
    """The entries of `text` whose text (trailing blanks aside) is not one of `before`'s entries."""
    old = {_normal(c.text) for c in split_entries(before)} if before is not None else set()
    ranges, entries = [], []
    for chunk in split_entries(text):
        if not chunk.is_entry:
            continue
        lines = (chunk.start_line, chunk.start_line + max(1, count_line_breaks(chunk.text)))
        entries.append(lines)
        if _normal(chunk.text) not in old:
            ranges.append(lines)
    return Changed(tuple(ranges), tuple(entries))


def changed_since(ref: str, path: Path, text: str) -> Changed:
    """The entries of `path` (whose text is `text`) that differ from its version at `ref`."""
    return changed_entries(text, text_at(ref, path))


__all__ = ["Changed", "changed_entries", "changed_since", "text_at"]
