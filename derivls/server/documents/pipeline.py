"""The document pipeline: edit → schedule → analyse → publish.

- Every notification schedules work; work always reads the newest text, so changes that arrive while
  an analysis is scheduled or running are analysed once, together (stale versions are never analysed).
- No delay otherwise: an isolated keystroke is analysed at once. The stdio reader takes every message
  already received before the scheduled analysis runs (framing.py reads buffered messages without yielding), so a burst (a paste
  replayed as many changes, a macro) is coalesced exactly as far as it is backlogged.
- When an index is loaded or replaced, the documents that use it are analysed again and, once they
  are, the client is asked to refresh what it shows (inlay hints, code lenses): until then those
  requests were answered empty.
"""

from __future__ import annotations

import asyncio
import logging
import os
import time
from dataclasses import dataclass, field
from pathlib import Path

from lsprotocol import types

from derivls.base.gcpolicy import edit_cycle, reuse_large_blocks
from derivls.ide.generated import content_for, parse_generated_uri
from derivls.project.workspace import IndexKey, Options
from derivls.server.documents import compile_on_save, gradcheck_runs, indexes, saving
from derivls.server.documents.positions import LineIndex
from derivls.server.documents.settings import SECTION, Settings
from derivls.server.documents.state import DerivDocument
from derivls.server.features import convert
from derivls.server.runtime.app import DerivlsServer, uri_path
from derivls.server.runtime.guard import guarded
from derivls.server.runtime.protocol import DerivlsProtocol

log = logging.getLogger("derivls.server")

GENERATED_CHANGED = "derivls/generatedCodeChanged"
COLD_ANALYSIS = 0.2  # seconds: after an analysis this long, freeze the heap (its objects are long-lived)


@dataclass(eq=False)
class Schedule:
    """This module's state (the server's `schedule`): analyses scheduled, documents whose next analysis
    asks the client to refresh its views, and those compile_on_save has seen opened."""

    pending: set[str] = field(default_factory=set)  # URIs with an analysis scheduled
    refresh_after: set[str] = field(default_factory=set)
    compile_opened: set[str] = field(default_factory=set)


def is_derivatives(uri: str, language_id: str | None = None) -> bool:
    if language_id == "derivatives-yaml":
        return True
    return uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0] == "derivatives.yaml"


# -- documents ----------------------------------------------------------------------------------------


def open_document(ls: DerivlsServer, uri: str) -> DerivDocument:
    reuse_large_blocks()  # a keystroke re-makes the text: no fresh pages for it each time
    doc = ls.docs.get(uri)
    if doc is None:
        doc = DerivDocument(uri=uri, path=uri_path(uri))
        indexes.rediscover(ls, doc)
        ls.docs[uri] = doc
    schedule(ls, uri)
    return doc


def close_document(ls: DerivlsServer, uri: str) -> bool:
    if ls.docs.pop(uri, None) is None:
        return False
    if isinstance(ls.protocol, DerivlsProtocol):
        ls.protocol.edited.pop(uri, None)
    ls.schedule.refresh_after.discard(uri)
    ls.schedule.compile_opened.discard(uri)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    return True


def schedule(ls: DerivlsServer, uri: str) -> None:
    """Analyse `uri` soon; requests already scheduled are merged (the newest text is analysed once)."""
    saving.document_changed()
    if uri in ls.schedule.pending:
        return
    ls.schedule.pending.add(uri)
    asyncio.ensure_future(_process(ls, uri))


def index_changed(ls: DerivlsServer, key: IndexKey | None) -> None:
    """An index was replaced (`key`), or files appeared or went (None): analyse the documents again."""
    for doc in list(ls.docs.values()):
        if key is None:
            indexes.rediscover(ls, doc)
        elif doc.key != key:
            continue
        ls.schedule.refresh_after.add(doc.uri)
        schedule(ls, doc.uri)


# -- settings -----------------------------------------------------------------------------------------


def options(settings: Settings) -> Options:
    """What the workspace reads of the settings (and `torchInclude`, which the formula checks read from the
    environment, as `check --torch-include` gives it: set here, before any document is analysed with it)."""
    use_torch_include(settings.torch_include)
    return Options(settings.native_functions, settings.tags, settings.profile, settings.torch_version)


_ENVIRONMENT_INCLUDE: list[str | None] = []  # $DERIVLS_TORCH_INCLUDE as the server found it (once known)


def use_torch_include(folder: Path | None) -> None:
    """$DERIVLS_TORCH_INCLUDE: the `torchInclude` setting's folder, else what the server was started with."""
    from derivls.derivatives.formulas.sources import TORCH_INCLUDE

    if not _ENVIRONMENT_INCLUDE:
        _ENVIRONMENT_INCLUDE.append(os.environ.get(TORCH_INCLUDE))
    value = str(folder) if folder is not None else _ENVIRONMENT_INCLUDE[0]
    if value is None:
        os.environ.pop(TORCH_INCLUDE, None)
    else:
        os.environ[TORCH_INCLUDE] = value


def apply_settings(ls: DerivlsServer, settings: Settings) -> None:
    if settings == ls.settings:
        return
    log.info("settings: %s", settings)
    ls.settings = settings
    ls.host.configure(options(settings))  # a new profile or torchVersion: every index is dropped
    for doc in ls.docs.values():
        indexes.rediscover(ls, doc)
        ls.schedule.refresh_after.add(doc.uri)
        schedule(ls, doc.uri)


async def pull_configuration(ls: DerivlsServer) -> None:
    if not ls.client_supports("workspace.configuration"):
        return
    try:
        values = await asyncio.wait_for(
            ls.workspace_configuration_async(
                types.ConfigurationParams(items=[types.ConfigurationItem(section=SECTION)])
            ),
            timeout=5,
        )
    except Exception as e:
        log.warning("workspace/configuration failed: %r", e)
        return
    if values:
        apply_settings(ls, ls.init_settings.merged(values[0], ls.root))


# -- analysis -----------------------------------------------------------------------------------------


@guarded()
async def _process(ls: DerivlsServer, uri: str) -> None:
    try:
        if ls.config_ready is not None and not ls.config_ready.is_set():
            try:
                await asyncio.wait_for(ls.config_ready.wait(), timeout=5)
            except asyncio.TimeoutError:
                pass
    finally:
        ls.schedule.pending.discard(uri)
    doc = ls.docs.get(uri)
    if doc is None:
        return
    if doc.key is not None and ls.host.waiting(doc):
        ls.schedule.refresh_after.add(uri)  # requests answered while indexing were empty
        await indexes.ensure_index(ls, doc.key)
        if ls.docs.get(uri) is not doc:
            return
    # No GC pass between a keystroke and its diagnostics; the heap frozen after a first or cold analysis
    # (its objects are long-lived); collections only once typing pauses (gcpolicy.edit_cycle).
    loop = asyncio.get_running_loop()
    with edit_cycle(loop, first=not doc.settled, cold_seconds=COLD_ANALYSIS) as cycle:
        if not refresh(ls, doc):
            return
        cycle.analysed()
        publish(ls, doc)
    if uri in ls.schedule.refresh_after:
        ls.schedule.refresh_after.discard(uri)
        request_refresh(ls)
    if cycle.froze:
        doc.settled = True
        warm_up_changes(ls)
    if log.isEnabledFor(logging.DEBUG):
        analysed = cycle.analysed_at or cycle.started
        log.debug(
            "%s v%s: analysed in %.1f ms, published in %.1f ms",
            uri,
            doc.version,
            (analysed - cycle.started) * 1000,
            (time.perf_counter() - analysed) * 1000,
        )


_warmed_up = False


def warm_up_changes(ls: DerivlsServer) -> None:
    """pygls's converter (cattrs) builds its code for a message type the first time one comes: the
    first didChange cost ~8 ms more than the others. Done once, after the first cold analysis (the
    user reads its diagnostics), so the first keystroke does not pay it."""
    global _warmed_up
    if _warmed_up:
        return
    _warmed_up = True
    span = {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": 0}}
    message = {
        "jsonrpc": "2.0",
        "method": types.TEXT_DOCUMENT_DID_CHANGE,
        "params": {
            "textDocument": {"uri": "file:///derivls-warm-up", "version": 0},
            "contentChanges": [{"range": span, "text": ""}, {"text": ""}],
        },
    }
    try:
        ls.protocol.structure_message(message)  # converted only: nothing is handled
    except Exception as e:  # only an optimisation
        log.debug("cannot warm up didChange: %r", e)


def refresh(ls: DerivlsServer, doc: DerivDocument) -> bool:
    """Bring `doc.analysis` up to the newest text (synchronously). False if it cannot be yet."""
    try:
        text_document = ls.workspace.get_text_document(doc.uri)
    except Exception:
        return False
    if ls.host.waiting(doc):
        return False  # still indexing
    text = text_document.source
    encoding = ls.encoding
    if ls.host.is_current(doc, text) and doc.lines is not None and doc.lines.encoding == encoding:
        doc.version = text_document.version
        return True
    edited = ls.protocol.edited.get(doc.uri) if isinstance(ls.protocol, DerivlsProtocol) else None
    if edited is not None and edited.text is not text:
        edited = None
    # the analyzer (made again if the index or the profile changed) splits only what the edits touch
    ls.host.analyse(doc, text, edited.take_edits if edited is not None else None)
    doc.version = text_document.version
    doc.lines = LineIndex(text, encoding, edited.lines if edited is not None else None)
    return True


def current(ls: DerivlsServer, uri: str) -> DerivDocument | None:
    """The document with an analysis of its newest text, for requests (None while indexing)."""
    doc = ls.docs.get(uri)
    if doc is None:
        return None
    refresh(ls, doc)
    return doc if doc.analysis is not None and doc.lines is not None else None


def analysed_documents(ls: DerivlsServer) -> list[DerivDocument]:
    """The open documents, each with an analysis of its newest text."""
    return [doc for uri in list(ls.docs) if (doc := current(ls, uri)) is not None]


# -- publishing ---------------------------------------------------------------------------------------


def publish(ls: DerivlsServer, doc: DerivDocument) -> None:
    assert doc.lines is not None and doc.analysis is not None
    diagnostics = convert.to_lsp_all((*doc.setup, *doc.analysis.diagnostics), doc.lines, doc.uri)
    if doc.uri not in ls.schedule.compile_opened:  # compileOnSave: the text as opened counts as compiled
        ls.schedule.compile_opened.add(doc.uri)
        compile_on_save.on_open(ls, doc.uri, doc)
    diagnostics += compile_on_save.lsp_diagnostics(ls, doc)  # compileOnSave: the compiler's, while valid
    diagnostics += gradcheck_runs.lsp_diagnostics(ls, doc)  # gradcheck results, while their entry is unchanged
    ls.text_document_publish_diagnostics(
        types.PublishDiagnosticsParams(uri=doc.uri, diagnostics=diagnostics, version=doc.version)
    )
    if doc.generated_shown:
        push_generated(ls, doc)


def push_generated(ls: DerivlsServer, doc: DerivDocument) -> None:
    """The document was re-analysed: push new content of the generated views it has open."""
    assert doc.analysis is not None
    for uri in list(doc.generated_shown):
        parsed = parse_generated_uri(uri)
        if parsed is None or parsed[0] != doc.uri:
            continue
        content = content_for(doc.analysis, parsed[1])
        if content is None or content == doc.generated_sent.get(uri):
            continue
        doc.generated_sent[uri] = content
        ls.protocol.notify(GENERATED_CHANGED, {"uri": uri, "content": content})
        if ls.client_supports("workspace.text_document_content"):
            try:
                ls.workspace_text_document_content_refresh(types.TextDocumentContentRefreshParams(uri=uri))
            except Exception:
                log.exception("textDocumentContent/refresh failed")


def request_refresh(ls: DerivlsServer) -> None:
    """Ask the client to ask again for what it shows of every document (each only if it can refresh)."""
    requests = [
        ("workspace.inlay_hint.refresh_support", ls.workspace_inlay_hint_refresh),
        ("workspace.code_lens.refresh_support", ls.workspace_code_lens_refresh),
    ]
    if ls.server_capabilities.semantic_tokens_provider is not None:
        requests.append(("workspace.semantic_tokens.refresh_support", ls.workspace_semantic_tokens_refresh))
    for capability, send in requests:
        if ls.client_supports(capability):
            try:
                send(None)
            except Exception:
                log.exception("cannot send a refresh request")


__all__ = [
    "analysed_documents",
    "apply_settings",
    "close_document",
    "current",
    "index_changed",
    "is_derivatives",
    "Schedule",
    "open_document",
    "options",
    "publish",
    "pull_configuration",
    "refresh",
    "request_refresh",
    "schedule",
]
