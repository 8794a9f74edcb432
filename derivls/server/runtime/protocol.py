"""The pygls protocol subclass: what pygls does not do the way derivls needs.

- `initialize` also advertises the `derivls-generated:` content provider (LSP 3.18);
- answers that are already JSON (raw.RawJSON) are written as they are;
- `didChange` counts lines as LSP does (pygls splits like str.splitlines, also at \\f, \\x1c, …);
- a `$/cancelRequest` for a request already answered is normal (clients cancel what they no longer
  need, often after the answer left): it is not logged as a warning.
"""

from __future__ import annotations

import asyncio
import inspect
import json
import logging
from collections.abc import Generator, Sequence
from typing import Any

from lsprotocol import types
from pygls.protocol import LanguageServerProtocol
from pygls.protocol.language_server import lsp_method

from derivls.ide.generated import SCHEME as GENERATED_SCHEME
from derivls.server.documents.blocklines import BlockLines
from derivls.server.documents.positions import UTF16, EditedText
from derivls.server.features.raw import RawJSON
from derivls.server.runtime.pygls_fixes import ForgetFinishedHandlers

log = logging.getLogger("derivls.server")

_CANCEL_UNKNOWN = "Cancel notification for unknown message id"


class _QuietCancels(logging.Filter):
    """pygls warns when a client cancels a request it has already answered; that is routine."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (isinstance(record.msg, str) and record.msg.startswith(_CANCEL_UNKNOWN))


_quiet_cancels = _QuietCancels()


def quiet_routine_warnings() -> None:
    """Install the filter on pygls's JSON-RPC logger (idempotent)."""
    logger = logging.getLogger("pygls.protocol.json_rpc")
    if _quiet_cancels not in logger.filters:
        logger.addFilter(_quiet_cancels)


quiet_routine_warnings()


def position_encoding(protocol: LanguageServerProtocol) -> str:
    try:
        encoding = protocol.workspace.position_encoding or UTF16
    except Exception:
        return UTF16
    return str(getattr(encoding, "value", encoding))


class DerivlsProtocol(ForgetFinishedHandlers, LanguageServerProtocol):  # pygls_fixes: no per-edit leak
    def __init__(self, *args, **kwargs) -> None:  # type: ignore[no-untyped-def]
        super().__init__(*args, **kwargs)
        self.edited: dict[str, EditedText] = {}  # uri -> its text as changes made it (and the edits)

    def edited_text(self, uri: str, text: str) -> EditedText:
        """The document's EditedText, if it holds `text` (the very object), else a new one."""
        edited = self.edited.get(uri)
        if edited is None or edited.text is not text:
            edited = self.edited[uri] = EditedText(text, self._lines_of(uri, text))
        return edited

    def _lines_of(self, uri: str, text: str) -> Sequence[str] | None:
        """The lines of `text` the server split already (the analysed document's LineIndex), if any."""
        doc = getattr(self._server, "docs", {}).get(uri)
        index = getattr(doc, "lines", None)
        if index is None or index.text is not text or not isinstance(index.lines, (list, BlockLines)):
            return None  # (a CompactLines: a text too big for EditedText's lines)
        return index.lines  # type: ignore[no-any-return]

    @lsp_method(types.INITIALIZE)
    def lsp_initialize(  # type: ignore[override]
        self, params: types.InitializeParams
    ) -> Generator[Any, Any, types.InitializeResult]:
        result = yield from super().lsp_initialize(params)
        try:
            workspace = result.capabilities.workspace or types.WorkspaceOptions()
            workspace.text_document_content = types.TextDocumentContentOptions(schemes=[GENERATED_SCHEME])
            result.capabilities.workspace = workspace
        except Exception:  # pragma: no cover - capabilities are best effort
            log.exception("cannot advertise textDocumentContent")
        return result

    # pygls has no public hook to write pre-serialized JSON; `_send_response` is the one place answers
    # are serialized, so RawJSON answers are written here and everything else goes to pygls.
    def _send_response(self, msg_id: Any, result: Any = None, error: Any = None) -> None:  # type: ignore[override]
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
    def lsp_text_document__did_change(  # type: ignore[override]
        self, params: types.DidChangeTextDocumentParams
    ) -> Generator[Any, Any, None]:
        try:
            document = self.workspace.get_text_document(params.text_document.uri)
            encoding = position_encoding(self)
            edited = self.edited_text(params.text_document.uri, document.source)
            text = document.source
            for change in params.content_changes:
                text = edited.apply(change, encoding)
            # pygls's TextDocument has no public setter for its text (its own apply_change splits lines
            # differently from LSP), so the newest text is written to `_source` here and nowhere else.
            document._source = text
            document.version = params.text_document.version
        except Exception:
            log.exception("cannot apply a change to %s", params.text_document.uri)
        if (user_handler := self.fm.features.get(types.TEXT_DOCUMENT_DID_CHANGE)) is not None:
            yield user_handler, (params,), None


__all__ = ["DerivlsProtocol", "position_encoding", "quiet_routine_warnings"]
