"""The server's boot phase (derivls/server/runtime/boot.py): with a warm cache a server answers `initialize`
and publishes a derivatives.yaml's diagnostics before importing pygls, exactly as the full server
does, then hands every message over to the full server."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import sys
from pathlib import Path
from typing import Any

import pytest
from lsprotocol import types

from derivls.server.runtime import boot
from tests.lsp.conftest import (
    FIXTURES,
    SERVER,
    Documents,
    diagnostics,
    hover_text,
    initialize,
    make_client,
    position_of,
    uri,
)

MISTAKES = (
    "- name: abs(Tensor selff) -> Tensor\n  self: grad * self.sgn()\n"
    "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * other.sizs()\n  othr: grad\n"
)
SPECS = ["visual-studio-code", "neovim"]


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    root = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "checkout", root)
    derivatives = root / "tools/autograd/derivatives.yaml"
    derivatives.write_text(
        derivatives.read_text() + "- name: sin(Tensor self) -> Tensor\n  self: grad * ü\n" + MISTAKES
    )
    return root


class Session:
    """One server process with DERIVLS_CACHE_DIR=`cache`, logging at INFO into `log`."""

    def __init__(self, cache: Path, log: Path) -> None:
        self.cache = cache
        self.log = log
        self.client = make_client()

    async def __aenter__(self) -> Session:
        env = dict(os.environ, DERIVLS_CACHE_DIR=str(self.cache))
        env.pop("DERIVLS_NO_CACHE", None)
        await self.client.start_io(*SERVER, "--log-file", str(self.log), "--log-level", "INFO", env=env)
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.client.shutdown_async(None)
        self.client.exit(None)
        await self.client.stop()

    def booted(self) -> list[str]:
        return [line.split("boot: ", 1)[1] for line in self.log.read_text().splitlines() if "boot: " in line]


def plain(value: Any) -> Any:
    """An lsprotocol object as the JSON it is sent as."""
    from lsprotocol.converters import get_converter

    return json.loads(json.dumps(get_converter().unstructure(value)))


async def hover_and_completion(client: Any, doc: str, text: str) -> tuple[str, Any]:
    hovered = await client.text_document_hover_async(
        types.HoverParams(
            text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(text, "mul.Tensor", offset=1)
        )
    )
    completed = await client.text_document_completion_async(
        types.CompletionParams(
            text_document=types.TextDocumentIdentifier(uri=doc), position=position_of(text, "other.sizs", offset=6)
        )
    )
    return hover_text(hovered), plain(completed)


async def cold_then_warm(checkout: Path, tmp_path: Path, spec: str = "visual-studio-code", options: Any = None):
    """The same session twice, the second with the cache the first filled: (cold, warm) results."""
    cache = tmp_path / "cache"
    path = checkout / "tools/autograd/derivatives.yaml"
    text = path.read_text()
    results = []
    for name in ("cold", "warm"):
        async with Session(cache, tmp_path / f"{name}.log") as session:
            answer = await initialize(session.client, checkout, options=options, spec=spec)
            doc = Documents(session.client).open(path)
            found = await diagnostics(session.client, doc)
            features = await hover_and_completion(session.client, doc, text)
            results.append((session, plain(answer), plain(found), features))
    return results


@pytest.mark.parametrize("spec", SPECS)
async def test_a_warm_start_answers_and_publishes_what_the_full_server_does(
    checkout: Path, tmp_path: Path, spec: str
) -> None:
    (
        (cold, cold_answer, cold_found, cold_features),
        (warm, warm_answer, warm_found, warm_features),
    ) = await cold_then_warm(checkout, tmp_path, spec)
    assert not any(line.startswith(("answered", "published")) for line in cold.booted())
    assert "answered initialize from the cache" in warm.booted()
    assert any(line.startswith("published the cached diagnostics") for line in warm.booted())
    # initialize: the boot's answer is the full server's, key by key
    assert sorted(warm_answer) == sorted(cold_answer)
    assert sorted(warm_answer["capabilities"]) == sorted(cold_answer["capabilities"])
    for key, value in cold_answer["capabilities"].items():
        assert warm_answer["capabilities"][key] == value, key
    assert warm_answer == cold_answer
    # the diagnostics (with a non-ASCII column, quick fixes and related places) are the full server's
    assert len(cold_found) >= 3 and warm_found == cold_found
    # and the features answer right after, as after a cold start
    assert warm_features == cold_features and "mul" in warm_features[0] and warm_features[1]


@pytest.mark.slow  # several cold server starts
async def test_the_boots_diagnostics_are_not_published_twice(checkout: Path, tmp_path: Path) -> None:
    await cold_then_warm(checkout, tmp_path)
    async with Session(tmp_path / "cache", tmp_path / "third.log") as session:
        await initialize(session.client, checkout)
        doc = Documents(session.client).open(checkout / "tools/autograd/derivatives.yaml")
        assert await diagnostics(session.client, doc)
        session.client.diagnostics.pop(doc)
        await session.client.protocol.send_request_async("derivls/status", {})  # answered once analysed
        await asyncio.sleep(0.5)
        assert doc not in session.client.diagnostics  # the full server's identical copy was not sent
        assert any(line.startswith("published") for line in session.booted())


@pytest.mark.slow  # several cold server starts
async def test_a_change_sent_during_the_boot_is_applied(checkout: Path, tmp_path: Path) -> None:
    await cold_then_warm(checkout, tmp_path)
    async with Session(tmp_path / "cache", tmp_path / "third.log") as session:
        await initialize(session.client, checkout)
        docs = Documents(session.client)
        path = checkout / "tools/autograd/derivatives.yaml"
        doc = docs.open(path)
        text = path.read_text()
        where = position_of(text, "selff")
        docs.edit(doc, where.line, where.character, where.line, where.character + 5, "self")  # at once
        deadline = asyncio.get_running_loop().time() + 60
        while True:  # the boot publishes version 1 (with the error), the full server version 2 (without)
            found = session.client.diagnostics.get(doc) or []
            if found and "schema-not-found" not in [d.code for d in found]:
                break
            assert asyncio.get_running_loop().time() < deadline, "the change was not applied"
            await asyncio.sleep(0.01)
        assert any(line.startswith("published") for line in session.booted())
        assert "othr" in " ".join(d.message for d in found)  # the other errors stay


@pytest.mark.slow  # several cold server starts
async def test_a_request_sent_during_the_boot_is_answered(checkout: Path, tmp_path: Path) -> None:
    (_, _, _, cold_features), _ = await cold_then_warm(checkout, tmp_path)
    async with Session(tmp_path / "cache", tmp_path / "third.log") as session:
        await initialize(session.client, checkout)
        path = checkout / "tools/autograd/derivatives.yaml"
        doc = Documents(session.client).open(path)
        features = await hover_and_completion(session.client, doc, path.read_text())  # not waiting for anything
        assert features == cold_features
        assert any(line.startswith("published") for line in session.booted())


@pytest.mark.slow  # several cold server starts
async def test_other_settings_or_capabilities_miss(checkout: Path, tmp_path: Path) -> None:
    await cold_then_warm(checkout, tmp_path)
    async with Session(tmp_path / "cache", tmp_path / "other-caps.log") as session:
        await initialize(session.client, checkout, spec="neovim")
        Documents(session.client).open(checkout / "tools/autograd/derivatives.yaml")
        await asyncio.sleep(0.1)
        assert "answered initialize from the cache" not in session.booted()
    async with Session(tmp_path / "cache", tmp_path / "other-options.log") as session:
        await initialize(session.client, checkout, options={"profile": "torchgen"})
        doc = Documents(session.client).open(checkout / "tools/autograd/derivatives.yaml")
        await diagnostics(session.client, doc)
        assert not any(line.startswith("published") for line in session.booted())


def frame(message: dict[str, Any]) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


async def raw_session(cache: Path, *messages: dict[str, Any], garbage: bytes = b"") -> tuple[int, bytes]:
    env = dict(os.environ, DERIVLS_CACHE_DIR=str(cache))
    env.pop("DERIVLS_NO_CACHE", None)
    proc = await asyncio.create_subprocess_exec(
        *SERVER,
        stdin=asyncio.subprocess.PIPE,
        stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.DEVNULL,
        env=env,
    )
    out, _ = await asyncio.wait_for(proc.communicate(garbage + b"".join(frame(m) for m in messages)), 60)
    return proc.returncode or 0, out


INITIALIZE = {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"capabilities": {}, "processId": None}}
SHUTDOWN = {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None}
EXIT = {"jsonrpc": "2.0", "method": "exit", "params": None}


@pytest.mark.slow  # several cold server starts
async def test_exit_statuses_and_framing_resync_hold_during_the_boot(tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    first = await raw_session(cache, INITIALIZE, SHUTDOWN, EXIT)  # cold: fills the cache
    assert first[0] == 0
    assert any(p.name.startswith(boot.INITIALIZE_KIND) for p in cache.iterdir())
    # warm: the boot answers initialize; `exit` without `shutdown` still ends with status 1
    status, out = await raw_session(cache, INITIALIZE, EXIT)
    assert status == 1 and out.count(b'"id": 1') == 1
    # `shutdown` hands over; the full server answers it; then status 0; initialize answered once
    status, out = await raw_session(cache, INITIALIZE, SHUTDOWN, EXIT)
    assert status == 0 and out.count(b'"id": 1,') + out.count(b'"id": 1}') == 1 and b'"id": 2' in out
    # a broken message before initialize: an error for its id, then the reader finds the next header
    status, out = await raw_session(
        cache, INITIALIZE, SHUTDOWN, EXIT, garbage=b'Content-Length: abc\r\n\r\n{"jsonrpc": "2.0", "id": 7}'
    )
    assert status == 0 and b'"id": 7' in out and b"-32700" in out and b'"capabilities"' in out


# -- the settings the boot reads are the full server's ------------------------------------------------


@pytest.mark.parametrize(
    "raw",
    [
        None,
        {},
        {"derivls": {"profile": "legacy", "torchVersion": "2.4"}},
        {"nativeFunctions": "aten/native_functions.yaml", "tags": "/abs/tags.yaml"},
        {"nativeFunctions": "~/x/native_functions.yaml", "torchVersion": "auto"},
        {"nativeFunctions": "$HOME/n.yaml", "profile": " torchgen "},
        {"torchVersion": "2.4.1", "tags": ""},
    ],
)
def test_the_boot_reads_initialization_options_as_the_settings_do(raw: Any, tmp_path: Path) -> None:
    from derivls.server.documents.settings import Settings

    params = {"rootUri": uri(tmp_path), "initializationOptions": raw}
    settings = Settings().merged(raw, tmp_path)
    expected = (settings.native_functions, settings.tags, settings.profile, settings.torch_version)
    assert boot.boot_settings(params) == expected


@pytest.mark.parametrize(
    "raw", [{"compileOnSave": True}, {"profile": "nonsense"}, {"torchVersion": "latest"}, {"tags": 3}, [1]]
)
def test_settings_the_boot_is_unsure_of_make_it_hand_over(raw: Any, tmp_path: Path) -> None:
    assert boot.boot_settings({"rootUri": uri(tmp_path), "initializationOptions": raw}) is None


def test_the_boots_profiles_and_uri_paths_are_the_servers(tmp_path: Path) -> None:
    from pygls.uris import from_fs_path, to_fs_path

    from derivls.server.documents.settings import PROFILES

    assert boot.PROFILES == tuple(PROFILES)
    for path in (tmp_path / "a b" / "derivatives.yaml", tmp_path / "ü%20" / "x.yaml"):
        uri_text = from_fs_path(str(path))
        assert boot.uri_path(uri_text) == Path(to_fs_path(uri_text))


def test_importing_the_server_entry_point_imports_no_lsp_library() -> None:
    import subprocess

    probe = (
        "import sys, derivls.__main__, derivls.cli.commandline, derivls.server.runtime.main, derivls.server.runtime.boot, derivls.server.runtime.framing\n"
        "print(sorted(m for m in ('pygls', 'lsprotocol', 'derivls.aten.native', 'derivls.derivatives.loader') "
        "if m in sys.modules))"
    )
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=True)
    assert done.stdout.strip() == "[]"
