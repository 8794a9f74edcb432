"""Bad framing and protocol misuse: logged, answered with an error where an id is known, and the
server reads on (resynchronises on the next valid header); every request gets an answer."""

from __future__ import annotations

import json
import time

import pytest

from tests.reliability.rawlsp import RawServer, frame

PARSE_ERROR, INVALID_REQUEST, INVALID_PARAMS = -32700, -32600, -32602


@pytest.fixture
def server():
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        yield s
        s.close()


def request_body(msg_id: int, method: str = "derivls/status", params: object = {}) -> bytes:  # noqa: B006
    message: dict[str, object] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
    if params is not None:
        message["params"] = params
    return json.dumps(message).encode()


def assert_still_serving(server: RawServer, timeout: float = 15.0) -> None:
    started = time.monotonic()
    answer = server.call("derivls/status", {}, timeout=timeout)
    assert "result" in answer, answer
    assert time.monotonic() - started < timeout


@pytest.mark.parametrize(
    "length",
    ["-5", "abc", "1e3", "0", "", "0x10", "+7"],
    ids=["negative", "non-numeric", "exponent", "zero", "empty", "hex", "plus-sign"],
)
def test_an_invalid_content_length_gets_a_parse_error_for_its_id_and_the_next_message_is_answered(server, length):
    server.send_raw(f"Content-Length: {length}\r\n\r\n".encode() + request_body(900))
    error = server.response(900, timeout=10)
    assert error is not None and error["error"]["code"] == PARSE_ERROR
    assert_still_serving(server)


def test_a_content_length_with_blanks_around_the_value_is_read():
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        body = request_body(901)
        s.send_raw(b"Content-Length:    %d   \r\n\r\n" % len(body) + body)
        assert "result" in (s.response(901, timeout=10) or {})
        s.close()


def test_lf_only_header_separators_are_read():
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        body = request_body(902)
        s.send_raw(b"Content-Length: %d\n\n" % len(body) + body)
        assert "result" in (s.response(902, timeout=10) or {})
        s.close()


def test_a_content_length_smaller_than_the_body_gets_an_error_and_the_reader_resynchronises(server):
    body = request_body(903)
    server.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) - 10) + body)
    error = server.response(903, timeout=10)
    assert error is not None and error["error"]["code"] == PARSE_ERROR
    assert_still_serving(server)


def test_a_content_length_larger_than_the_body_followed_by_a_message_answers_both(server):
    body = request_body(904)
    server.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 40) + body)
    server.send_raw(frame(request_body(905)))
    assert server.response(904, timeout=10)["error"]["code"] == INVALID_REQUEST
    assert "result" in server.response(905, timeout=10)
    assert_still_serving(server)


def test_a_content_length_larger_than_the_body_then_silence_is_answered_after_a_stall(server):
    body = request_body(906)
    server.send_raw(b"Content-Length: %d\r\n\r\n" % (len(body) + 1000) + body)
    error = server.response(906, timeout=10)
    assert error is not None and error["error"]["code"] == INVALID_REQUEST
    assert_still_serving(server)


def test_garbage_between_messages_is_skipped(server):
    server.send_raw(b"hello there\r\nthis is not a header\r\n\r\n{}")
    assert_still_serving(server)


def test_a_huge_request_is_refused_with_an_error_and_not_kept_in_memory(server):
    query = "x" * (20 * 1024 * 1024)
    server.send(json.loads(request_body(907, "workspace/symbol", {"query": query})))
    error = server.response(907, timeout=60)
    assert error is not None and error["error"]["code"] == INVALID_REQUEST
    assert_still_serving(server)
    assert server.peak_kb() < 300 * 1024


def test_a_body_that_is_not_json_is_logged_and_the_next_message_answered(server):
    server.send_raw(frame(b'{"jsonrpc": "2.0", "id": 908, "method": '))
    assert server.response(908, timeout=10)["error"]["code"] == PARSE_ERROR
    assert_still_serving(server)


@pytest.mark.parametrize(
    "params",
    [
        "just a string",
        {},
        {"textDocument": {"uri": "file:///x/derivatives.yaml"}, "position": {"line": -1, "character": 0}},
        {"textDocument": {"uri": "file:///x/derivatives.yaml"}, "position": {"line": 2**40, "character": 0}},
    ],
    ids=["string", "no-text-document", "line-minus-one", "line-2-to-the-40"],
)
def test_invalid_params_get_invalid_params(server, params):
    msg_id = server.request("textDocument/hover", params)
    answer = server.response(msg_id, timeout=10)
    assert answer is not None and answer["error"]["code"] == INVALID_PARAMS
    assert_still_serving(server)


def test_a_second_initialize_is_an_error(server):
    answer = server.call("initialize", {"processId": None, "rootUri": None, "capabilities": {}})
    assert answer["error"]["code"] == INVALID_REQUEST


def test_requests_after_shutdown_get_invalid_request_and_exit_then_returns_0():
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        assert "result" in s.call("shutdown")
        answer = s.call(
            "textDocument/hover", {"textDocument": {"uri": "file:///a"}, "position": {"line": 0, "character": 0}}
        )
        assert answer["error"]["code"] == INVALID_REQUEST
        s.notify("exit")
        assert s.proc.wait(timeout=10) == 0


def test_exit_without_shutdown_exits_1():
    with RawServer(cwd="/tmp") as s:
        s.initialize()
        s.notify("exit")
        assert s.proc.wait(timeout=10) == 1
        assert "Traceback" not in s.stderr_text()


def test_no_framing_case_leaves_a_traceback_in_the_log(server):
    server.send_raw(b"Content-Length: abc\r\n\r\n" + request_body(910))
    server.send_raw(b"Content-Length: 5\n\n" + request_body(911))
    server.send_raw(b"garbage\r\n\r\n")
    assert_still_serving(server)
    assert "Traceback" not in server.stderr_text()


def test_a_3_mb_workspace_symbol_query_is_answered_in_bounded_time(tmp_path) -> None:
    from tests.reliability.realfiles import REAL_DERIVATIVES, packaged_layout

    path = packaged_layout(tmp_path)
    with RawServer(cwd=tmp_path) as s:
        s.initialize(tmp_path)
        doc = s.open(path, REAL_DERIVATIVES.read_text(encoding="utf-8"))
        assert s.diagnostics(doc, timeout=60) is not None
        started = time.monotonic()
        answer = s.call("workspace/symbol", {"query": "a" * 3_000_000}, timeout=60)
        assert answer["result"] == []
        assert time.monotonic() - started < 3.0  # was 10 s: the query was lower-cased once per symbol
        assert len(s.call("workspace/symbol", {"query": "AddBackward"}, timeout=60)["result"]) > 0
        s.close()
