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
import time

from lsprotocol import types

from derivls.gcpolicy import collect_when_idle, freeze_heap, paused_gc, reuse_large_blocks
from derivls.ide.generated import content_for, parse_generated_uri
from derivls.server import compile_on_save, convert, gradcheck_runs, indexes, saving
from derivls.server.app import DerivlsServer, uri_path
from derivls.server.guard import guarded
from derivls.server.positions import LineIndex
from derivls.server.protocol import DerivlsProtocol
from derivls.server.settings import SECTION, Settings
from derivls.server.state import DerivDocument, IndexKey

log = logging.getLogger("derivls.server")

GENERATED_CHANGED = "derivls/generatedCodeChanged"
COLD_ANALYSIS = 0.2  # seconds: after an analysis this long, freeze the heap (its objects are long-lived)


def is_derivatives(uri: str, language_id: str | None = None) -> bool:
    if language_id == "derivatives-yaml":
        return True
    return uri.rstrip("/").rsplit("/", 1)[-1].split("?")[0] == "derivatives.yaml"


# -- documents ----------------------------------------------------------------------------------------


def open_document(ls: DerivlsServer, uri: str) -> DerivDocument:
    reuse_large_blocks()  # a keystroke re-makes the text: no fresh pages for it each time
    doc = ls.docs.get(uri)
    if doc is None:
        doc = DerivDocument(uri, uri_path(uri))
        indexes.rediscover(ls, doc)
        ls.docs[uri] = doc
    schedule(ls, uri)
    return doc


def close_document(ls: DerivlsServer, uri: str) -> bool:
    if ls.docs.pop(uri, None) is None:
        return False
    if isinstance(ls.protocol, DerivlsProtocol):
        ls.protocol.edited.pop(uri, None)
    ls.refresh_after.discard(uri)
    ls.compile_opened.discard(uri)
    ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))
    return True


def schedule(ls: DerivlsServer, uri: str) -> None:
    """Analyse `uri` soon; requests already scheduled are merged (the newest text is analysed once)."""
    saving.document_changed()
    if uri in ls.pending:
        return
    ls.pending.add(uri)
    asyncio.ensure_future(_process(ls, uri))


def index_changed(ls: DerivlsServer, key: IndexKey | None) -> None:
    """An index was replaced (`key`), or files appeared or went (None): analyse the documents again."""
    for doc in list(ls.docs.values()):
        if key is None:
            indexes.rediscover(ls, doc)
        elif doc.key != key:
            continue
        ls.refresh_after.add(doc.uri)
        schedule(ls, doc.uri)


# -- settings -----------------------------------------------------------------------------------------


def apply_settings(ls: DerivlsServer, settings: Settings) -> None:
    if settings == ls.settings:
        return
    log.info("settings: %s", settings)
    rules_changed = (settings.profile, settings.torch_version) != (ls.settings.profile, ls.settings.torch_version)
    ls.settings = settings
    if rules_changed:
        indexes.forget_all(ls)
    for doc in ls.docs.values():
        indexes.rediscover(ls, doc)
        ls.refresh_after.add(doc.uri)
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
        ls.pending.discard(uri)
    doc = ls.docs.get(uri)
    if doc is None:
        return
    if doc.key is not None and doc.key not in ls.indexes:
        ls.refresh_after.add(uri)  # requests answered while indexing were empty
        await indexes.ensure_index(ls, doc.key)
        if ls.docs.get(uri) is not doc:
            return
    started = time.perf_counter()
    # No GC pass between a keystroke and its diagnostics: collections run once they are out.
    with paused_gc():
        refreshed = refresh(ls, doc)
        analysed = time.perf_counter()
        if refreshed:
            publish(ls, doc)
    if not refreshed:
        return
    if uri in ls.refresh_after:
        ls.refresh_after.discard(uri)
        request_refresh(ls)
    if analysed - started > COLD_ANALYSIS or not doc.settled:
        # after a document's first analysis (computed, or read from the entry cache: fast, but as many
        # long-lived objects) or a cold one: they need no more GC passes. Not collected first: a load
        # makes no cyclic garbage, and collecting ~1.5M objects blocked requests for 1-2.5 s at 10x
        doc.settled = True
        freeze_heap(collect=False)
        warm_up_changes(ls)
    collect_when_idle(asyncio.get_running_loop())  # no GC pass between keystrokes either: once typing pauses
    if log.isEnabledFor(logging.DEBUG):
        log.debug(
            "%s v%s: analysed in %.1f ms, published in %.1f ms",
            uri,
            doc.version,
            (analysed - started) * 1000,
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
    loaded = ls.indexes.get(doc.key) if doc.key is not None else None
    if doc.key is not None and loaded is None:
        return False  # still indexing
    index_version = loaded.version if loaded is not None else 0
    profile = ls.settings.profile
    if doc.analyzer is None or doc.index_version != index_version or doc.analyzer_profile != profile:
        doc.analyzer = indexes.make_analyzer(loaded, doc.files)
        doc.index_version = index_version
        doc.analyzer_profile = profile
        doc.setup = indexes.setup_problems(doc, loaded)
        doc.text = None
    text = text_document.source
    encoding = ls.encoding
    if doc.text is not None and text == doc.text and doc.lines is not None and doc.lines.encoding == encoding:
        doc.version = text_document.version
        return True
    edited = ls.protocol.edited.get(doc.uri) if isinstance(ls.protocol, DerivlsProtocol) else None
    if edited is not None and edited.text is not text:
        edited = None
    edits = edited.take_edits(doc.text) if edited is not None else None  # the analyzer splits only what they touch
    with paused_gc():  # cold: hundreds of thousands of new objects; warm: the keystroke path
        doc.analysis = doc.analyzer.analyse(text, edits)
    ls.analysis_count += 1
    doc.text = text
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
    if doc.uri not in ls.compile_opened:  # compileOnSave: the text as opened counts as compiled
        ls.compile_opened.add(doc.uri)
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
        if content is None or content == ls.generated_content.get(uri):
            continue
        ls.generated_content[uri] = content
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
    "open_document",
    "publish",
    "pull_configuration",
    "refresh",
    "request_refresh",
    "schedule",
]
