"""Every command's exit status and the one-line usage error (light: the CLI's fast path imports it)."""

from __future__ import annotations

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2  # every command's exit status


class UsageError(Exception):
    """A problem with what the user asked for (a missing file, …): one line, exit status 2."""


__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_USAGE", "UsageError"]
