"""Bounds on what derivls reads and reports, whatever a file holds.

- ``read_regular_file(path, what)``: the text of a regular file of at most ``MAX_FILE_BYTES``.
  /dev/zero, a FIFO, a socket or a directory is refused with one clear line (a FIFO is opened
  without blocking), a symlink loop is reported, not raised: every refusal is a
  ``FileRefused``, an ``OSError``, so callers that already handle unreadable files handle it.
- ``cap_diagnostics(items, make_truncated)``: at most ``MAX_DIAGNOSTICS`` per file, then one
  diagnostic saying how many were left out.
"""

from __future__ import annotations

import errno
import os
import stat
from collections.abc import Callable, Sequence
from pathlib import Path

from derivls.base.diagnostics import Diagnostic, Span, error, warning
from derivls.codes.yamlfile import DIAGNOSTICS_TRUNCATED, ENTRY_TOO_LARGE, TOO_MANY_ENTRIES

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import TypeVar

    from derivls.derivatives.document import Chunk

    T = TypeVar("T")

__all__ = [
    "MAX_DIAGNOSTICS",
    "MAX_FILE_BYTES",
    "FileRefused",
    "MAX_ENTRIES",
    "MAX_NATIVE_ENTRIES",
    "MAX_ENTRY_CHARS",
    "MAX_RESPONSE_ITEMS",
    "bound_chunks",
    "bound_text",
    "bound_diagnostics",
    "cap_diagnostics",
    "read_regular_file",
    "resolve_lenient",
    "safe_resolve",
]

MAX_FILE_BYTES = 64 * 1024 * 1024  # the real files: derivatives.yaml 0.2 MB, native_functions.yaml 0.6 MB
MAX_DIAGNOSTICS = 10_000  # per file; the real derivatives.yaml has none, a broken one a few dozen
MAX_ENTRIES = 20_000  # entries of derivatives.yaml analysed; the real file has about 1,400
# entries of native_functions.yaml (the real files have 2,300-2,700): each costs ~2 KB once read, and
# 50 MB of renamed copies (190,000 entries, 250,000 functions) cost 650 MB, so a file over this is refused
MAX_NATIVE_ENTRIES = 30_000
MAX_RESPONSE_ITEMS = 5_000  # symbols, inlay hints, code lenses in one answer; the real file needs under 1,300
MAX_ENTRY_CHARS = 1_000_000  # characters of one entry (its lines, values); the real file's largest is under 2,000


class FileRefused(OSError):
    """A file derivls will not read (not a regular file, too big, a symlink loop); str() is one line."""

    def __init__(self, message: str) -> None:
        super().__init__(message)
        self.message = message

    def __str__(self) -> str:
        return self.message


def _kind(mode: int) -> str:
    if stat.S_ISDIR(mode):
        return "a directory"
    if stat.S_ISFIFO(mode):
        return "a FIFO (named pipe)"
    if stat.S_ISCHR(mode):
        return "a character device"
    if stat.S_ISBLK(mode):
        return "a block device"
    if stat.S_ISSOCK(mode):
        return "a socket"
    return "not a regular file"


def read_regular_file(path: str | os.PathLike[str], what: str = "file", max_bytes: int = MAX_FILE_BYTES) -> str:
    """The UTF-8 text of `path` if it is a regular file of at most `max_bytes` bytes, else FileRefused.

    FileNotFoundError and UnicodeDecodeError pass through unchanged (callers word them already)."""
    name = os.fspath(path)
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_NOCTTY", 0)
    try:
        fd = os.open(name, flags)
    except FileNotFoundError:
        raise
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise FileRefused(f"{what} {name} is a symlink loop") from None
        if e.errno == errno.EISDIR:
            raise FileRefused(f"{what} {name} is a directory, not a file") from None
        if e.errno == errno.ENXIO:  # a FIFO with no writer, a socket
            raise FileRefused(f"{what} {name} is not a regular file") from None
        raise
    try:
        info = os.fstat(fd)
        if not stat.S_ISREG(info.st_mode):
            raise FileRefused(f"{what} {name} is {_kind(info.st_mode)}, not a regular file; refused")
        if info.st_size > max_bytes:
            raise FileRefused(
                f"{what} {name} is {info.st_size / 1e6:.1f} MB, over derivls's limit of {max_bytes / 1e6:.0f} MB; refused"
            )
        os.set_blocking(fd, True)
        with os.fdopen(fd, "rb", closefd=True) as f:
            fd = -1
            data = f.read(max_bytes + 1)
    finally:
        if fd >= 0:
            os.close(fd)
    if len(data) > max_bytes:  # grew while read
        raise FileRefused(f"{what} {name} is over derivls's limit of {max_bytes / 1e6:.0f} MB; refused")
    return data.decode("utf-8")


def safe_resolve(path: Path) -> Path:
    """path.resolve(), or FileRefused on a symlink loop (Path.resolve raises RuntimeError for one)."""
    try:
        return path.resolve()
    except RuntimeError as e:  # "Symlink loop from ..."
        raise FileRefused(f"{path} goes through a symlink loop ({e})") from None
    except OSError as e:
        if e.errno == errno.ELOOP:
            raise FileRefused(f"{path} goes through a symlink loop") from None
        raise


def cap_diagnostics(items: Sequence[T], make_truncated: Callable[[int], T], limit: int = MAX_DIAGNOSTICS) -> list[T]:
    """The first `limit` items, then make_truncated(number left out) if any were."""
    if len(items) <= limit:
        return list(items)
    return [*items[:limit], make_truncated(len(items) - limit)]


def resolve_lenient(path: Path) -> Path:
    """path.resolve(), or the absolute path as written when it goes through a symlink loop (a loop is
    then simply not a file: `is_file()` is False, and the path is listed among those tried)."""
    try:
        return path.resolve()
    except (RuntimeError, OSError):
        return Path(os.path.abspath(path))


def bound_text(text: str) -> tuple[str, list[Diagnostic]]:
    """derivatives.yaml cut before its (MAX_ENTRIES + 1)-th entry, with an error there; `text` itself when
    it has no more entries (a count at C speed: a keystroke in a real file pays about a tenth of a ms)."""
    if text.count("\n-") < MAX_ENTRIES:
        return text, []
    entries = 1 if text.startswith("-") else 0
    at = text.find("\n-")
    while at >= 0:
        if text[at + 2 : at + 3] in ("", " ", "\t", "\r", "\n"):  # document._entry_starts's rule
            entries += 1
            if entries > MAX_ENTRIES:
                from derivls.base.linebreaks import count_line_breaks

                line = count_line_breaks(text, 0, at + 1)
                refusal = error(
                    Span(line, 0, line, 1),
                    TOO_MANY_ENTRIES,
                    f"More than {MAX_ENTRIES:,} entries: derivls analyses the first {MAX_ENTRIES:,} and "
                    "refuses the rest of the file from this entry on (not checked).",
                )
                return text[: at + 1], [refusal]
        at = text.find("\n-", at + 2)
    return text, []


def bound_chunks(chunks: list[Chunk]) -> tuple[list[Chunk], list[Diagnostic]]:
    """The chunks of derivatives.yaml without those over MAX_ENTRY_CHARS, and an error for each of those
    (refused: not checked)."""
    if all(len(c.text) <= MAX_ENTRY_CHARS for c in chunks):
        return chunks, []
    kept: list[Chunk] = []
    refused: list[Diagnostic] = []
    for chunk in chunks:
        if len(chunk.text) <= MAX_ENTRY_CHARS:
            kept.append(chunk)
            continue
        refused.append(
            error(
                Span(chunk.start_line, 0, chunk.start_line, 1),
                ENTRY_TOO_LARGE,
                f"This entry is {len(chunk.text):,} characters long, over derivls's limit of "
                f"{MAX_ENTRY_CHARS:,}: it is refused (not checked).",
            )
        )
    return kept, refused


def bound_diagnostics(
    diagnostics: tuple[Diagnostic, ...], refused: list[Diagnostic], limit: int = MAX_DIAGNOSTICS
) -> tuple[Diagnostic, ...]:
    """The first `limit` of `diagnostics` (then one saying how many more), and every refusal, in file
    order: the same tuple when there is nothing to add or cut."""
    if not refused and len(diagnostics) <= limit:
        return diagnostics
    kept = list(diagnostics[:limit])
    if len(diagnostics) > limit:
        kept.append(
            warning(
                diagnostics[limit].span,
                DIAGNOSTICS_TRUNCATED,
                f"{len(diagnostics) - limit:,} more diagnostics from here on are not shown (derivls reports at "
                f"most {limit:,} per file).",
            )
        )
    return tuple(sorted((*kept, *refused), key=lambda d: (d.span.line, d.span.column)))
