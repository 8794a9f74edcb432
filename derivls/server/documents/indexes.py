"""Native indexes: load (with $/progress), re-index when a native_functions.yaml / tags.yaml buffer or
file changes, overlays of open buffers, file watchers, and analyses of derivatives.yaml files that are
not open (for references and workspace symbols).

The index table, its versions and the analyzers live in the workspace (derivls.project.workspace, `ls.host`);
this module loads into it, off the event loop, and tells the pipeline through `ls.index_changed(key)`
when an index is loaded or replaced.
"""

from __future__ import annotations

import asyncio
import logging
import uuid
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from lsprotocol import types

from derivls.aten.native import NativeIndex
from derivls.aten.native_incremental import EntryChecker
from derivls.base import discovery
from derivls.base.gcpolicy import freeze_heap, paused_gc
from derivls.base.limits import read_regular_file
from derivls.codes.setup import NATIVE_INDEX
from derivls.derivatives.loader import DocumentAnalysis
from derivls.ide import manual
from derivls.project.workspace import IndexKey, LoadedIndex, build_index
from derivls.server.documents.positions import LineIndex
from derivls.server.documents.state import DerivDocument
from derivls.server.features import convert
from derivls.server.runtime.app import DerivlsServer, resolved, uri_path
from derivls.server.runtime.guard import guarded

log = logging.getLogger("derivls.server")

NATIVE_NAMES = ("native_functions.yaml", "tags.yaml")
REINDEX_DELAY = 0.25  # seconds of quiet in a native_functions.yaml buffer before it is re-indexed
WATCHED = (
    "**/native_functions.yaml",
    "**/tags.yaml",
    "**/derivatives.yaml",
    "**/FunctionsManual.cpp",
    "**/FunctionsManual.h",
)

ClosedAnalysis = tuple[str, DocumentAnalysis, LineIndex, NativeIndex]  # (uri, analysis, lines, native index)


@dataclass(eq=False)
class Natives:
    """This module's state (the server's `natives`): loads under way, open native buffers, re-index
    requests, analyses of files that are not open, and whether file watchers are registered. The
    indexes themselves are the workspace's (`ls.host`)."""

    loading: dict[IndexKey, asyncio.Future[LoadedIndex]] = field(default_factory=dict)
    overlays: dict[str, tuple[str, str]] = field(default_factory=dict)  # resolved path → (uri, text) of a buffer
    reindex_generation: dict[str, int] = field(default_factory=dict)  # path → its newest re-index request
    closed: dict[str, tuple[tuple[Any, ...], ClosedAnalysis]] = field(default_factory=dict)  # path → (stamp, …)
    # path of an open native_functions.yaml → its per-entry checker (each keystroke's diagnostics, at once)
    checkers: dict[str, EntryChecker] = field(default_factory=dict)
    watchers_registered: bool = False


def native_kind(uri: str) -> str | None:
    name = uri.rstrip("/").rsplit("/", 1)[-1]
    return name if name in NATIVE_NAMES else None


# -- what a document reads --------------------------------------------------------------------------


def rediscover(ls: DerivlsServer, doc: DerivDocument) -> None:
    """Find the document's native_functions.yaml / tags.yaml again (after a settings or file change)."""
    ls.host.locate(doc)


# -- loading ----------------------------------------------------------------------------------------


async def ensure_index(ls: DerivlsServer, key: IndexKey) -> LoadedIndex:
    loaded = ls.host.index(key)
    if loaded is not None:
        return loaded
    future = ls.natives.loading.get(key)
    if future is None:
        future = asyncio.ensure_future(_load(ls, key))
        ls.natives.loading[key] = future
    return await asyncio.shield(future)


async def _build(ls: DerivlsServer, key: IndexKey) -> LoadedIndex:
    native_overlay = ls.natives.overlays.get(key[0])
    tags_overlay = ls.natives.overlays.get(key[1]) if key[1] else None
    version = ls.host.next_version()

    def work() -> LoadedIndex:
        with paused_gc():
            return build_index(
                key,
                version,
                native_overlay[1] if native_overlay else None,
                tags_overlay[1] if tags_overlay else None,
                native_overlay is not None or tags_overlay is not None,
            )

    return await asyncio.get_running_loop().run_in_executor(None, work)


async def _progress_token(ls: DerivlsServer, key: IndexKey) -> str | None:
    if not ls.client_supports("window.work_done_progress"):
        return None
    token = f"derivls-index-{uuid.uuid4()}"
    try:
        await asyncio.wait_for(ls.work_done_progress.create_async(token), timeout=2)
    except Exception as e:
        log.info("progress not available: %r", e)
        return None
    ls.work_done_progress.begin(
        token,
        types.WorkDoneProgressBegin(title="derivls: indexing native_functions.yaml", message=key[0], cancellable=False),
    )
    return token


async def _load(ls: DerivlsServer, key: IndexKey) -> LoadedIndex:
    build = asyncio.ensure_future(_build(ls, key))  # starts now, while progress is set up
    try:
        token = await _progress_token(ls, key)
        loaded = await build
        ls.host.add_index(loaded)
        freeze_heap(collect=False)  # collecting would delay the first diagnostics; later
        if loaded.index is not None:
            message = f"indexed {len(loaded.index.functions)} functions of {key[0]} in {loaded.seconds:.2f} s"
        else:
            message = f"cannot index {key[0]}: {loaded.problem}"
        log.info("%s", message)
        publish_native_problem(ls, loaded)
        if token is not None:
            ls.work_done_progress.end(token, types.WorkDoneProgressEnd(message=message))
        return loaded
    finally:
        ls.natives.loading.pop(key, None)


def schedule_reindex(ls: DerivlsServer, path: str, delay: float = REINDEX_DELAY) -> None:
    """Re-index every index that reads `path` (after `delay` of quiet), then re-check its documents."""
    generation = ls.natives.reindex_generation.get(path, 0) + 1
    ls.natives.reindex_generation[path] = generation
    asyncio.ensure_future(_reindex_later(ls, path, generation, delay))


def _unchanged(old: LoadedIndex | None, new: LoadedIndex) -> bool:
    return (
        old is not None
        and old.index is not None
        and new.index is not None
        and old.native_digest == new.native_digest
        and old.tags_digest == new.tags_digest
    )


@guarded()
async def _reindex_later(ls: DerivlsServer, path: str, generation: int, delay: float) -> None:
    await asyncio.sleep(delay)
    if ls.natives.reindex_generation.get(path) != generation:
        return  # a newer edit of the same file is on its way
    keys = {k for k in ls.host.indexes if path in k} | {d.key for d in ls.docs.values() if d.key and path in d.key}
    if not keys and path in ls.natives.overlays:  # a native_functions.yaml / tags.yaml open alone
        lone = lone_key(ls, path)
        if lone is not None:
            keys = {lone}
    for key in keys:
        while key in ls.natives.loading:
            await asyncio.shield(ls.natives.loading[key])
        old = ls.host.index(key)
        loaded = await _build(ls, key)
        if ls.natives.reindex_generation.get(path) != generation:
            return
        publish_native_problem(ls, loaded)
        if loaded.index is None and loaded.from_buffer and old is not None and old.index is not None:
            continue  # an unsaved buffer that does not parse yet: keep checking against the last good index
        if _unchanged(old, loaded):
            continue  # same text as what is indexed: nothing changes
        ls.host.add_index(loaded, replaces=True)
        ls.index_changed(key)


def lone_key(ls: DerivlsServer, path: str) -> IndexKey | None:
    """The index of a native_functions.yaml (or of the one beside a tags.yaml) open without a derivatives.yaml:
    its tags.yaml beside it, the release found from its place (version.txt, torch/version.py) or the setting."""
    native = (
        Path(path) if native_kind(path) == "native_functions.yaml" else Path(path).with_name("native_functions.yaml")
    )
    native_key = resolved(native)
    if native_key not in ls.natives.overlays and not native.is_file():
        return None
    tags = native.with_name("tags.yaml")
    tags_key = resolved(tags) if tags.is_file() or resolved(tags) in ls.natives.overlays else None
    return (native_key, tags_key, None, ls.host.options.torch_version)


def publish_native_problem(ls: DerivlsServer, loaded: LoadedIndex) -> None:
    """What torchgen rejects in an open native_functions.yaml / tags.yaml buffer is shown in that buffer, at
    its token (derivls.aten.native_report); a file that cannot be indexed at all, at its line."""
    from derivls.project.opener import native_diagnostics

    found = native_diagnostics(loaded.load) if loaded.index is not None else {}
    tags_path = loaded.key[1]
    if tags_path is not None and tags_path in ls.natives.overlays:
        tags_uri, tags_text = ls.natives.overlays[tags_path]
        lines = LineIndex(tags_text, ls.encoding)
        published = convert.to_lsp_all(found.get(tags_path, ()), lines, tags_uri)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=tags_uri, diagnostics=published))
    overlay = ls.natives.overlays.get(loaded.key[0])
    if overlay is None:
        return
    if loaded.index is not None and not loaded.index.legacy:  # the next keystrokes start from this index
        checker = ls.natives.checkers.get(loaded.key[0])
        if checker is None or checker.rules is not loaded.index.rules:
            checker = EntryChecker(loaded.key[0], set(loaded.index.tags or ()) or None, loaded.index.rules)
            ls.natives.checkers[loaded.key[0]] = checker
        checker.check(overlay[1])
        checker.adopt(overlay[1], loaded.index.rejected)
    diagnostics = convert.to_lsp_all(found.get(loaded.key[0], ()), LineIndex(overlay[1], ls.encoding), overlay[0])
    if loaded.index is None and loaded.problem:
        diagnostics.append(
            types.Diagnostic(
                range=convert.point((loaded.problem_line or 1) - 1),
                message=f"derivls cannot index this file: {loaded.problem}",
                severity=types.DiagnosticSeverity.Error,
                code=NATIVE_INDEX,
                code_description=convert.code_description(NATIVE_INDEX),
                source=convert.SOURCE,
            )
        )
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=overlay[0], diagnostics=diagnostics))


# -- open native_functions.yaml / tags.yaml buffers, files on disk ----------------------------------


def set_overlay(ls: DerivlsServer, uri: str, text: str | None) -> None:
    """An open buffer's text replaces the file on disk (None: the buffer was closed)."""
    path = uri_path(uri)
    if path is None:
        return
    key = resolved(path)
    old = ls.natives.overlays.get(key)
    if text is None:
        if old is None:
            return
        del ls.natives.overlays[key]
        ls.natives.checkers.pop(key, None)
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
        schedule_reindex(ls, key, delay=0)
        return
    ls.natives.overlays[key] = (uri, text)
    if old is not None and old[1] == text:
        return
    if old is not None:
        publish_entries_now(ls, key, uri, text)
    schedule_reindex(ls, key, delay=0 if old is None else REINDEX_DELAY)


def publish_entries_now(ls: DerivlsServer, path: str, uri: str, text: str) -> None:
    """A keystroke in an open native_functions.yaml: its diagnostics at once, from the entries whose text
    changed (derivls.aten.native_incremental) and the last full index's for the others; the full re-index
    follows when the typing stops."""
    from derivls.aten.native_report import problem_diagnostic

    checker = ls.natives.checkers.get(path)
    loaded = next((i for k, i in ls.host.indexes.items() if k[0] == path and i.index is not None), None)
    if checker is None or loaded is None:
        return
    known = loaded.load.release is not None and loaded.load.release.known
    found = [problem_diagnostic(p, known) for p in checker.check(text) if p.reported]
    diagnostics = convert.to_lsp_all(found, LineIndex(text, ls.encoding), uri)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=diagnostics))


def files_changed(ls: DerivlsServer, paths: list[str]) -> None:
    native_changed = False
    for path in paths:
        key = resolved(path)
        if key.rsplit("/", 1)[-1] in NATIVE_NAMES:
            native_changed = True
            if key not in ls.natives.overlays:
                ls.host.forget_reading(key)  # documents using its indexes wait for fresh ones
    manual.forget(paths)
    if native_changed:
        ls.index_changed(None)  # a native_functions.yaml may have appeared or gone: find them again


async def register_watchers(ls: DerivlsServer) -> None:
    if ls.natives.watchers_registered or not ls.client_supports(
        "workspace.did_change_watched_files.dynamic_registration"
    ):
        return
    ls.natives.watchers_registered = True
    watchers = [types.FileSystemWatcher(glob_pattern=pattern) for pattern in WATCHED]
    registration = types.Registration(
        id=f"derivls-watch-{uuid.uuid4()}",
        method=types.WORKSPACE_DID_CHANGE_WATCHED_FILES,
        register_options=types.DidChangeWatchedFilesRegistrationOptions(watchers=watchers),
    )
    try:
        await asyncio.wait_for(
            ls.client_register_capability_async(types.RegistrationParams(registrations=[registration])), timeout=5
        )
    except Exception as e:
        log.info("cannot register file watchers: %r", e)


# -- derivatives.yaml files that are not open --------------------------------------------------------


async def closed_analysis(ls: DerivlsServer, path: Path) -> ClosedAnalysis | None:
    """(uri, analysis, lines, index) of a derivatives.yaml that is not open (cached by mtime)."""
    key = resolved(path)
    try:
        mtime = Path(key).stat().st_mtime
    except OSError:
        return None
    files = ls.host.files_of(Path(key))
    index_key = ls.host.key_of(files)
    if index_key is None:
        return None
    loaded = await ensure_index(ls, index_key)
    if loaded.index is None:
        return None
    stamp = (mtime, loaded.version, ls.host.options.profile)
    cached = ls.natives.closed.get(key)
    if cached is not None and cached[0] == stamp:
        return cached[1]
    try:
        text = read_regular_file(key, "derivatives.yaml")
    except (OSError, UnicodeDecodeError):
        return None
    analysis = ls.host.analyse_file(files, loaded, text)
    result: ClosedAnalysis = (convert.file_uri(key), analysis, LineIndex(text, ls.encoding), loaded.index)
    ls.natives.closed[key] = (stamp, result)
    return result


def workspace_derivatives(ls: DerivlsServer) -> list[Path]:
    found: list[Path] = []
    for root in ls.workspace_roots():
        for candidate in discovery.workspace_derivatives(root):
            path = Path(resolved(candidate))
            if path not in found:
                found.append(path)
    return found


def manual_files(ls: DerivlsServer, doc: DerivDocument) -> list[Path]:
    """FunctionsManual.cpp/.h for go to definition and completion: the `functionsManual` setting's file first (a
    derivatives.yaml outside a checkout), then what discovery finds."""
    native = doc.files.native if doc.files is not None else None
    found = discovery.functions_manual_sources(
        doc.path, Path(native) if native is not None else None, list(ls.workspace_roots())
    )
    setting = getattr(ls.settings, "functions_manual", None)
    if setting is not None and Path(setting).is_file() and Path(setting) not in found:
        found.insert(0, Path(setting))
    return found


__all__ = [
    "NATIVE_NAMES",
    "Natives",
    "closed_analysis",
    "ensure_index",
    "files_changed",
    "manual_files",
    "lone_key",
    "native_kind",
    "publish_entries_now",
    "publish_native_problem",
    "register_watchers",
    "rediscover",
    "schedule_reindex",
    "set_overlay",
    "workspace_derivatives",
]
