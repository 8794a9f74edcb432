"""The server's boot phase: answer `initialize` and publish a derivatives.yaml's diagnostics from the
disk cache before pygls and lsprotocol are imported (~0.6 s of a server's start), then hand over.

The stdio transport (transport.py) reads its first messages with derivls's own reader (framing.py's
Loop, with every framing guarantee) and this module's `Boot` as its protocol:

- `initialize`: answered with the result the full server gave for the same client capabilities and
  initializationOptions in an earlier session (stored by `Recorder` below, keyed also by derivls's
  code fingerprint and the installed pygls/lsprotocol files). Never seen: hand over at once; the full
  server answers.
- `initialized`: taken (nothing to do).
- `textDocument/didOpen` of a derivatives.yaml: the diagnostics the full server published for the same
  text, path, settings and files (derivls.project.resultcache.check_key, with the position encoding) in an
  earlier session, sent as `textDocument/publishDiagnostics`; then hand over.
- anything else (a request, a change, a native_functions.yaml buffer, `shutdown`, `exit`…): hand over.

At the handover transport.py builds the full server and replays every message read so far, in order,
into its protocol. The full server answers the replayed `initialize` again: `Recorder` drops that
answer when the boot already sent it (it is the same: the boot's copy is what this server code
answered before). The full server also analyses the opened document: its first diagnostics for the
version the boot published are dropped when they equal the boot's (the cached copy is what this code
published for the same inputs), and sent when they differ (e.g. workspace/configuration changed a
setting). Requests that arrive once the boot has published wait (transport.Gate) until the opened
documents are analysed, as after a cold start's first diagnostics; changes and requests are handled
by the full server in the order they came.

The values are what the full server sent, stored by `Recorder` (the writer the full server writes
through): the first `initialize` answer, and the first diagnostics of each derivatives.yaml opened
with no other buffer open (an open native_functions.yaml overrides the file) and not changed before
they were published, with `compileOnSave` off (the compiler's findings are not cached). The settings
in the key are the full server's (after `workspace/configuration`); the boot reads them from
initializationOptions the same way (settings.py's rules, re-done here without importing it): when a
client's configuration differs from its initializationOptions the keys differ, and the boot misses.
"""

from __future__ import annotations

import json
import logging
import os
import re
import sys
from pathlib import Path
from typing import Any

from derivls.base.diskcache import DiskCache, content_key
from derivls.project import resultcache

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

log = logging.getLogger("derivls.server")

INITIALIZE_KIND = "lsp-initialize"
DIAGNOSTICS_KIND = "lsp-diagnostics"
PUBLISH = "textDocument/publishDiagnostics"
MAX_RECORDED = 1 << 20  # bytes: a bigger answer is not parsed (nor stored): memory stays the server's own
PROFILES = ("auto", "torchgen", "legacy")  # settings.PROFILES (test_boot.py checks they are equal)
_VERSION = re.compile(r"^\d+\.\d+(\.\d+)?$")  # releases.parse_version's accepted shapes (stricter is safe)
HEADER = "Content-Type: application/vscode-jsonrpc; charset=utf-8\r\n\r\n"


def frame(message: dict[str, Any]) -> bytes:
    """A message as pygls frames it (json.dumps: ASCII, so characters are bytes)."""
    body = json.dumps(message)
    return f"Content-Length: {len(body)}\r\n{HEADER}{body}".encode()


def _library_fingerprint() -> str:
    """The installed pygls and lsprotocol (files that shape `initialize`'s answer), without importing them."""
    import importlib.util

    parts = []
    for name, files in (
        ("pygls", ("__init__.py", "capabilities.py", "protocol/language_server.py", "server.py")),
        ("lsprotocol", ("__init__.py", "types.py", "converters.py")),
    ):
        spec = importlib.util.find_spec(name)
        folders = list(spec.submodule_search_locations or []) if spec is not None else []
        for folder in folders[:1]:
            for file in files:
                try:
                    info = os.stat(os.path.join(folder, file))
                    parts.append(f"{folder}/{file} {info.st_size} {info.st_mtime_ns}")
                except OSError:
                    parts.append(f"{folder}/{file} absent")
    return "\n".join(parts)


_fingerprint: str | None = None


def library_fingerprint() -> str:
    global _fingerprint
    if _fingerprint is None:
        _fingerprint = _library_fingerprint()
    return _fingerprint


def initialize_key(params: Any) -> str | None:
    if not isinstance(params, dict):
        return None
    try:
        capabilities = json.dumps(params.get("capabilities"), sort_keys=True)
        options = json.dumps(params.get("initializationOptions"), sort_keys=True)
    except (TypeError, ValueError):
        return None
    return content_key(INITIALIZE_KIND, library_fingerprint(), capabilities, options)


def diagnostics_key(
    path: Path, settings: tuple[Path | None, Path | None, str, str | None], text: str, encoding: str
) -> str | None:
    native, tags, profile, torch_version = settings
    return resultcache.check_key(
        path,
        native,
        tags,
        profile,
        torch_version,
        text=text,
        kind=DIAGNOSTICS_KIND,
        extra=(encoding, library_fingerprint()),
    )


# -- what the full server would compute, re-done without its imports ---------------------------------


def uri_path(uri: Any) -> Path | None:
    """The path of a plain `file:///…` URI (pygls.uris.to_fs_path's result for it); None for others."""
    if not isinstance(uri, str) or not uri.startswith("file:///") or sys.platform == "win32":
        return None
    from urllib.parse import unquote, urlparse

    parsed = urlparse(uri)
    if parsed.netloc or re.match(r"^/[a-zA-Z]:", parsed.path):
        return None
    return Path(unquote(parsed.path))


def is_derivatives(uri: str, language_id: Any) -> bool:
    """pipeline.is_derivatives."""
    if language_id == "derivatives-yaml":
        return True
    return uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0] == "derivatives.yaml"


def is_native(uri: Any) -> bool:
    """indexes.native_kind."""
    return isinstance(uri, str) and uri.rstrip("/").rsplit("/", 1)[-1] in ("native_functions.yaml", "tags.yaml")


def _root(params: dict[str, Any]) -> Path | None:
    """handlers.initialize's root."""
    if params.get("rootUri"):
        return uri_path(params["rootUri"])
    if params.get("rootPath"):
        return Path(params["rootPath"])
    folders = params.get("workspaceFolders")
    if isinstance(folders, list) and folders and isinstance(folders[0], dict):
        return uri_path(folders[0].get("uri"))
    return None


class Unsure(Exception):
    """A setting the boot does not read exactly as settings.py would: do not use the cache."""


def _path(value: Any, root: Path | None) -> Path | None:
    if not isinstance(value, str):
        raise Unsure
    if not value.strip():
        return None
    text = os.path.expandvars(os.path.expanduser(value.strip()))
    if text.startswith("file://"):
        raise Unsure
    path = Path(text)
    if not path.is_absolute():
        if root is None:
            raise Unsure
        path = root / path
    return path


def boot_settings(params: dict[str, Any]) -> tuple[Path | None, Path | None, str, str | None] | None:
    """(nativeFunctions, tags, profile, torchVersion) from initializationOptions, as Settings.merged
    reads them; None when compileOnSave is on or a value is not one the boot reads with certainty."""
    raw = params.get("initializationOptions")
    if raw is None:
        raw = {}
    if not isinstance(raw, dict):
        return None
    if isinstance(raw.get("derivls"), dict):
        raw = raw["derivls"]
    try:
        root = _root(params)
        native = _path(raw["nativeFunctions"], root) if "nativeFunctions" in raw else None
        tags = _path(raw["tags"], root) if "tags" in raw else None
    except Unsure:
        return None
    if raw.get("compileOnSave") not in (None, False):
        return None
    profile = raw.get("profile", "auto")
    if not isinstance(profile, str) or profile.strip() not in PROFILES:
        return None
    version = raw.get("torchVersion")
    if version is None or (isinstance(version, str) and version.strip().lower() in ("", "auto")):
        torch_version = None
    elif isinstance(version, str) and _VERSION.match(version.strip()):
        torch_version = version.strip()
    else:
        return None
    return native, tags, profile.strip(), torch_version


# -- the boot protocol ---------------------------------------------------------------------------------


class _Received:
    """A message read during the boot (framing.Loop checks that structure_message made something of it)."""

    __slots__ = ("data",)

    def __init__(self, data: dict[str, Any]) -> None:
        self.data = data


class Boot:
    """The protocol framing.Loop talks to during the boot; also the loop's stop event (`is_set`:
    hand over)."""

    def __init__(self, write: Any, cache: DiskCache | None = None) -> None:
        self.write = write  # bytes -> None
        self.cache = cache if cache is not None else DiskCache()
        self._shutdown = False  # framing.Loop reads it (always False here: `shutdown` hands over)
        self.received: list[dict[str, Any]] = []
        self.handover = False
        self.answered_initialize: Any = None  # the id of the `initialize` the boot answered
        self.initialize_result: Any = None
        self.params: dict[str, Any] = {}
        self.published: list[str] = []  # URIs whose diagnostics the boot published
        self.sent: dict[str, tuple[Any, list[Any]]] = {}  # URI → (version, diagnostics) the boot published

    def is_set(self) -> bool:
        return self.handover

    def send(self, message: dict[str, Any]) -> None:
        self.write(frame(message))

    def send_error(self, msg_id: Any, code: int, message: str) -> None:
        self.send({"id": msg_id, "jsonrpc": "2.0", "error": {"code": code, "message": message}})

    def structure_message(self, data: dict[str, Any]) -> _Received:
        return _Received(data)

    def handle_message(self, message: _Received) -> None:
        data = message.data
        self.received.append(data)
        method = data.get("method")
        try:
            if method == "initialize" and "id" in data and not self.received[:-1]:
                if self.initialize(data):
                    return
            elif method == "initialized" and self.answered_initialize is not None:
                return
            elif method == "textDocument/didOpen" and self.answered_initialize is not None:
                self.open(data)
        except Exception:  # the boot is an optimisation: never let it fail a start
            log.exception("boot: cannot handle %s; handing over", method)
        log.info("boot: handing over at %s", method or "a response")
        self.handover = True

    def initialize(self, data: dict[str, Any]) -> bool:
        params = data.get("params")
        key = initialize_key(params)
        result = self.cache.get(key) if key is not None and self.cache.enabled else None
        if not isinstance(result, dict) or not isinstance(result.get("capabilities"), dict):
            return False
        assert isinstance(params, dict)
        self.params = params
        self.initialize_result = result
        self.answered_initialize = data["id"]
        self.send({"id": data["id"], "jsonrpc": "2.0", "result": result})
        log.info("boot: answered initialize from the cache")
        return True

    def open(self, data: dict[str, Any]) -> None:
        """Publish the cached diagnostics of an opened derivatives.yaml (the caller hands over next)."""
        document = (data.get("params") or {}).get("textDocument")
        if not isinstance(document, dict):
            return
        uri, text, version = document.get("uri"), document.get("text"), document.get("version")
        if not isinstance(uri, str) or not isinstance(text, str) or not is_derivatives(uri, document.get("languageId")):
            return
        path = uri_path(uri)
        settings = boot_settings(self.params)
        if path is None or settings is None:
            return
        encoding = self.initialize_result["capabilities"].get("positionEncoding", "utf-16")
        key = diagnostics_key(path, settings, text, encoding)
        diagnostics = self.cache.get(key) if key is not None else None
        if not isinstance(diagnostics, list):
            return
        params: dict[str, Any] = {"uri": uri, "diagnostics": diagnostics}
        if isinstance(version, int):
            params["version"] = version
        self.send({"method": PUBLISH, "params": params, "jsonrpc": "2.0"})
        self.published.append(uri)
        self.sent[uri] = (version, diagnostics)
        log.info("boot: published the cached diagnostics of %s", uri)


# -- after the handover: what the full server sends -------------------------------------------------------


class Recorder:
    """The full server's writer: drops its answer to an `initialize` the boot answered, and stores in
    the cache what the next boot answers from (the `initialize` result; first diagnostics)."""

    def __init__(self, writer: Any, boot: Boot, server: DerivlsServer, cache: DiskCache) -> None:
        self.writer = writer
        self.boot = boot
        self.server = server
        self.cache = cache
        self.initialize: dict[str, Any] | None = None  # the initialize request, until answered
        self.opened: dict[str, tuple[Any, str]] = {}  # derivatives URI → (version, text) as opened
        self.storing = cache.enabled

    def close(self) -> Any:
        return self.writer.close()

    def observe(self, data: dict[str, Any]) -> None:
        """Every message the full server is handed (framing.Loop.observe), the replayed ones first."""
        if not self.storing:
            return
        method = data.get("method")
        if method == "initialize" and "id" in data:
            self.initialize = data
            return
        params = data.get("params")
        document = params.get("textDocument") if isinstance(params, dict) else None
        uri = document.get("uri") if isinstance(document, dict) else None
        if method == "textDocument/didOpen" and isinstance(uri, str) and isinstance(document, dict):
            if is_native(uri):
                self.storing = False  # an open native_functions.yaml / tags.yaml buffer overrides the file
                self.opened.clear()
            elif is_derivatives(uri, document.get("languageId")) and isinstance(document.get("text"), str):
                self.opened[uri] = (document.get("version"), document["text"])
        elif method in ("textDocument/didChange", "textDocument/didClose") and isinstance(uri, str):
            self.opened.pop(uri, None)
            if is_native(uri):
                self.storing = False
                self.opened.clear()

    def write(self, data: bytes) -> Any:
        if self.initialize is not None or self.opened or self.boot.sent:
            try:
                if self.look(data):
                    return None  # the boot sent it already
            except Exception:
                log.exception("boot: cannot record an answer")
        return self.writer.write(data)

    def look(self, data: bytes) -> bool:
        """Store what the next boot needs; True when `data` is the boot's own answer again."""
        if len(data) > MAX_RECORDED:
            return False  # thousands of diagnostics: not worth a copy in memory (the next boot misses)
        if self.initialize is not None and b'"result"' in data:
            message = _body(data)
            if message.get("id") == self.initialize.get("id") and "result" in message:
                request, self.initialize = self.initialize, None
                if self.boot.answered_initialize is not None and message.get("id") == self.boot.answered_initialize:
                    if message["result"] != self.boot.initialize_result:
                        log.warning("boot: the cached initialize answer differs from this server's")
                    return True
                key = initialize_key(request.get("params"))
                if key is not None and isinstance(message["result"], dict):
                    self.cache.put(key, message["result"])
                return False
        if (self.opened or self.boot.sent) and PUBLISH.encode() in data:
            message = _body(data)
            params = message.get("params") or {}
            uri = params.get("uri")
            if message.get("method") != PUBLISH or not isinstance(uri, str):
                return False
            sent = self.boot.sent.pop(uri, None)
            if sent is not None and sent == (params.get("version"), params.get("diagnostics")):
                self.opened.pop(uri, None)
                return True  # the boot published exactly these for this version: not twice
            opened = self.opened.pop(uri, None)
            if opened is not None and params.get("version") == opened[0]:
                self.store(uri, opened[1], params.get("diagnostics"))
        return False

    def store(self, uri: str, text: str, diagnostics: Any) -> None:
        settings = getattr(self.server, "settings", None)
        doc = getattr(self.server, "docs", {}).get(uri)
        if settings is None or doc is None or doc.path is None or not isinstance(diagnostics, list):
            return
        if settings.compile_on_save:
            return
        encoding = self.server.encoding
        key = diagnostics_key(
            doc.path,
            (settings.native_functions, settings.tags, settings.profile, settings.torch_version),
            text,
            encoding,
        )
        if key is not None:
            self.cache.put(key, diagnostics)


def _body(data: bytes) -> dict[str, Any]:
    start = data.find(b"\r\n\r\n")
    message = json.loads(data[start + 4 :] if start >= 0 else data)
    return message if isinstance(message, dict) else {}


__all__ = [
    "DIAGNOSTICS_KIND",
    "INITIALIZE_KIND",
    "Boot",
    "Recorder",
    "boot_settings",
    "diagnostics_key",
    "frame",
    "initialize_key",
    "uri_path",
]
