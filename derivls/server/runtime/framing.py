"""The JSON-RPC reader loop: LSP base-protocol framing that survives a buggy or hostile client.

Replaces pygls's ``run_async`` loop (which silently stops answering after one bad header) for
the stdio transport. Every problem is logged; a message whose id can be found gets a JSON-RPC
error; the reader then resynchronises on the next ``Content-Length`` header:

- header lines may end in LF alone and have blanks around the value; a Content-Length that is
  not a positive decimal number (``-1``, ``abc``, ``1e3``, ``0``) is refused, and what follows
  it up to the next header is read as the refused message (for its id);
- a Content-Length smaller than the body: the body does not parse (error, with the id if it
  shows), and the rest is skipped up to the next header;
- a Content-Length larger than the body: a body holding one whole JSON value and then more
  (the next message), or one that stalls after a whole value, is cut after that value (error
  with its id), and reading goes on after it;
- a body over ``MAX_REQUEST_BYTES`` (a request) or ``MAX_NOTIFICATION_BYTES`` (a notification,
  which may carry a whole document) is skipped without being kept in memory; its id (read
  from the first bytes) gets an error.

And the protocol rules pygls leaves out: a request after ``shutdown`` gets InvalidRequest, a
second ``initialize`` gets InvalidRequest, params that do not fit the method get InvalidParams,
and ``exit`` ends the loop with 0 after ``shutdown``, 1 without (``serve_messages`` returns it).
"""

from __future__ import annotations

import asyncio
import json
import logging
import re
from typing import Any

__all__ = [
    "Loop",
    "MAX_NOTIFICATION_BYTES",
    "MAX_REQUEST_BYTES",
    "STALL_SECONDS",
    "serve_messages",
]

MAX_REQUEST_BYTES = 4 * 1024 * 1024  # a request carries positions and names, not documents
MAX_NOTIFICATION_BYTES = 160 * 1024 * 1024  # didOpen/didChange of a file up to limits.MAX_FILE_BYTES, JSON-escaped
MAX_HEADER_LINE = 8192
STALL_SECONDS = 1.0  # no byte for this long in the middle of a body: look at what came

PARSE_ERROR = -32700
INVALID_REQUEST = -32600
INVALID_PARAMS = -32602
INTERNAL_ERROR = -32603

_CONTENT_LENGTH = re.compile(rb"content-length[ \t]*:", re.IGNORECASE)
_NEXT_HEADER = re.compile(rb"content-length[ \t]*:[ \t]*\d+[ \t]*\r?\n", re.IGNORECASE)
_ID = re.compile(rb'"id"\s*:\s*(-?\d{1,15}|"(?:[^"\\]|\\.){0,200}")')

log = logging.getLogger("derivls.server.framing")


def _find_id(data: bytes) -> Any:
    """The id of a (broken) JSON-RPC message, from its text; None if it shows none."""
    match = _ID.search(data[:65536])
    if match is None:
        return None
    try:
        return json.loads(match.group(1))
    except ValueError:
        return None


class _Input:
    """A byte buffer over an asyncio stream, with look-ahead and push-back."""

    def __init__(self, reader: Any) -> None:
        self.reader = reader
        self.buffer = bytearray()
        self.eof = False

    async def fill(self, timeout: float | None = None) -> bool:
        """Read more bytes; False at the end of input or after `timeout` seconds without any."""
        if self.eof:
            return False
        try:
            if timeout is None:
                chunk = await self.reader.read(1 << 20)
            else:
                chunk = await asyncio.wait_for(self.reader.read(1 << 20), timeout)
        except asyncio.TimeoutError:
            return False
        if not chunk:
            self.eof = True
            return False
        self.buffer += chunk
        return True


class _Loop:
    """The reader loop. `protocol` may be swapped while it is not running (boot.py starts it with a
    light protocol and hands it, with what it has buffered, to pygls's); `observe`, when set, sees
    every well-formed message before the protocol does."""

    def __init__(self, reader: Any, protocol: Any, logger: logging.Logger) -> None:
        self.input = _Input(reader)
        self.protocol = protocol
        self.log = logger
        self.initialized = False
        self.observe: Any = None

    # -- answers -------------------------------------------------------------------------------
    def error(self, msg_id: Any, code: int, message: str) -> None:
        if msg_id is None:
            return  # nothing to answer to (JSON-RPC would send id null; LSP clients drop it)
        send_error = getattr(self.protocol, "send_error", None)
        if send_error is not None:  # the boot phase's protocol (boot.py): no lsprotocol yet
            send_error(msg_id, code, message)
            return
        from lsprotocol.types import ResponseError

        self.protocol._send_response(msg_id, error=ResponseError(code=code, message=message))

    # -- framing -------------------------------------------------------------------------------
    async def read_headers(self) -> int | None:
        """The Content-Length of the next well-framed message; None at the end of input."""
        buf = self.input.buffer
        length: int | None = None
        bad: str | None = None
        seen_header = False
        while True:
            newline = buf.find(b"\n")
            if newline < 0:
                if len(buf) > MAX_HEADER_LINE:
                    self.skip_garbage(len(buf) - 32)  # keep a tail: a header may start in it
                    continue
                if not await self.input.fill():
                    if buf.strip():
                        self.log.error("input ended inside a message header: %r", bytes(buf[:80]))
                    return None
                continue
            line = bytes(buf[:newline]).rstrip(b"\r")
            if not line.strip():
                del buf[: newline + 1]
                if not seen_header:
                    continue  # blank lines between messages
                if bad is not None or length is None:
                    await self.refuse_body(bad or "no Content-Length header")
                    length, bad, seen_header = None, None, False
                    continue
                return length
            header = _CONTENT_LENGTH.search(line)
            if header is not None and header.start() > 0:
                # the rest of a message (or junk) runs into a header: drop what comes before it
                self.skip_garbage(header.start())
                continue
            name, colon, value = line.partition(b":")
            if not colon or not name.strip() or b"{" in name:
                self.skip_garbage(newline + 1, line)
                continue
            del buf[: newline + 1]
            seen_header = True
            if header is None:
                continue  # Content-Type and any other header: ignored
            text = value.strip(b" \t")
            if not text.isdigit() or int(text) <= 0:
                bad = (
                    f"invalid Content-Length {value.decode('latin-1').strip()!r} (a positive decimal number is needed)"
                )
                length = None
            else:
                length = int(text)

    def skip_garbage(self, count: int, line: bytes | None = None) -> None:
        buf = self.input.buffer
        junk = bytes(buf[:count])
        del buf[:count]
        if not junk.strip():
            return
        self.log.error("skipped %d bytes that are not a message header: %r", len(junk), junk[:80])
        msg_id = _find_id(junk)
        if msg_id is not None:
            self.error(msg_id, PARSE_ERROR, "Malformed message (bad framing); skipped")

    async def refuse_body(self, why: str) -> None:
        """After a header block without a usable Content-Length: the body runs to the next header."""
        buf = self.input.buffer
        while True:
            header = _CONTENT_LENGTH.search(buf)
            if header is not None:
                body = bytes(buf[: header.start()])
                del buf[: header.start()]
                break
            if len(buf) > MAX_REQUEST_BYTES:
                body = bytes(buf[: len(buf) - 32])
                del buf[: len(buf) - 32]
                break
            if not await self.input.fill(STALL_SECONDS):
                body = bytes(buf)
                buf.clear()
                break
        self.log.error("message refused: %s; %d bytes skipped up to the next header", why, len(body))
        self.error(_find_id(bytes(body)), PARSE_ERROR, f"Malformed message header: {why}")

    async def read_body(self, length: int) -> bytes | bytearray | None:
        """`length` bytes, or fewer when the stream stalls or ends after a whole JSON value."""
        buf = self.input.buffer
        while len(buf) < length:
            if await self.input.fill(STALL_SECONDS):
                continue
            if self.input.eof and not buf:
                return None
            cut = _whole_value(buf)
            if cut is not None:
                self.log.error(
                    "Content-Length %d is larger than the message (%d bytes); reading on after it", length, cut
                )
                body = bytes(buf[:cut])
                del buf[:cut]
                self.error(_find_id(body), INVALID_REQUEST, "Content-Length larger than the message body")
                return b""
            if self.input.eof:
                self.log.error("input ended inside a message body (%d of %d bytes)", len(buf), length)
                buf.clear()
                return None
        if len(buf) == length:  # the usual case: hand the buffer over, no copy of a big body
            self.input.buffer = bytearray()
            return buf
        body = bytes(memoryview(buf)[:length])
        del buf[:length]
        return body

    async def skip_body(self, length: int, why: str) -> None:
        """Drop `length` bytes as they come (never all in memory); answer the id its start shows.

        The wait is bounded: a body that stalls for STALL_SECONDS ends there, and a header line of the
        next message inside the declared length (a raw `Content-Length: N` line, which no JSON text
        holds: its strings escape line breaks) ends it too; reading goes on from that header."""
        buf = self.input.buffer
        while len(buf) < min(length, 65536) and await self.input.fill(STALL_SECONDS):
            pass
        msg_id = _find_id(bytes(buf[:65536]))
        left = length
        carried = 0  # the last bytes looked at, kept: a header may straddle two reads
        while left > 0:
            if len(buf) <= carried and not await self.input.fill(STALL_SECONDS):
                self.log.error("the refused body stalled after %d of %d bytes; reading on", length - left, length)
                buf.clear()
                break
            header = _NEXT_HEADER.search(buf)
            if header is not None and header.start() < left:
                del buf[: header.start()]
                self.log.error("a message header %d bytes into the refused body; reading on from it", length - left)
                break
            if len(buf) >= left:
                del buf[:left]
                break
            drop = max(0, len(buf) - 64)
            del buf[:drop]
            left -= drop
            carried = len(buf)
        self.log.error("message refused: %s", why)
        self.error(msg_id, INVALID_REQUEST, f"Message refused: {why}")

    # -- messages ------------------------------------------------------------------------------
    def dispatch(self, body: bytes | bytearray) -> int | None:
        """Handle one body; the exit code when it was `exit`."""
        try:
            data = json.loads(body)
        except RecursionError:  # nested deeper than the interpreter's stack: refused, the loop goes on
            self.log.error("message body nested too deeply: %r", bytes(body[:80]))
            self.error(_find_id(bytes(body)), PARSE_ERROR, "Parse error: the message is nested too deeply")
            return None
        except ValueError as e:
            cut = _whole_value(body)
            if cut is not None and body[cut:].strip():
                # Content-Length larger than the message: the next message is inside the body
                self.log.error("Content-Length %d is larger than the message (%d bytes)", len(body), cut)
                self.error(_find_id(bytes(body[:cut])), INVALID_REQUEST, "Content-Length larger than the message body")
                self.input.buffer[:0] = body[cut:]
                return None
            self.log.error("message body is not JSON (%s): %r", e, body[:80])
            self.error(_find_id(bytes(body)), PARSE_ERROR, f"Parse error: {e}")
            return None
        if not isinstance(data, dict):
            self.log.error("message is not a JSON object: %r", body[:80])
            return None
        msg_id = data.get("id")
        method = data.get("method")
        is_request = "id" in data and method is not None
        if method is not None and not isinstance(method, str):
            self.error(msg_id, INVALID_REQUEST, "'method' must be a string")
            return None
        if is_request and len(body) > MAX_REQUEST_BYTES:
            self.error(msg_id, INVALID_REQUEST, f"Request too large ({len(body)} bytes)")
            return None
        protocol = self.protocol
        if method == "exit":
            code = 0 if protocol._shutdown else 1
            self.log.info("exit %s shutdown: exit status %d", "after" if code == 0 else "without", code)
            return code
        if protocol._shutdown:
            if is_request:
                self.error(msg_id, INVALID_REQUEST, "The server is shutting down: only 'exit' is accepted")
            return None
        if method == "initialize" and is_request:
            if self.initialized:
                self.error(msg_id, INVALID_REQUEST, "The server is already initialized")
                return None
            self.initialized = True
        self.deliver(data)
        return None

    def deliver(self, data: dict[str, Any]) -> None:
        """Hand one well-formed message to the protocol (also what boot.py replays at the handover)."""
        protocol = self.protocol
        msg_id = data.get("id")
        method = data.get("method")
        is_request = "id" in data and method is not None
        observe = self.observe
        if observe is not None:
            observe(data)
        try:
            message = protocol.structure_message(data)
        except Exception as e:
            self.log.error("cannot read the %s message: %s", method or "response", e)
            if is_request:
                self.error(msg_id, INVALID_PARAMS, f"Invalid params for {method}")
            return None
        if message is data and "jsonrpc" not in data:
            self.error(msg_id, INVALID_REQUEST, "Not a JSON-RPC 2.0 message ('jsonrpc' is missing)")
            return
        try:
            protocol.handle_message(message)
        except Exception:
            self.log.exception("cannot handle %s", method or "a response")
            if is_request:
                self.error(msg_id, INTERNAL_ERROR, f"Internal error while handling {method}")

    async def run(self, stop_event: Any) -> int:
        while not stop_event.is_set():
            length = await self.read_headers()
            if length is None:
                self.log.info("input closed")
                return 0
            if length > MAX_NOTIFICATION_BYTES:
                await self.skip_body(length, f"Content-Length {length} is over the limit of {MAX_NOTIFICATION_BYTES}")
                continue
            body = await self.read_body(length)
            if body is None:
                return 0
            if not body:
                continue
            code = self.dispatch(body)
            del body
            if code is not None:
                return code
        return 0


def _whole_value(data: bytes | bytearray) -> int | None:
    """The end of the whole JSON value `data` starts with (after blanks); None if there is none."""
    text = bytes(data).decode("utf-8", "replace")
    stripped = text.lstrip()
    if not stripped.startswith(("{", "[")):
        return None
    try:
        _, end = json.JSONDecoder().raw_decode(stripped)
    except (ValueError, RecursionError):
        return None
    consumed = len(text) - len(stripped) + end
    return len(text[:consumed].encode("utf-8", "replace"))


async def serve_messages(stop_event: Any, reader: Any, protocol: Any, logger: logging.Logger | None = None) -> int:
    """Read and handle messages from `reader` (an asyncio.StreamReader) until `exit` or the end of
    input; the exit status: 0 after shutdown+exit or at the end of input, 1 for exit without shutdown."""
    return await _Loop(reader, protocol, logger or log).run(stop_event)


Loop = _Loop  # for transport.py and boot.py: one loop runs through the boot phase and the handover
