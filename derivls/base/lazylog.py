"""Logging on the CLI's path: `logging` is imported only when something is logged (importing it costs
`derivls check` ~5 ms of its start-up, and the cache and its writers log only on a failure)."""

from __future__ import annotations

__all__ = ["info"]


def info(logger: str, message: str, *args: object) -> None:
    """logging.getLogger(logger).info(message, *args)."""
    import logging

    logging.getLogger(logger).info(message, *args)
