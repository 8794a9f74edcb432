"""The derivls language server object: its state and what it knows about the client.

It holds the workspace (`host`, derivls.project.workspace: indexes, analyzers, analyses; no LSP). Behaviour
lives beside it: documents/indexes.py (loading indexes, overlays, watchers), documents/pipeline.py
(edit → schedule → analyse → publish), features/ (ide data → LSP), runtime/handlers.py (registration).
"""

from __future__ import annotations

import asyncio
import logging
from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types
from pygls.lsp.server import LanguageServer
from pygls.uris import to_fs_path

from derivls import __version__
from derivls.project.workspace import IndexKey, Workspace
from derivls.server.documents.settings import Settings
from derivls.server.documents.state import DerivDocument
from derivls.server.runtime.protocol import DerivlsProtocol, position_encoding

log = logging.getLogger("derivls.server")

if TYPE_CHECKING:
    from derivls.compile.job import CompileOnSave
    from derivls.gradcheck.job import GradcheckRuns
    from derivls.server.documents.indexes import Natives
    from derivls.server.documents.manual_runs import ManualState
    from derivls.server.documents.pipeline import Schedule


def pipeline_state() -> Schedule:
    from derivls.server.documents.pipeline import Schedule  # (it imports this module)

    return Schedule()


def indexes_state() -> Natives:
    from derivls.server.documents.indexes import Natives  # (it imports this module)

    return Natives()


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
        # the native indexes, their versions and the documents' analyzers (LSP-free: derivls.project.workspace)
        self.host = Workspace()
        self.config_ready: asyncio.Event | None = None
        # documents (documents/pipeline.py), and what the pipeline keeps of them
        self.docs: dict[str, DerivDocument] = {}
        self.schedule: Schedule = pipeline_state()
        # native indexes: loads, overlays, watchers (documents/indexes.py; the indexes are the host's)
        self.natives: Natives = indexes_state()
        # indexes.py tells the pipeline that documents must be analysed again (wired by handlers.py):
        # None = files appeared or went (find them again), a key = that index was loaded or replaced.
        self.index_changed: Callable[[IndexKey | None], None] = lambda key: None
        # the pipeline's, set by handlers.register (for compile_on_save, which runs beside it)
        self.current: Callable[[str], DerivDocument | None] = lambda uri: None
        self.publish: Callable[[DerivDocument], None] = lambda doc: None
        # the background runs' state, made on first use by documents/compile_on_save.py, gradcheck_runs.py and
        # manual_runs.py (which read it with getattr: their unit tests pass stand-ins without it)
        self._derivls_compile_on_save: CompileOnSave | None = None
        self._derivls_gradcheck: GradcheckRuns | None = None
        self._derivls_manual: ManualState | None = None
        self._derivls_session_watched: object | None = None  # the gradcheck session whose starts are followed
        self._derivls_session_progress: asyncio.Future[None] | None = None

    def report_server_error(self, error: Exception, source: Any) -> None:
        """pygls would show errors outside requests to the user (window/showMessage): log them instead."""
        log.error("%s: %r", getattr(source, "__name__", source), error)

    # -- the client ---------------------------------------------------------------------------------

    def client_supports(self, dotted: str) -> bool:
        value: Any = self.client_capabilities
        for part in dotted.split("."):
            value = getattr(value, part, None)
            if value is None:
                return False
        return bool(value)

    @property
    def encoding(self) -> str:
        return position_encoding(self.protocol)

    def markdown(self) -> bool:
        formats = None
        try:
            formats = self.client_capabilities.text_document.hover.content_format  # type: ignore[union-attr]
        except AttributeError:
            pass
        return not formats or types.MarkupKind.Markdown in formats

    def workspace_roots(self) -> list[Path]:
        """The root and the workspace folders."""
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
        return roots


__all__ = ["DerivlsServer", "resolved", "uri_path"]
