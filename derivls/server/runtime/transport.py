"""Serving one client: over stdio (an event-loop pipe reader) or TCP (the same reader), and where logs go.

stdout carries JSON-RPC only; logs go to stderr or --log-file. Over a stdio pipe the server starts
with its boot phase (boot.py): pygls and lsprotocol are imported only at the handover, once the
boot has answered what it can from the cache.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import threading
from collections.abc import Callable
from pathlib import Path
from typing import Any

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

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


def serve_stdio(make_server: Callable[[], DerivlsServer]) -> None:
    stdout = sys.stdout.buffer
    # Nothing but JSON-RPC may reach stdout: stray prints go to stderr.
    sys.stdout = sys.stderr
    if not serve_pipes(make_server, sys.stdin.buffer, stdout) and not _at_end(sys.stdin.buffer):
        make_server().start_io(sys.stdin.buffer, stdout)


class Gate:
    """The full server's protocol after a boot that published diagnostics: the client takes the server
    for ready, so what it sends next is handled once the opened documents are analysed, in order, as
    after a cold start's first diagnostics. Responses pass at once (the server may be waiting for one,
    e.g. workspace/configuration), and so do the messages the boot read (replayed before `hold()`)."""

    def __init__(self, protocol: Any) -> None:
        self.protocol = protocol
        self.held: list[Any] | None = None  # None: passing; a list: holding
        self.opened = False
        self.response = False

    def __getattr__(self, name: str) -> Any:  # _shutdown, _send_response, …
        return getattr(self.protocol, name)

    def hold(self) -> None:
        if not self.opened:
            self.held = []

    def structure_message(self, data: dict[str, Any]) -> Any:
        self.response = "method" not in data
        return self.protocol.structure_message(data)

    def handle_message(self, message: Any) -> None:
        if self.held is None or self.response:
            self.protocol.handle_message(message)
        else:
            self.held.append(message)

    async def open_when(self, ready: Any) -> None:
        try:
            await ready
        finally:
            self.opened = True
            held, self.held = self.held or [], None
            for message in held:
                try:
                    self.protocol.handle_message(message)
                except Exception:
                    log.exception("cannot handle a message held during the start")


async def analysed(server: DerivlsServer, uris: list[str], timeout: float = 20.0) -> None:
    """Until the documents `uris` have been opened (pygls may hand the notification on later) and every
    open document has an analysis and none is scheduled (or `timeout` seconds: a stuck analysis must
    not hold the client's requests for ever)."""
    loop = asyncio.get_running_loop()
    deadline = loop.time() + timeout
    seen: set[str] = set()
    while loop.time() < deadline:
        docs = getattr(server, "docs", {})
        seen.update(uri for uri in uris if uri in docs)  # a document closed meanwhile counts as done
        if (
            len(seen) == len(set(uris))
            and not getattr(server, "pending", ())
            and all(doc.analysis is not None for doc in docs.values())
        ):
            return
        await asyncio.sleep(0.002)
    log.warning("the opened documents were not analysed within %.0f s; handling what the client sent", timeout)


def serve_tcp(make_server: Callable[[], DerivlsServer], host: str, port: int) -> None:
    """Serve the first client that connects to host:port, its messages read by framing.py's reader as
    over stdio (it resynchronises after bad framing and answers every request), then stop."""
    from derivls.server.runtime.framing import serve_messages

    server = make_server()
    server._stop_event = threading.Event()  # as pygls's start_tcp sets it (server.shutdown() reads it)
    exit_code = [0]

    async def run() -> None:
        served = asyncio.Event()

        async def connection(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
            if served.is_set():  # one client per server, as over stdio
                writer.close()
                return
            served.set()
            server.protocol.set_writer(writer)  # type: ignore[arg-type]  # (StreamWriter.write takes bytes)
            try:
                exit_code[0] = await serve_messages(server._stop_event, reader, server.protocol, log)
            finally:
                writer.close()
                done.set()

        done = asyncio.Event()
        listening = await asyncio.start_server(connection, host, port, limit=1 << 26)
        log.info("serving LSP on %s:%s", host, port)
        async with listening:
            await done.wait()

    try:
        asyncio.run(run())
    except (KeyboardInterrupt, SystemExit):
        pass
    finally:
        server.shutdown()
    if exit_code[0]:
        raise SystemExit(exit_code[0])  # `exit` without `shutdown`: status 1, as LSP says


def serve_pipes(make_server: Callable[[], DerivlsServer], stdin: Any, stdout: Any) -> bool:
    """Serve over stdio with an event-loop pipe reader: the boot phase (boot.py), then the server
    `make_server()` builds. False if stdin is not a pipe (pygls's reader then)."""
    if not _watchable(stdin):
        return False
    from derivls.base.diskcache import DiskCache
    from derivls.server.runtime.boot import Boot, Recorder
    from derivls.server.runtime.framing import Loop

    servers: list[DerivlsServer] = []

    def write(data: bytes) -> None:
        stdout.write(data)
        stdout.flush()

    async def run() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        started.set()
        cache = DiskCache()
        boot = Boot(write, cache)
        # framing.py: survives bad framing, answers every request, and reads messages already
        # buffered without yielding, so a burst of changes is applied before the analysis it scheduled
        messages = Loop(reader, boot, log)
        code = await messages.run(boot)
        if not boot.handover:  # `exit`, or the end of input, during the boot
            exit_code[0] = code
            return
        server = make_server()  # pygls and lsprotocol are imported here
        servers.append(server)
        # pygls's start_io makes its reader and stop event itself; there is no public way to give it
        # another reader, so this does what start_io does, with `_stop_event` set as start_io sets it
        # (server.shutdown() reads it).
        server._stop_event = threading.Event()
        from pygls.io_ import StdoutWriter

        recorder = Recorder(StdoutWriter(stdout), boot, server, cache)
        server.protocol.set_writer(recorder)
        messages.observe = recorder.observe
        gate = Gate(server.protocol) if boot.published else None
        messages.protocol = gate or server.protocol
        for data in boot.received:  # every message the boot read, in order
            messages.deliver(data)
            if server._stop_event.is_set():
                break
        boot.received.clear()  # a didOpen holds a whole document
        if gate is not None:
            gate.hold()
            asyncio.ensure_future(gate.open_when(analysed(server, boot.published)))
        exit_code[0] = await messages.run(server._stop_event)

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
        for server in servers:
            server.shutdown()
    if exit_code[0]:
        raise SystemExit(exit_code[0])  # `exit` without `shutdown`: status 1, as LSP says
    return True


def _watchable(stdin: Any) -> bool:
    """A pipe, a socket or a terminal: what the event loop can watch. A file or /dev/null is not (epoll
    refuses it, and the loop would wait for ever): pygls's reader reads it to its end, then stops."""
    import os
    import stat

    try:
        mode = os.fstat(stdin.fileno()).st_mode
        return stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode) or os.isatty(stdin.fileno())
    except (OSError, ValueError, AttributeError):
        return False


def _at_end(stdin: Any) -> bool:
    """A file (or /dev/null) with nothing left to read: there is no client, so no server is built."""
    try:
        return stdin.peek(1) == b""
    except (OSError, ValueError, AttributeError):
        return False


__all__ = ["Gate", "analysed", "configure_logging", "serve_pipes", "serve_stdio", "serve_tcp"]
