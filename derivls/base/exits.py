"""Every command's exit status and its error line (light: the CLI's fast path imports it).

Every command says what it cannot do in one form, `derivls CMD: error: MESSAGE.` (error_line), on
stderr, with exit status 2; a MESSAGE is one or more sentences, the last one ended."""

from __future__ import annotations

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2  # every command's exit status


class UsageError(Exception):
    """A problem with what the user asked for (a missing file, …): one line, exit status 2."""


def ended(message: str) -> str:
    """`message` as a sentence that ends (a full stop added when it has no end mark)."""
    message = message.rstrip()
    return message if not message or message[-1] in ".?!" else message + "."


def error_line(command: str | None, message: str) -> str:
    """`derivls CMD: error: MESSAGE.`: how every command says what it cannot do (no newline)."""
    return f"derivls {command}: error: {ended(message)}" if command else f"derivls: error: {ended(message)}"


__all__ = ["EXIT_ERRORS", "EXIT_OK", "EXIT_USAGE", "UsageError", "ended", "error_line"]
