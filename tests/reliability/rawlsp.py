"""A bare JSON-RPC client over a real `python -m derivls` process: it can send any bytes (broken
framing included), sees every message the server writes, and reads the server's RSS."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path
from typing import Any

from pygls.uris import from_fs_path

SERVER = [sys.executable, "-m", "derivls"]


def uri(path: Path | str) -> str:
    return from_fs_path(str(path)) or f"file://{path}"


def frame(message: dict[str, Any] | str | bytes) -> bytes:
    if isinstance(message, dict):
        message = json.dumps(message)
    body = message.encode("utf-8") if isinstance(message, str) else message
    return b"Content-Length: %d\r\n\r\n" % len(body) + body


class RawServer:
    def __init__(
        self, cwd: Path | None = None, args: tuple[str, ...] = (), command: tuple[str, ...] | None = None
    ) -> None:
        # an unnamed file: nothing is left in TMPDIR, whichever way the test ends
        self._stderr = tempfile.TemporaryFile()  # noqa: SIM115 - closed in close()
        self.proc = subprocess.Popen(
            [*(command or SERVER), *args],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=self._stderr,
            cwd=cwd,
        )
        self.messages: list[dict[str, Any]] = []
        self.cond = threading.Condition()
        self.next_id = 1
        self.peak_rss_kb = 0
        self.closed_stdout = False
        self._reader = threading.Thread(target=self._read, daemon=True)
        self._reader.start()

    # -- wire --------------------------------------------------------------------------------
    def _read(self) -> None:
        out = self.proc.stdout
        assert out is not None
        try:
            while True:
                length = None
                while True:
                    line = out.readline()
                    if not line:
                        return
                    if line in (b"\r\n", b"\n"):
                        break
                    name, _, value = line.decode("ascii", "replace").partition(":")
                    if name.strip().lower() == "content-length":
                        length = int(value.strip())
                if length is None:
                    continue
                body = out.read(length)
                message = json.loads(body)
                if "method" in message and "id" in message:
                    self._answer_server_request(message)
                with self.cond:
                    self.messages.append(message)
                    self.cond.notify_all()
        finally:
            with self.cond:
                self.closed_stdout = True
                self.cond.notify_all()

    def _answer_server_request(self, message: dict[str, Any]) -> None:
        result: Any = None
        if message["method"] == "workspace/configuration":
            result = [None for _ in message.get("params", {}).get("items", [])]
        self.send({"jsonrpc": "2.0", "id": message["id"], "result": result})

    def send_raw(self, data: bytes) -> None:
        assert self.proc.stdin is not None
        self.proc.stdin.write(data)
        self.proc.stdin.flush()

    def send(self, message: dict[str, Any]) -> None:
        self.send_raw(frame(message))

    def request(self, method: str, params: Any = None, msg_id: Any = None) -> Any:
        if msg_id is None:
            msg_id = self.next_id
            self.next_id += 1
        message: dict[str, Any] = {"jsonrpc": "2.0", "id": msg_id, "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)
        return msg_id

    def notify(self, method: str, params: Any = None) -> None:
        message: dict[str, Any] = {"jsonrpc": "2.0", "method": method}
        if params is not None:
            message["params"] = params
        self.send(message)

    def wait_for(self, predicate: Any, timeout: float) -> dict[str, Any] | None:
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for message in self.messages:
                    if predicate(message):
                        return message
                left = deadline - time.monotonic()
                if left <= 0 or self.closed_stdout:
                    return None
                self.cond.wait(min(left, 0.5))
                self.sample_rss()

    def response(self, msg_id: Any, timeout: float = 30.0) -> dict[str, Any] | None:
        return self.wait_for(lambda m: m.get("id") == msg_id and "method" not in m, timeout)

    def call(self, method: str, params: Any = None, timeout: float = 30.0) -> dict[str, Any]:
        msg_id = self.request(method, params)
        answer = self.response(msg_id, timeout)
        assert answer is not None, f"no answer to {method} within {timeout} s"
        return answer

    def diagnostics(self, doc_uri: str, timeout: float = 60.0, after: int = 0) -> dict[str, Any] | None:
        """The first publishDiagnostics for doc_uri among messages[after:]."""
        deadline = time.monotonic() + timeout
        with self.cond:
            while True:
                for message in self.messages[after:]:
                    if (
                        message.get("method") == "textDocument/publishDiagnostics"
                        and message["params"]["uri"] == doc_uri
                    ):
                        return message["params"]
                left = deadline - time.monotonic()
                if left <= 0 or self.closed_stdout:
                    return None
                self.cond.wait(min(left, 0.5))
                self.sample_rss()

    def mark(self) -> int:
        with self.cond:
            return len(self.messages)

    # -- session -----------------------------------------------------------------------------
    def initialize(self, root: Path | None = None, options: Any = None) -> dict[str, Any]:
        params: dict[str, Any] = {
            "processId": os.getpid(),
            "rootUri": uri(root) if root else None,
            "capabilities": {"textDocument": {"publishDiagnostics": {}}},
        }
        if options is not None:
            params["initializationOptions"] = options
        answer = self.call("initialize", params)
        self.notify("initialized", {})
        return answer

    def open(self, path: Path, text: str | None = None, language: str = "yaml") -> str:
        doc_uri = uri(path)
        if text is None:
            text = path.read_text(encoding="utf-8")
        self.notify(
            "textDocument/didOpen",
            {"textDocument": {"uri": doc_uri, "languageId": language, "version": 1, "text": text}},
        )
        return doc_uri

    # -- process -----------------------------------------------------------------------------
    def rss_kb(self) -> int:
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmRSS:"):
                        return int(line.split()[1])
        except OSError:
            pass
        return 0

    def sample_rss(self) -> int:
        rss = self.rss_kb()
        self.peak_rss_kb = max(self.peak_rss_kb, rss)
        return rss

    def peak_kb(self) -> int:
        """VmHWM: the most RSS the process ever had."""
        try:
            with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
                for line in f:
                    if line.startswith("VmHWM:"):
                        return max(self.peak_rss_kb, int(line.split()[1]))
        except OSError:
            pass
        return self.peak_rss_kb

    def stderr_text(self) -> str:
        fd = self._stderr.fileno()  # (read without moving the offset the server's writes share)
        return os.pread(fd, os.fstat(fd).st_size, 0).decode("utf-8", errors="replace")

    def close(self, timeout: float = 10.0) -> int | None:
        if self.proc.poll() is None:
            try:
                msg_id = self.request("shutdown")
                self.response(msg_id, timeout=timeout)
                self.notify("exit")
            except (BrokenPipeError, OSError):
                pass
        try:
            code = self.proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            code = self.proc.wait()
        self._stderr.close()
        return code

    def __enter__(self) -> RawServer:
        return self

    def __exit__(self, *exc: object) -> None:
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        if not self._stderr.closed:
            self._stderr.close()
