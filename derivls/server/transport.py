"""Serving one client: over stdio (an event-loop pipe reader) or TCP, and where logs go.

stdout carries JSON-RPC only; logs go to stderr or --log-file.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from pathlib import Path
from typing import Any

from pygls.lsp.server import LanguageServer

log = logging.getLogger("derivls.server")


def configure_logging(log_file: Path | None, level: str) -> None:
    handler: logging.Handler
    if log_file is not None:
        handler = logging.FileHandler(log_file, encoding="utf-8")
    else:
        handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(logging.Formatter("%(asctime)s %(levelname)s %(name)s: %(message)s"))
    root = logging.getLogger()
    root.handlers[:] = [handler]
    root.setLevel(getattr(logging, level.upper(), logging.WARNING))
    logging.getLogger("pygls").setLevel(max(logging.WARNING, root.level))


def serve_stdio(server: LanguageServer) -> None:
    stdout = sys.stdout.buffer
    # Nothing but JSON-RPC may reach stdout: stray prints go to stderr.
    sys.stdout = sys.stderr
    if not serve_pipes(server, sys.stdin.buffer, stdout):
        server.start_io(sys.stdin.buffer, stdout)


def serve_tcp(server: LanguageServer, host: str, port: int) -> None:
    log.info("serving LSP on %s:%s", host, port)
    server.start_tcp(host, port)


def serve_pipes(server: LanguageServer, stdin: Any, stdout: Any) -> bool:
    """Serve over stdio with an event-loop pipe reader. False if stdin is not a pipe (pygls's reader then)."""
    from pygls.io_ import StdoutWriter

    from derivls.server.framing import serve_messages

    async def run() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        started.set()
        # pygls's start_io makes its reader and stop event itself; there is no public way to give it
        # another reader, so this does what start_io does, with `_stop_event` set as start_io sets it
        # (server.shutdown() reads it).
        server._stop_event = threading.Event()
        server.protocol.set_writer(StdoutWriter(stdout))
        # framing.py: survives bad framing, answers every request, and reads messages already
        # buffered without yielding, so a burst of changes is applied before the analysis it scheduled
        exit_code[0] = await serve_messages(server._stop_event, reader, server.protocol, log)

    exit_code = [0]
    started = threading.Event()
    try:
        asyncio.run(run())
    except BrokenPipeError:  # before OSError, of which it is one
        log.error("the client is gone; stopping")
    except (ValueError, OSError):
        if started.is_set():
            raise
        return False  # not a pipe (a file, a terminal): let pygls read it
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        if started.is_set():
            server.shutdown()
    if exit_code[0]:
        raise SystemExit(exit_code[0])  # `exit` without `shutdown`: status 1, as LSP says
    return True


__all__ = ["configure_logging", "serve_pipes", "serve_stdio", "serve_tcp"]
