"""No exception from a handler reaches the client: it is logged and the client gets an empty answer."""

from __future__ import annotations

import asyncio
import functools
import inspect
import logging
from collections.abc import Callable
from typing import Any, TypeVar

log = logging.getLogger("derivls.server")

F = TypeVar("F", bound=Callable[..., Any])


def guarded(default: Any = None) -> Callable[[F], F]:
    """Log what `fn` raises and answer `default` instead (cancellation passes through)."""

    def decorate(fn: F) -> F:
        if asyncio.iscoroutinefunction(fn):

            @functools.wraps(fn)
            async def run_async(*args: Any, **kwargs: Any) -> Any:
                try:
                    return await fn(*args, **kwargs)
                except asyncio.CancelledError:
                    raise
                except Exception:
                    log.exception("%s failed", fn.__name__)
                    return default

            return run_async  # type: ignore[return-value]

        if inspect.isgeneratorfunction(fn):  # pygls runs it at once; what it yields pygls runs, then resumes it

            @functools.wraps(fn)
            def run_generator(*args: Any, **kwargs: Any) -> Any:
                try:
                    return (yield from fn(*args, **kwargs))
                except Exception:
                    log.exception("%s failed", fn.__name__)
                    return default

            return run_generator  # type: ignore[return-value]

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default

        return run  # type: ignore[return-value]

    return decorate


__all__ = ["guarded"]
