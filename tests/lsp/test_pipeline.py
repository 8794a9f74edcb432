"""The document pipeline over a raw pipe: changes already received are analysed once, together."""

from __future__ import annotations

import asyncio
import json
from typing import Any

from tests.lsp.conftest import CHECKOUT, CHECKOUT_DERIVATIVES, SERVER, position_of, uri

TEXT = CHECKOUT_DERIVATIVES.read_text(encoding="utf-8")
DOC = uri(CHECKOUT_DERIVATIVES)


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


class RawClient:
    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.messages: list[dict[str, Any]] = []
        self.reader = asyncio.ensure_future(self._read())

    async def _read(self) -> None:
        assert self.proc.stdout is not None
        while True:
            header = await self.proc.stdout.readuntil(b"\r\n\r\n")
            length = int(header.split(b"Content-Length: ")[1].split(b"\r\n")[0])
            self.messages.append(json.loads(await self.proc.stdout.readexactly(length)))

    def send(self, *messages: dict[str, Any]) -> None:
        """All of `messages` in one write: the server receives them together."""
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"".join(frame(m) for m in messages))

    async def wait_for(self, predicate, timeout: float = 60) -> dict[str, Any]:
        deadline = asyncio.get_running_loop().time() + timeout
        while True:
            for message in self.messages:
                if predicate(message):
                    return message
            assert asyncio.get_running_loop().time() < deadline, "timed out"
            await asyncio.sleep(0.005)


def diagnostics_of(version: int):
    def match(message: dict[str, Any]) -> bool:
        return (
            message.get("method") == "textDocument/publishDiagnostics"
            and message["params"]["uri"] == DOC
            and message["params"].get("version") == version
        )

    return match


def answer_to(msg_id: int):
    return lambda message: message.get("id") == msg_id and "method" not in message


def change(version: int, line: int, column: int, text: str) -> dict[str, Any]:
    return {
        "jsonrpc": "2.0",
        "method": "textDocument/didChange",
        "params": {
            "textDocument": {"uri": DOC, "version": version},
            "contentChanges": [
                {
                    "range": {
                        "start": {"line": line, "character": column},
                        "end": {"line": line, "character": column},
                    },
                    "text": text,
                }
            ],
        },
    }


async def started() -> tuple[asyncio.subprocess.Process, RawClient]:
    proc = await asyncio.create_subprocess_exec(
        *SERVER, stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
    )
    return proc, RawClient(proc)


async def open_checkout(client: RawClient) -> None:
    """initialize on the checkout fixture, open its derivatives.yaml, wait for its first diagnostics."""
    client.send(
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"capabilities": {}, "processId": None, "rootUri": uri(CHECKOUT)},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": DOC, "languageId": "yaml", "version": 1, "text": TEXT}},
        },
    )
    await client.wait_for(diagnostics_of(1))


async def test_changes_received_together_are_analysed_once_and_the_newest_is_published():
    proc, client = await started()
    try:
        await open_checkout(client)
        client.send({"jsonrpc": "2.0", "id": 2, "method": "derivls/status", "params": {}})
        before = (await client.wait_for(answer_to(2)))["result"]["analyses"]
        position = position_of(TEXT, "- name: sin")
        typed = "_xyz_"
        burst = [change(2 + i, position.line, position.character + 11 + i, ch) for i, ch in enumerate(typed)]
        assert sum(len(frame(m)) for m in burst) < 4096  # one atomic pipe write
        client.send(*burst, {"jsonrpc": "2.0", "id": 3, "method": "derivls/status", "params": {}})
        await client.wait_for(diagnostics_of(1 + len(typed)))
        client.send({"jsonrpc": "2.0", "id": 4, "method": "derivls/status", "params": {}})
        after = (await client.wait_for(answer_to(4)))["result"]
        assert after["analyses"] - before == 1
        assert after["documents"][0]["version"] == 1 + len(typed)
        published = [m for m in client.messages if m.get("method") == "textDocument/publishDiagnostics"]
        assert [m["params"]["version"] for m in published] == [1, 1 + len(typed)]
    finally:
        client.reader.cancel()
        proc.kill()
        await proc.wait()


async def test_a_document_s_first_analysis_is_frozen_out_of_the_gc_even_when_it_is_fast():
    """A document whose entries come from the cache (or are few) is analysed in milliseconds, yet its
    objects are as long-lived as a slow analysis's: the GC must not scan them between keystrokes."""
    proc, client = await started()
    second = uri(CHECKOUT / "tools" / "autograd" / "second" / "derivatives.yaml")
    try:
        await open_checkout(client)
        client.send({"jsonrpc": "2.0", "id": 2, "method": "derivls/status", "params": {}})
        before = (await client.wait_for(answer_to(2)))["result"]["frozen_objects"]
        client.send(
            {
                "jsonrpc": "2.0",
                "method": "textDocument/didOpen",
                "params": {"textDocument": {"uri": second, "languageId": "yaml", "version": 1, "text": TEXT}},
            }
        )  # the same index: no index is built, only this document is analysed (fast)
        await client.wait_for(
            lambda m: m.get("method") == "textDocument/publishDiagnostics" and m["params"]["uri"] == second
        )
        client.send({"jsonrpc": "2.0", "id": 3, "method": "derivls/status", "params": {}})
        after = (await client.wait_for(answer_to(3)))["result"]["frozen_objects"]
        assert after > before
    finally:
        client.reader.cancel()
        proc.kill()
        await proc.wait()
