"""Issue 28, items 4-5: a message nested deeper than the interpreter's stack and a Content-Length over
the limit are refused with an answer, and the server keeps serving the requests after them."""

from __future__ import annotations

import json
import time

from derivls.server.runtime.framing import MAX_NOTIFICATION_BYTES, STALL_SECONDS
from tests.reliability.rawlsp import RawServer, frame

PARSE_ERROR, INVALID_REQUEST = -32700, -32600


def test_a_5000_deep_message_gets_a_parse_error_and_the_next_request_is_answered() -> None:
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        deep = (
            '{"jsonrpc": "2.0", "id": 950, "method": "derivls/status", "params": {"x": '
            + "[" * 5000
            + "]" * 5000
            + "}}"
        )
        s.send_raw(frame(deep))
        error = s.response(950, timeout=10)
        assert error is not None and error["error"]["code"] == PARSE_ERROR, error
        answer = s.call("derivls/status", {}, timeout=10)
        assert "result" in answer, answer
        assert s.proc.poll() is None
        assert "Traceback" not in s.stderr_text()
        s.close()


def test_a_content_length_over_the_limit_is_skipped_and_the_requests_after_it_are_answered() -> None:
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        declared = MAX_NOTIFICATION_BYTES + 40 * 1024 * 1024  # 200 MB announced, a few bytes sent
        body = json.dumps({"jsonrpc": "2.0", "id": 951, "method": "derivls/status", "params": {}}).encode()
        s.send_raw(b"Content-Length: %d\r\n\r\n" % declared + body)
        started = time.monotonic()
        s.send(
            {"jsonrpc": "2.0", "id": 952, "method": "derivls/status", "params": {}}
        )  # the next message, inside the declared length
        refused = s.response(951, timeout=10)
        assert refused is not None and refused["error"]["code"] == INVALID_REQUEST, refused
        answer = s.response(952, timeout=10)
        assert answer is not None and "result" in answer, answer
        assert time.monotonic() - started < 5
        s.close()


def test_a_content_length_over_the_limit_then_silence_costs_a_bounded_wait() -> None:
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        s.send_raw(b"Content-Length: %d\r\n\r\n" % (MAX_NOTIFICATION_BYTES * 2) + b'{"jsonrpc": "2.0", "id": 953, ')
        time.sleep(STALL_SECONDS * 2.5)  # the pipe stays open, nothing more of that body comes
        started = time.monotonic()
        answer = s.call("derivls/status", {}, timeout=10)
        assert "result" in answer, answer
        assert time.monotonic() - started < 5
        s.close()
