"""Handler registration: each LSP method → its pipeline step or feature adapter, guarded.

No handler lets an exception reach the client: it is logged, and the request gets an empty answer.
"""

from __future__ import annotations

import asyncio
import functools
import gc
from collections.abc import Generator
from dataclasses import replace
from pathlib import Path
from typing import Any

from lsprotocol import types
from pygls.uris import to_fs_path

from derivls.base.limits import MAX_RESPONSE_ITEMS
from derivls.server.documents import compile_on_save, gradcheck_runs, indexes, manual_runs, pipeline, saving
from derivls.server.documents.settings import Settings
from derivls.server.features import (
    actions,
    completion,
    definition,
    generated,
    hover,
    inlay,
    native,
    signature,
    symbols,
    tokens,
)
from derivls.server.runtime.app import DerivlsServer, uri_path
from derivls.server.runtime.guard import guarded

COMPLETION_TRIGGERS = [" ", ",", "_", "[", ".", ">"]  # ">": members after `x->`
WORKSPACE_TRUSTED = "derivls/workspaceTrusted"  # a notification of the client: the user granted trust


def register(server: DerivlsServer) -> None:
    server.index_changed = functools.partial(pipeline.index_changed, server)
    server.current = functools.partial(pipeline.current, server)
    server.publish = functools.partial(pipeline.publish, server)
    saving.install()  # the entry cache's saves: on the event loop, between keystrokes
    _register_lifecycle(server)
    _register_documents(server)
    _register_navigation(server)
    _register_editing(server)
    _register_views(server)


def _register_lifecycle(server: DerivlsServer) -> None:
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
        ls.host.options = pipeline.options(ls.settings)
        ls.config_ready = asyncio.Event()
        if not ls.client_supports("workspace.configuration"):
            ls.config_ready.set()

    @server.feature(types.INITIALIZED)
    @guarded()
    async def initialized(ls: DerivlsServer, params: types.InitializedParams) -> None:
        try:
            await pipeline.pull_configuration(ls)
        finally:
            if ls.config_ready is not None:
                ls.config_ready.set()
        await indexes.register_watchers(ls)

    @server.feature(types.WORKSPACE_DID_CHANGE_CONFIGURATION)
    @guarded()
    async def did_change_configuration(ls: DerivlsServer, params: types.DidChangeConfigurationParams) -> None:
        if ls.client_supports("workspace.configuration"):
            await pipeline.pull_configuration(ls)
        else:
            pipeline.apply_settings(ls, ls.init_settings.merged(params.settings, ls.root))

    @server.feature(WORKSPACE_TRUSTED)
    @guarded()
    async def workspace_trusted(ls: DerivlsServer, params: Any) -> None:
        """The client says the user has granted trust to the workspace (VS Code's onDidGrantWorkspaceTrust):
        its configuration is read again with trust, and the gradcheck lenses become runnable. Only the client
        sends it: no settings file of a workspace can."""
        if ls.init_settings.trusted_workspace:
            return
        ls.init_settings = replace(ls.init_settings, trusted_workspace=True)
        ls.settings = replace(ls.settings, trusted_workspace=True)
        await pipeline.pull_configuration(ls)
        pipeline.request_refresh(ls)

    @server.feature("derivls/status")
    @guarded({})
    def on_status(ls: DerivlsServer, params: Any) -> dict[str, Any]:
        """Internal state for tests and the bench (not part of any editor integration)."""
        return status(ls)


def _register_documents(server: DerivlsServer) -> None:
    @server.feature(types.TEXT_DOCUMENT_DID_OPEN)
    @guarded()
    def did_open(ls: DerivlsServer, params: types.DidOpenTextDocumentParams) -> None:
        item = params.text_document
        if pipeline.is_derivatives(item.uri, item.language_id):
            pipeline.open_document(ls, item.uri)
        elif indexes.native_kind(item.uri):
            indexes.set_overlay(ls, item.uri, item.text)
        elif manual_runs.is_manual(ls, item.uri):  # FunctionsManual.cpp: its saves re-check the helpers' callers
            manual_runs.opened(ls, item.uri, item.text)

    @server.feature(types.TEXT_DOCUMENT_DID_CHANGE)
    @guarded()
    def did_change(ls: DerivlsServer, params: types.DidChangeTextDocumentParams) -> None:
        uri = params.text_document.uri
        if uri in ls.docs:
            pipeline.schedule(ls, uri)
        elif indexes.native_kind(uri):
            indexes.set_overlay(ls, uri, ls.workspace.get_text_document(uri).source)
        elif manual_runs.is_manual(ls, uri):
            manual_runs.changed(ls, uri, ls.workspace.get_text_document(uri).source)

    @server.feature(types.TEXT_DOCUMENT_DID_CLOSE)
    @guarded()
    def did_close(ls: DerivlsServer, params: types.DidCloseTextDocumentParams) -> None:
        uri = params.text_document.uri
        compile_on_save.close(ls, uri)
        gradcheck_runs.close(ls, uri)
        if not pipeline.close_document(ls, uri) and indexes.native_kind(uri):
            indexes.set_overlay(ls, uri, None)
        manual_runs.closed(ls, uri)

    @server.feature(types.TEXT_DOCUMENT_DID_SAVE)
    @guarded()
    def did_save(ls: DerivlsServer, params: types.DidSaveTextDocumentParams) -> None:
        compile_on_save.on_save(ls, params.text_document.uri)  # the compileOnSave setting (off: nothing)
        gradcheck_runs.on_save(ls, params.text_document.uri)  # the gradcheckOnSave setting (off: nothing)
        manual_runs.on_save(ls, params.text_document.uri)  # a FunctionsManual.cpp: the changed helpers' callers

    @server.feature(types.WORKSPACE_DID_CHANGE_WATCHED_FILES)
    @guarded()
    def did_change_watched_files(ls: DerivlsServer, params: types.DidChangeWatchedFilesParams) -> None:
        paths = [p for change in params.changes if (p := to_fs_path(change.uri))]
        indexes.files_changed(ls, paths)
        manual_runs.files_changed(ls, paths)  # a FunctionsManual.cpp changed on disk: as its save


def _register_navigation(server: DerivlsServer) -> None:
    """Hover, inlay hints, definition, references, symbols: reading the file."""

    @server.feature(types.TEXT_DOCUMENT_HOVER)
    @guarded()
    def on_hover(ls: DerivlsServer, params: types.HoverParams) -> Generator[Any, Any, types.Hover | None]:
        # A generator, so that a derivatives.yaml hover is answered at once, in the order of the requests (a
        # coroutine would wait for its task: a `shutdown` sent after it would cancel it); an open
        # native_functions.yaml's, on its func: lines, is yielded to pygls, which awaits it and resumes here.
        if native.is_native(params.text_document.uri):
            return (yield guarded()(native.hover), (ls, params), {})
        return hover.hover(ls, params)

    @server.feature(types.TEXT_DOCUMENT_INLAY_HINT, types.InlayHintOptions(resolve_provider=False))
    @guarded([])
    def on_inlay_hint(ls: DerivlsServer, params: types.InlayHintParams) -> list[types.InlayHint]:
        return inlay.inlay_hints(ls, params)[:MAX_RESPONSE_ITEMS]  # limits: bounded answers

    @server.feature(types.TEXT_DOCUMENT_DEFINITION)
    @guarded()
    def on_definition(
        ls: DerivlsServer, params: types.DefinitionParams
    ) -> Generator[Any, Any, list[types.Location] | None]:
        if native.is_native(params.text_document.uri):  # from a func: to the entries that cover it (as on_hover)
            return (yield guarded()(native.definition), (ls, params), {})
        return definition.definition(ls, params)

    @server.feature(types.TEXT_DOCUMENT_REFERENCES)
    @guarded()
    async def on_references(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
        return await definition.references(ls, params)

    @server.feature(types.TEXT_DOCUMENT_DOCUMENT_SYMBOL)
    @guarded([])
    def on_document_symbol(ls: DerivlsServer, params: types.DocumentSymbolParams) -> Any:
        return symbols.document_symbols(ls, params)

    @server.feature(types.WORKSPACE_SYMBOL)
    @guarded([])
    async def on_workspace_symbol(
        ls: DerivlsServer, params: types.WorkspaceSymbolParams
    ) -> list[types.WorkspaceSymbol]:
        return await symbols.workspace_symbols(ls, params)


def _register_editing(server: DerivlsServer) -> None:
    """Completion, signature help, quick fixes: writing the file."""

    @server.feature(
        types.TEXT_DOCUMENT_COMPLETION,
        types.CompletionOptions(trigger_characters=COMPLETION_TRIGGERS, resolve_provider=False),
    )
    @guarded()
    def on_completion(ls: DerivlsServer, params: types.CompletionParams) -> types.CompletionList | None:
        if native.is_native(params.text_document.uri):
            return native.completion(ls, params)
        return completion.completion(ls, params)

    @server.feature(
        types.TEXT_DOCUMENT_SIGNATURE_HELP,
        types.SignatureHelpOptions(trigger_characters=signature.TRIGGER_CHARACTERS),
    )
    @guarded()
    def on_signature_help(ls: DerivlsServer, params: types.SignatureHelpParams) -> types.SignatureHelp | None:
        return signature.signature_help(ls, params)

    @server.feature(
        types.TEXT_DOCUMENT_CODE_ACTION,
        types.CodeActionOptions(code_action_kinds=[types.CodeActionKind.QuickFix], resolve_provider=False),
    )
    @guarded([])
    def on_code_action(ls: DerivlsServer, params: types.CodeActionParams) -> list[types.CodeAction]:
        if native.is_native(params.text_document.uri):  # misspellings one edit away from a known name
            return native.code_actions(ls, params)
        return actions.code_actions(ls, params)


def _register_views(server: DerivlsServer) -> None:
    """Semantic tokens, code lenses, generated code: what the editor draws."""

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL, tokens.LEGEND)
    @guarded(tokens.EMPTY)
    def on_semantic_tokens_full(ls: DerivlsServer, params: types.SemanticTokensParams) -> Any:
        return tokens.full(ls, params)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_FULL_DELTA, tokens.LEGEND)
    @guarded(tokens.EMPTY)
    def on_semantic_tokens_delta(ls: DerivlsServer, params: types.SemanticTokensDeltaParams) -> Any:
        return tokens.delta(ls, params)

    @server.feature(types.TEXT_DOCUMENT_SEMANTIC_TOKENS_RANGE, tokens.LEGEND)
    @guarded(tokens.EMPTY)
    def on_semantic_tokens_range(ls: DerivlsServer, params: types.SemanticTokensRangeParams) -> Any:
        return tokens.in_range(ls, params)

    @server.feature(types.TEXT_DOCUMENT_CODE_LENS, types.CodeLensOptions(resolve_provider=False))
    @guarded([])
    def on_code_lens(ls: DerivlsServer, params: types.CodeLensParams) -> Any:
        return generated.code_lenses(ls, params)

    @server.command(generated.SHOW_GENERATED_CODE)
    @guarded()
    def on_show_generated_code(ls, *args):  # type: ignore[no-untyped-def]  # no annotations: pygls structures arguments by them
        return generated.show_generated_code(ls, args)

    @server.command(gradcheck_runs.RUN_GRADCHECK)
    @guarded()
    def on_run_gradcheck(ls, *args):  # type: ignore[no-untyped-def]  # no annotations: pygls structures arguments by them
        return gradcheck_runs.run_command(ls, args)

    @server.feature(types.WORKSPACE_TEXT_DOCUMENT_CONTENT)
    @guarded()
    def on_text_document_content(
        ls: DerivlsServer, params: types.TextDocumentContentParams
    ) -> types.TextDocumentContentResult | None:
        return generated.text_document_content(ls, params)


def _rss_kb() -> int:
    try:
        with open("/proc/self/status", encoding="ascii") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    import resource

    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss


def status(ls: DerivlsServer) -> dict[str, Any]:
    return {
        "analyses": ls.host.analyses,
        "indexes": [
            {"native": k[0], "version": v.version, "functions": len(v.index.functions) if v.index else None}
            for k, v in ls.host.indexes.items()
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
            "torchVersion": ls.settings.torch_version,
            "torchInclude": str(ls.settings.torch_include) if ls.settings.torch_include else None,
            "functionsManual": str(ls.settings.functions_manual) if ls.settings.functions_manual else None,
            "trustedWorkspace": ls.settings.trusted_workspace,
            "gradcheckOnSave": ls.settings.gradcheck_on_save,
            "compileCxx": ls.settings.compile_cxx,
        },
        "gradcheckSession": gradcheck_runs.session_status(ls),
        "rss_kb": _rss_kb(),
        "frozen_objects": gc.get_freeze_count(),  # what the GC no longer scans (gcpolicy.freeze_heap)
    }


__all__ = ["register", "status"]
