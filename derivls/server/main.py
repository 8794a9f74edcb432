"""The derivls language server: a thin pygls adapter over the analysis core.

- Documents: files named derivatives.yaml (or language id `derivatives-yaml`) are
  analysed; open native_functions.yaml / tags.yaml buffers override the files on disk.
- Every notification schedules work; work always reads the newest text, so a burst
  of edits is analysed once (stale versions are never analysed).
- Every handler is guarded: an exception is logged and the client gets an empty answer.
- stdout carries JSON-RPC only; logs go to stderr or --log-file.
"""

from __future__ import annotations

import argparse
import asyncio
import functools
import inspect
import json
import logging
import sys
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method
from pygls.uris import to_fs_path

from derivls import __version__
from derivls.gcpolicy import freeze_heap, mark_replaced, paused_gc
from derivls.limits import MAX_RESPONSE_ITEMS, read_regular_file
from derivls.server import convert
from derivls.server.positions import UTF16, LineIndex, apply_change
from derivls.server.pygls_fixes import ForgetFinishedHandlers
from derivls.server.raw import RawJSON
from derivls.server.settings import SECTION, Settings
from derivls.server.state import (
    DerivDocument,
    IndexKey,
    LoadedIndex,
    build_analyzer,
    build_index,
    discover,
    resolve_key,
    setup_diagnostics,
)

log = logging.getLogger("derivls.server")

GENERATED_SCHEME = "derivls-generated"
SHOW_GENERATED_CODE = "derivls.showGeneratedCode"
NATIVE_NAMES = ("native_functions.yaml", "tags.yaml")
REINDEX_DELAY = 0.25  # seconds of quiet in a native_functions.yaml buffer before it is re-indexed
BURST_WINDOW = 0.03  # changes closer than this (seconds) form a burst
BURST_QUIET = 0.01  # a burst is analysed after this long without a change
BURST_MAX_WAIT = 0.2  # but at least this often while it lasts

F = TypeVar("F", bound=Callable[..., Any])


def is_derivatives(uri: str, language_id: str | None = None) -> bool:
    if language_id == "derivatives-yaml":
        return True
    return uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0] == "derivatives.yaml"


def native_kind(uri: str) -> str | None:
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    return name if name in NATIVE_NAMES else None


def uri_path(uri: str) -> Path | None:
    if not uri.startswith("file:"):
        return None
    path = to_fs_path(uri)
    return Path(path) if path else None


def resolved(path: Path | str) -> str:
    try:
        return str(Path(path).resolve())
    except (OSError, RuntimeError):
        return str(path)


def guarded(default: Any = None) -> Callable[[F], F]:
    """No exception from a handler reaches the client: log it and answer `default`."""

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

        @functools.wraps(fn)
        def run(*args: Any, **kwargs: Any) -> Any:
            try:
                return fn(*args, **kwargs)
            except Exception:
                log.exception("%s failed", fn.__name__)
                return default

        return run  # type: ignore[return-value]

    return decorate


class DerivlsProtocol(ForgetFinishedHandlers, LanguageServerProtocol):  # pygls_fixes: no per-edit leak
    """Adds what pygls does not compute itself: the `derivls-generated:` content provider (LSP 3.18)."""

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(self, params: types.InitializeParams):  # type: ignore[override]
        result = yield from super().lsp_initialize(params)
        try:
            workspace = result.capabilities.workspace or types.WorkspaceOptions()
            workspace.text_document_content = types.TextDocumentContentOptions(schemes=[GENERATED_SCHEME])
            result.capabilities.workspace = workspace
        except Exception:  # pragma: no cover - capabilities are best effort
            log.exception("cannot advertise textDocumentContent")
        return result

    def _send_response(self, msg_id, result=None, error=None):  # type: ignore[override]
        """Answers that are already JSON (raw.RawJSON) are written as they are."""
        if error is None and isinstance(result, RawJSON):
            body = '{"jsonrpc":"2.0","id":%s,"result":%s}' % (json.dumps(msg_id), result.text)
            if self.writer is None:
                return
            header = f"Content-Length: {len(body)}\r\nContent-Type: {self.CONTENT_TYPE}; charset={self.CHARSET}\r\n\r\n"
            try:
                written = self.writer.write((header + body).encode(self.CHARSET))
                if inspect.isawaitable(written):
                    asyncio.ensure_future(written)
            except BrokenPipeError:
                raise
            except Exception:
                log.exception("cannot send the answer to %s", msg_id)
            return
        super()._send_response(msg_id, result, error)

    @lsp_method(types.TEXT_DOCUMENT_DID_CHANGE)
    def lsp_text_document__did_change(self, params: types.DidChangeTextDocumentParams):  # type: ignore[override]
        """Apply changes as LSP counts lines (pygls splits lines like str.splitlines, also at \\f, \\x1c, …)."""
        try:
            document = self.workspace.get_text_document(params.text_document.uri)
            encoding = self.workspace.position_encoding or UTF16
            encoding = str(getattr(encoding, "value", encoding))
            text = document.source
            for change in params.content_changes:
                text = apply_change(text, change, encoding)
            document._source = text
            document.version = params.text_document.version
        except Exception:
            log.exception("cannot apply a change to %s", params.text_document.uri)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None


class DerivlsServer(LanguageServer):
    def __init__(self) -> None:
        super().__init__(
            "derivls",
            __version__,
            text_document_sync_kind=types.TextDocumentSyncKind.Incremental,
            protocol_cls=DerivlsProtocol,
        )
        self.init_settings = Settings()
        self.settings = Settings()
        self.root: Path | None = None
        self.docs: dict[str, DerivDocument] = {}
        self.indexes: dict[IndexKey, LoadedIndex] = {}
        self.loading: dict[IndexKey, asyncio.Future[LoadedIndex]] = {}
        self.overlays: dict[str, tuple[str, str]] = {}  # resolved path of an open native/tags buffer → (uri, text)
        self.index_counter = 0
        self.pending: set[str] = set()
        self.changes: dict[str, tuple[float, float]] = {}  # uri → (time of the change before the last, of the last)
        self.reindex_generation: dict[str, int] = {}
        self.config_ready: asyncio.Event | None = None
        self.analysis_count = 0  # analyses run (tests and the bench read it through derivls/status)
        self._watchers_registered = False
        self.closed: dict[str, tuple[tuple[float, int, str], tuple[str, Any, LineIndex, Any]]] = {}

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls would show errors outside requests to the user (window/showMessage): log them instead."""
        log.error("%s: %r", getattr(source, "__name__", source), error)

    # -- client capabilities ------------------------------------------------------------------

    def client_supports(self, dotted: str) -> bool:
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return False
        return bool(value)

    @property
    def encoding(self) -> str:
        try:
            encoding = self.workspace.position_encoding or UTF16
        except Exception:
            return UTF16
        return str(getattr(encoding, "value", encoding))

    def markdown(self) -> bool:
        formats = None
        try:
            formats = self.client_capabilities.text_document.hover.content_format  # type: ignore[union-attr]
        except AttributeError:
            pass
        return not formats or types.MarkupKind.Markdown in formats

    # -- settings -----------------------------------------------------------------------------

    def apply_settings(self, settings: Settings) -> None:
        if settings == self.settings:
            return
        log.info("settings: %s", settings)
        profile_changed = settings.profile != self.settings.profile
        self.settings = settings
        if profile_changed:
            self.indexes.clear()
            mark_replaced()
        for doc in self.docs.values():
            self.rediscover(doc)
            self.schedule(doc.uri)

    async def pull_configuration(self) -> None:
        if not self.client_supports("workspace.configuration"):
            return
        try:
            values = await asyncio.wait_for(
                self.workspace_configuration_async(
                    types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
                ),
                timeout=5,
            )
        except Exception as e:
            log.warning("workspace/configuration failed: %r", e)
            return
        if values:
            self.apply_settings(self.init_settings.merged(values[0], self.root))

    # -- native indexes -----------------------------------------------------------------------

    def rediscover(self, doc: DerivDocument) -> None:
        settings = self.settings
        doc.files = discover(doc.path, settings.native_functions, settings.tags)
        doc.key = resolve_key(doc.files)
        doc.analyzer = None  # re-made against the (possibly different) index

    async def ensure_index(self, key: IndexKey) -> LoadedIndex:
        loaded = self.indexes.get(key)
        if loaded is not None:
            return loaded
        future = self.loading.get(key)
        if future is None:
            future = asyncio.ensure_future(self._load_index(key))
            self.loading[key] = future
        return await asyncio.shield(future)

    def _legacy(self) -> bool | None:
        return {"legacy": True, "torchgen": False}.get(self.settings.profile)

    async def _build(self, key: IndexKey) -> LoadedIndex:
        native_overlay = self.overlays.get(key[0])
        tags_overlay = self.overlays.get(key[1]) if key[1] else None
        self.index_counter += 1
        version = self.index_counter
        loop = asyncio.get_running_loop()
        legacy = self._legacy()

        def work() -> LoadedIndex:
            with paused_gc():
                return build_index(
                    key,
                    version,
                    native_overlay[1] if native_overlay else None,
                    tags_overlay[1] if tags_overlay else None,
                    native_overlay is not None or tags_overlay is not None,
                    legacy,
                )

        return await loop.run_in_executor(None, work)

    async def _load_index(self, key: IndexKey) -> LoadedIndex:
        token = None
        build = asyncio.ensure_future(self._build(key))  # starts now, while progress is set up
        try:
            if self.client_supports("window.work_done_progress"):
                token = f"derivls-index-{uuid.uuid4()}"
                try:
                    await asyncio.wait_for(self.work_done_progress.create_async(token), timeout=2)
                except Exception as e:
                    log.info("progress not available: %r", e)
                    token = None
            if token is not None:
                self.work_done_progress.begin(
                    token,
                    types.WorkDoneProgressBegin(
                        title="derivls: indexing native_functions.yaml", message=key[0], cancellable=False
                    ),
                )
            loaded = await build
            self.indexes[key] = loaded
            freeze_heap(collect=False)  # collecting would delay the first diagnostics; later
            if loaded.index is not None:
                message = f"indexed {len(loaded.index.functions)} functions of {key[0]} in {loaded.seconds:.2f} s"
            else:
                message = f"cannot index {key[0]}: {loaded.problem}"
            log.info("%s", message)
            self.publish_native_problem(loaded)
            if token is not None:
                self.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
            return loaded
        finally:
            self.loading.pop(key, None)

    def schedule_reindex(self, path: str, delay: float = REINDEX_DELAY) -> None:
        """Re-index every index that reads `path` (after `delay` of quiet), then re-check its documents."""
        generation = self.reindex_generation.get(path, 0) + 1
        self.reindex_generation[path] = generation
        asyncio.ensure_future(self._reindex_later(path, generation, delay))

    @guarded()
    async def _reindex_later(self, path: str, generation: int, delay: float) -> None:
        await asyncio.sleep(delay)
        if self.reindex_generation.get(path) != generation:
            return  # a newer edit of the same file is on its way
        keys = {k for k in self.indexes if path in k} | {d.key for d in self.docs.values() if d.key and path in d.key}
        for key in keys:
            while key in self.loading:
                await asyncio.shield(self.loading[key])
            old = self.indexes.get(key)
            loaded = await self._build(key)
            if self.reindex_generation.get(path) != generation:
                return
            if loaded.index is None and loaded.from_buffer and old is not None and old.index is not None:
                # An unsaved buffer that does not parse yet: keep checking against the last good index.
                self.publish_native_problem(loaded)
                continue
            if (
                old is not None
                and old.index is not None
                and loaded.index is not None
                and (old.native_digest == loaded.native_digest and old.tags_digest == loaded.tags_digest)
            ):
                self.publish_native_problem(loaded)
                continue  # same text as what is indexed: nothing changes
            self.indexes[key] = loaded
            mark_replaced()
            self.publish_native_problem(loaded)
            for doc in list(self.docs.values()):
                if doc.key == key:
                    self.schedule(doc.uri)

    def publish_native_problem(self, loaded: LoadedIndex) -> None:
        """Problems of an open native_functions.yaml buffer are shown in that buffer."""
        overlay = self.overlays.get(loaded.key[0])
        if overlay is None:
            return
        uri = overlay[0]
        diagnostics = []
        if loaded.index is None and loaded.problem:
            line = (loaded.problem_line or 1) - 1
            diagnostics.append(
                types.Diagnostic(
                    range=convert.point(line),
                    message=f"derivls cannot index this file: {loaded.problem}",
                    severity=types.DiagnosticSeverity.Error,
                    code="native-index",
                    source=convert.SOURCE,
                )
            )
        self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))

    # -- derivatives documents ----------------------------------------------------------------

    def open_document(self, uri: str) -> DerivDocument:
        doc = self.docs.get(uri)
        if doc is None:
            doc = DerivDocument(uri, uri_path(uri))
            self.rediscover(doc)
            self.docs[uri] = doc
        return doc

    def edited(self, uri: str) -> None:
        """A change of `uri` arrived: remember when, to tell an isolated keystroke from a burst."""
        now = asyncio.get_running_loop().time()
        previous = self.changes.get(uri)
        self.changes[uri] = (previous[1] if previous else float("-inf"), now)
        self.schedule(uri)

    def schedule(self, uri: str) -> None:
        """Analyse `uri` soon; requests already scheduled are merged (the newest text is analysed once)."""
        if uri in self.pending:
            return
        self.pending.add(uri)
        asyncio.ensure_future(self._process(uri))

    async def _settle(self, uri: str) -> None:
        """In a burst of changes (each within BURST_WINDOW of the last), wait for BURST_QUIET without one.

        An isolated change is analysed at once; a burst (a paste replayed as many changes, an editor
        macro, a fast typist) is analysed once at its end, and at least every BURST_MAX_WAIT.
        """
        loop = asyncio.get_running_loop()
        started = loop.time()
        while True:
            times = self.changes.get(uri)
            if times is None:
                return
            previous, last = times
            now = loop.time()
            if last - previous > BURST_WINDOW and now - last < BURST_QUIET:
                return  # the first change after a pause
            quiet = now - last
            if quiet >= BURST_QUIET or now - started >= BURST_MAX_WAIT:
                return
            await asyncio.sleep(BURST_QUIET - quiet)

    @guarded()
    async def _process(self, uri: str) -> None:
        try:
            if self.config_ready is not None and not self.config_ready.is_set():
                try:
                    await asyncio.wait_for(self.config_ready.wait(), timeout=5)
                except asyncio.TimeoutError:
                    pass
            await self._settle(uri)
        finally:
            self.pending.discard(uri)
        doc = self.docs.get(uri)
        if doc is None:
            return
        if doc.key is not None and doc.key not in self.indexes:
            await self.ensure_index(doc.key)
            if self.docs.get(uri) is not doc:
                return
        started = time.perf_counter()
        # No GC pass between a keystroke and its diagnostics: collections run once they are out.
        with paused_gc():
            refreshed = self.refresh(doc)
            analysed = time.perf_counter()
            if refreshed:
                self.publish(doc)
        if refreshed:
            if analysed - started > 0.2:
                freeze_heap()  # after a cold analysis: its long-lived objects need no more GC passes
            if log.isEnabledFor(logging.DEBUG):
                log.debug(
                    "%s v%s: analysed in %.1f ms, published in %.1f ms",
                    uri,
                    doc.version,
                    (analysed - started) * 1000,
                    (time.perf_counter() - analysed) * 1000,
                )

    def refresh(self, doc: DerivDocument) -> bool:
        """Bring `doc.analysis` up to the newest text (synchronously). False if it cannot be yet."""
        try:
            text_document = self.workspace.get_text_document(doc.uri)
        except Exception:
            return False
        loaded = self.indexes.get(doc.key) if doc.key is not None else None
        if doc.key is not None and loaded is None:
            return False  # still indexing
        index_version = loaded.version if loaded is not None else 0
        if doc.analyzer is None or doc.index_version != index_version or doc.analyzer_profile != self.settings.profile:
            doc.analyzer = build_analyzer(
                loaded.index if loaded is not None else None,
                loaded.native_path if loaded is not None and loaded.index is not None else None,
                self.settings.profile,
                doc.path,
            )
            doc.index_version = index_version
            doc.analyzer_profile = self.settings.profile
            doc.setup = setup_diagnostics(doc.files, loaded)
            doc.text = None
        text = text_document.source
        if doc.text is not None and text == doc.text and doc.lines is not None and doc.lines.encoding == self.encoding:
            doc.version = text_document.version
            return True
        with paused_gc():  # cold: hundreds of thousands of new objects; warm: the keystroke path
            doc.analysis = doc.analyzer.analyse(text)
        self.analysis_count += 1
        doc.text = text
        doc.version = text_document.version
        doc.lines = LineIndex(text, self.encoding)
        return True

    def current(self, uri: str) -> DerivDocument | None:
        """The document with an analysis of its newest text, for requests (None while indexing)."""
        doc = self.docs.get(uri)
        if doc is None:
            return None
        self.refresh(doc)
        return doc if doc.analysis is not None and doc.lines is not None else None

    def publish(self, doc: DerivDocument) -> None:
        assert doc.lines is not None and doc.analysis is not None
        diagnostics = convert.to_lsp_all((*doc.setup, *doc.analysis.diagnostics), doc.lines, doc.uri)
        self.text_document_publish_diagnostics(
            types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=diagnostics, version=doc.version)
        )
        if doc.generated_shown:
            from derivls.server import generated

            generated.on_analysis(self, doc)

    async def closed_analysis(self, path: Path) -> tuple[str, Any, LineIndex, Any] | None:
        """(uri, analysis, lines, index) of a derivatives.yaml that is not open (cached by mtime)."""
        key = resolved(path)
        try:
            mtime = Path(key).stat().st_mtime
        except OSError:
            return None
        files = discover(Path(key), self.settings.native_functions, self.settings.tags)
        index_key = resolve_key(files)
        if index_key is None:
            return None
        loaded = await self.ensure_index(index_key)
        if loaded.index is None:
            return None
        cached = self.closed.get(key)
        if cached is not None and cached[0] == (mtime, loaded.version, self.settings.profile):
            return cached[1]
        try:
            text = read_regular_file(key)
        except (OSError, UnicodeDecodeError):
            return None
        analysis = build_analyzer(loaded.index, loaded.native_path, self.settings.profile, Path(key)).analyse(text)
        result = (convert.file_uri(key), analysis, LineIndex(text, self.encoding), loaded.index)
        self.closed[key] = ((mtime, loaded.version, self.settings.profile), result)
        return result

    def workspace_derivatives(self) -> list[Path]:
        """derivatives.yaml files in the workspace folders (checkout or packaged layout), not searched deeper."""
        roots: list[Path] = []
        if self.root is not None:
            roots.append(self.root)
        try:
            for folder in self.workspace.folders.values():
                path = uri_path(folder.uri)
                if path is not None and path not in roots:
                    roots.append(path)
        except Exception:
            pass
        found: list[Path] = []
        for root in roots:
            for relative in (
                "tools/autograd/derivatives.yaml",
                "derivatives.yaml",
                "autograd/derivatives.yaml",
                "packaged/autograd/derivatives.yaml",
                "torchgen/packaged/autograd/derivatives.yaml",
            ):
                candidate = root / relative
                if candidate.is_file():
                    path = Path(resolved(candidate))
                    if path not in found:
                        found.append(path)
        return found

    def analysed_documents(self) -> list[DerivDocument]:
        """Open documents (refreshed) and, when none is open, the derivatives.yaml of the workspace."""
        result = []
        for uri in list(self.docs):
            doc = self.current(uri)
            if doc is not None:
                result.append(doc)
        return result

    # -- files ----------------------------------------------------------------------------------

    def set_overlay(self, uri: str, text: str | None) -> None:
        path = uri_path(uri)
        if path is None:
            return
        key = resolved(path)
        old = self.overlays.get(key)
        if text is None:
            if old is None:
                return
            del self.overlays[key]
            self.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
            self.schedule_reindex(key, delay=0)
            return
        self.overlays[key] = (uri, text)
        if old is not None and old[1] == text:
            return
        self.schedule_reindex(key, delay=0 if old is None else REINDEX_DELAY)

    def files_changed(self, paths: list[str]) -> None:
        native_changed = False
        for path in paths:
            key = resolved(path)
            if key.rsplit("/", 1)[-1] in NATIVE_NAMES:
                native_changed = True
                if key not in self.overlays:
                    # forget indexes that read this file: documents using them wait for a fresh one
                    for index_key in [k for k in self.indexes if key in k]:
                        del self.indexes[index_key]
                        mark_replaced()
        if native_changed:
            # A native_functions.yaml may have appeared or gone: find them again.
            for doc in self.docs.values():
                before = doc.key
                self.rediscover(doc)
                if doc.key != before or doc.files is None or doc.files.native is None:
                    self.schedule(doc.uri)
                else:
                    doc.analyzer = None
                    doc.analyzer_profile = None
                    self.schedule(doc.uri)
        from derivls.server import definition

        definition.forget_sources(paths)

    async def register_watchers(self) -> None:
        if self._watchers_registered or not self.client_supports(
            "workspace.did_change_watched_files.dynamic_registration"
        ):
            return
        self._watchers_registered = True
        watchers = [
            types.FileSystemWatcher(glob_pattern=pattern)
            for pattern in (
                "**/native_functions.yaml",
                "**/tags.yaml",
                "**/derivatives.yaml",
                "**/FunctionsManual.cpp",
                "**/FunctionsManual.h",
            )
        ]
        try:
            await asyncio.wait_for(
                self.client_register_capability_async(
                    types.RegistrationParams(
                        registrations=[
                            types.Registration(
                                id=f"derivls-watch-{uuid.uuid4()}",
                                method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
                                register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
                            )
                        ]
                    )
                ),
                timeout=5,
            )
        except Exception as e:
            log.info("cannot register file watchers: %r", e)


# -- handlers ---------------------------------------------------------------------------------------


def create_server() -> DerivlsServer:
    server = DerivlsServer()
    from derivls.server import (
        actions,
        completion,
        definition,
        generated,
        hover,
        inlay,
        symbols,
    )

    @server.feature(types.INITIALIZE)
    @guarded()
    def initialize(ls: DerivlsServer, params: types.InitializeParams) -> None:
        root = None
        if params.root_uri:
            root = uri_path(params.root_uri)
        elif params.root_path:
            root = Path(params.root_path)
        if root is None and params.workspace_folders:
            root = uri_path(params.workspace_folders[0].uri)
        ls.root = root
        ls.init_settings = Settings().merged(params.initialization_options, root)
        ls.settings = ls.init_settings
        ls.config_ready = asyncio.Event()
        if not ls.client_supports("workspace.configuration"):
            ls.config_ready.set()

    @server.feature(types.INITIALIZED)
    @guarded()
    async def initialized(ls: DerivlsServer, params: types.InitializedParams) -> None:
        try:
            await ls.pull_configuration()
        finally:
            if ls.config_ready is not None:
                ls.config_ready.set()
        await ls.register_watchers()

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(ls: DerivlsServer, params: types.DidChangeConfigurationParams) -> None:
        if ls.client_supports("workspace.configuration"):
            await ls.pull_configuration()
        else:
            ls.apply_settings(ls.init_settings.merged(params.settings, ls.root))

    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: DerivlsServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if is_derivatives(item.uri, item.language_id):
            ls.open_document(item.uri)
            ls.schedule(item.uri)
        elif native_kind(item.uri):
            ls.set_overlay(item.uri, item.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: DerivlsServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.docs:
            ls.edited(uri)
        elif native_kind(uri):
            ls.set_overlay(uri, ls.workspace.get_text_document(uri).source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: DerivlsServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        if ls.docs.pop(uri, None) is not None:
            ls.changes.pop(uri, None)
            ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        elif native_kind(uri):
            ls.set_overlay(uri, None)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @guarded()
    def did_save(ls: DerivlsServer, params: types.DidSaveTextDocumentParams) -> None:
        return None

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded()
    def did_change_watched_files(ls: DerivlsServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for change in params.changes if (p := to_fs_path(change.uri))]
        ls.files_changed(paths)

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def on_hover(ls: DerivlsServer, params: types.HoverParams) -> types.Hover | None:
        return hover.hover(ls, params)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    @guarded([])
    def on_inlay_hint(ls: DerivlsServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        return inlay.inlay_hints(ls, params)[:MAX_RESPONSE_ITEMS]  # limits: bounded answers

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded()
    def on_definition(ls: DerivlsServer, params: types.DefinitionParams) -> list[types.Location] | None:
        return definition.definition(ls, params)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded()
    async def on_references(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
        return await definition.references(ls, params)

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=[" ", ",", "_", "[", "."], resolve_provider=False),
    )
    @guarded()
    def on_completion(ls: DerivlsServer, params: types.CompletionParams) -> types.CompletionList | None:
        return completion.completion(ls, params)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded([])
    def on_document_symbol(ls: DerivlsServer, params: types.DocumentSymbolParams) -> list[types.DocumentSymbol]:
        return symbols.document_symbols(ls, params)

    @server.feature(types.WORKSPACE_SYMBOL)
    @guarded([])
    async def on_workspace_symbol(
        ls: DerivlsServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        return await symbols.workspace_symbols(ls, params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    @guarded([])
    def on_code_action(ls: DerivlsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        return actions.code_actions(ls, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @guarded([])
    def on_code_lens(ls: DerivlsServer, params: types.CodeLensParams) -> list[types.CodeLens]:
        return generated.code_lenses(ls, params)

    @server.command(SHOW_GENERATED_CODE)
    @guarded()
    def on_show_generated_code(ls, *args):  # no annotations: pygls would structure the arguments by them
        return generated.show_generated_code(ls, args)

    @server.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT)
    @guarded()
    def on_text_document_content(
        ls: DerivlsServer, params: types.TextDocumentContentParams
    ) -> types.TextDocumentContentResult | None:
        return generated.text_document_content(ls, params)

    @server.feature("derivls/status")
    @guarded({})
    def on_status(ls: DerivlsServer, params: Any) -> dict[str, Any]:
        """Internal state for tests and the bench (not part of any editor integration)."""
        return status(ls)

    return server


def status(ls: DerivlsServer) -> dict[str, Any]:
    import resource

    rss_kb = 0
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    rss_kb = int(line.split()[1])
    except OSError:
        rss_kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return {
        "analyses": ls.analysis_count,
        "indexes": [
            {"native": k[0], "version": v.version, "functions": len(v.index.functions) if v.index else None}
            for k, v in ls.indexes.items()
        ],
        "documents": [
            {
                "uri": uri,
                "version": d.version,
                "native": str(d.files.native) if d.files and d.files.native else None,
                "entries": len(d.analysis.entries) if d.analysis else None,
            }
            for uri, d in ls.docs.items()
        ],
        "settings": {
            "nativeFunctions": str(ls.settings.native_functions) if ls.settings.native_functions else None,
            "tags": str(ls.settings.tags) if ls.settings.tags else None,
            "profile": ls.settings.profile,
        },
        "rss_kb": rss_kb,
    }


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


def serve(args: argparse.Namespace) -> int:
    configure_logging(getattr(args, "log_file", None), getattr(args, "log_level", "WARNING") or "WARNING")
    server = create_server()
    if getattr(args, "tcp", False):
        log.info("serving LSP on %s:%s", args.host, args.port)
        server.start_tcp(args.host, args.port)
    else:
        stdout = sys.stdout.buffer
        # Nothing but JSON-RPC may reach stdout: stray prints go to stderr.
        sys.stdout = sys.stderr
        if not serve_pipes(server, sys.stdin.buffer, stdout):
            server.start_io(sys.stdin.buffer, stdout)
    return 0


class _PipeReader:
    """asyncio's own reader for stdin: no worker-thread round trip per line, as pygls's reader makes."""

    def __init__(self, reader: asyncio.StreamReader) -> None:
        self.reader = reader

    async def readline(self) -> bytes:
        return await self.reader.readline()

    async def readexactly(self, n: int) -> bytes:
        try:
            return await self.reader.readexactly(n)
        except asyncio.IncompleteReadError:
            return b""  # end of input: the loop stops


def serve_pipes(server: DerivlsServer, stdin: Any, stdout: Any) -> bool:
    """Serve over stdio with an event-loop pipe reader. False if stdin is not a pipe (pygls's reader then)."""
    from pygls.io_ import StdoutWriter

    from derivls.server.framing import serve_messages

    async def run() -> None:
        loop = asyncio.get_running_loop()
        reader = asyncio.StreamReader(limit=1 << 26)
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), stdin)
        started.set()
        server._stop_event = threading.Event()
        server.protocol.set_writer(StdoutWriter(stdout))
        exit_code[0] = await serve_messages(server._stop_event, reader, server.protocol, log)  # framing.py

    started = threading.Event()
    exit_code = [0]
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


__all__ = ["GENERATED_SCHEME", "SHOW_GENERATED_CODE", "DerivlsServer", "create_server", "serve"]
