"""`--since REF`: the entries of a derivatives.yaml whose text differs from a git ref's version of the file.

What a pre-push hook or a pull request's CI job checks: `check --since origin/main` reports the
diagnostics of the changed entries only, `gradcheck --since origin/main` checks their formulas. git is
asked for the ref's blob only (`git rev-parse`, `git ls-tree`, `git cat-file`), in the file's repository,
through derivls.base.safegit: no fetch, no transport, no hook, filter, pager or fsmonitor, bounded in time and
memory; the blob's size is capped as the file's is. A missing git, a folder outside a repository, a bad
ref, or a blob the repository does not hold (a partial clone's: it is never fetched) is a UsageError. A
file the ref does not have is new: every entry changed.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

from derivls.base.diagnostics import Diagnostic
from derivls.base.exits import UsageError
from derivls.base.frozen import frozen_dataclass
from derivls.base.limits import MAX_FILE_BYTES
from derivls.base.linebreaks import count_line_breaks
from derivls.base.safegit import GitResult, run_git
from derivls.codes.model import Stage
from derivls.derivatives.document import split_entries

GIT_TIMEOUT = 30.0  # seconds for one git command (derivls.base.safegit.SECONDS)


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


def _git(folder: Path, *args: str) -> GitResult:
    return run_git(str(folder), *args, seconds=GIT_TIMEOUT)


def _first_line(output: bytes) -> str:
    """git's message: its first `fatal:` or `error:` line, else its first line."""
    lines = output.decode("utf-8", "replace").strip().splitlines()
    fatal = [line for line in lines if line.startswith(("fatal:", "error:"))]
    return (fatal or lines or ["(no message)"])[0]


def _unreadable(path: Path, ref: str, failed: GitResult) -> UsageError:
    why = _first_line(failed.stderr)
    if b"promisor remote" in failed.stderr or b"lazy fetching disabled" in failed.stderr:
        why += " (a partial clone lacks it, and derivls never fetches: fetch it with git first)"
    return UsageError(f"--since: git cannot read {path} at {ref}: {why}.")


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
    name = os.path.basename(path)
    # the tree's entry (trees only: a partial clone has them), then the blob, which may be missing there
    listed = _git(folder, "ls-tree", "-z", commit, "--", name)
    if listed.returncode != 0:
        raise _unreadable(path, ref, listed)
    blob = _blob_of(listed.stdout, name)
    if blob is None:
        return None
    size = _git(folder, "cat-file", "-s", blob)
    if size.returncode != 0:
        raise _unreadable(path, ref, size)
    if int(size.stdout.decode().strip() or 0) > MAX_FILE_BYTES:  # read as the file itself would be: capped
        raise UsageError(f"--since: {path} at {ref} is over derivls's limit of {MAX_FILE_BYTES / 1e6:.0f} MB.")
    shown = _git(folder, "cat-file", "blob", blob)
    if shown.returncode != 0:
        raise _unreadable(path, ref, shown)
    return shown.stdout.decode("utf-8", "replace")


def _blob_of(listing: bytes, name: str) -> str | None:
    """The object id of the blob `name` in `git ls-tree -z` output (None: no such file there)."""
    wanted = os.fsencode(name)
    for record in listing.split(b"\0"):
        info, tab, listed = record.partition(b"\t")
        fields = info.split()
        if tab and listed == wanted and len(fields) == 3 and fields[1] == b"blob":
            return fields[2].decode("ascii")
    return None


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
