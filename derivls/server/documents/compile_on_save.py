"""The `compileOnSave` setting: compile the saved entries in the background, publish the compiler's errors.

The engine is LSP-free (`derivls.compile.job.CompileOnSave`); this module is the wiring, called
from two hook points of the server (nothing else in the server needs to know about compiling):

    # 1. in the TEXT_DOCUMENT_DID_SAVE handler:
    compile_on_save.on_save(ls, params.text_document.uri)

    # 2. where the server publishes a document's diagnostics (DerivlsServer.publish), merged in:
    diagnostics += compile_on_save.lsp_diagnostics(ls, doc)

and, when a document is closed, `compile_on_save.close(ls, uri)`. Optionally, once the first
analysis of an opened document is there, `compile_on_save.on_open(ls, uri)`: the entries as opened
then count as compiled, and saves compile only what was edited (else the first save compiles all).

The setting is read as `ls.settings.compile_on_save` (a bool the Settings dataclass gets from
`compileOnSave`; absent means off). On save, the entries changed since their last compile are
compiled in a subprocess (one job per document at a time; a newer save cancels the running one),
with `$/progress` (cancellable: the client's cancel kills the compilers). The diagnostics carry
the source "derivls-compile" and disappear as soon as their entry's text changes (an edit
republishes the analysis without them), and move with the entry when lines are inserted above it.
"""

from __future__ import annotations

import asyncio
import logging
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from derivls.compile.job import SOURCE, CompileOnSave
from derivls.server.documents import background

if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

log = logging.getLogger(__name__)


def enabled(ls: DerivlsServer) -> bool:
    return bool(getattr(ls.settings, "compile_on_save", False))


def engine(ls: DerivlsServer) -> CompileOnSave:
    settings = ls.settings
    cxx = getattr(settings, "compile_cxx", None)
    torch_include = getattr(settings, "compile_torch_include", None)
    found = getattr(ls, "_derivls_compile_on_save", None)
    if found is None:
        found = CompileOnSave(cxx=cxx, torch_include=torch_include)
        ls._derivls_compile_on_save = found
    # compileCxx / compileTorchInclude changed since: the next compile uses the new ones
    found.cxx, found.torch_include = cxx, torch_include
    return found


def on_open(ls: DerivlsServer, uri: str, doc: Any = None) -> None:
    """Optional hook: the document as opened counts as compiled (see CompileOnSave.on_open)."""
    if not enabled(ls):
        return
    doc = doc if doc is not None else ls.current(uri)
    if doc is not None and doc.analysis is not None:
        engine(ls).on_open(uri, doc.analysis)


def on_save(ls: DerivlsServer, uri: str) -> None:
    """Hook 1 (didSave): start compiling the changed entries; returns at once."""
    if not enabled(ls):
        return
    doc = ls.current(uri)
    if doc is None or doc.analysis is None or doc.path is None or doc.text is None:
        return
    files = doc.files
    if files is None or files.native is None:
        return
    job = engine(ls).on_save(
        uri,
        str(doc.path),
        doc.text,
        doc.analysis,
        str(files.native),
        str(files.tags) if files.tags is not None else None,
        ls.settings.profile,
        getattr(files, "torch_version", None),  # DocFiles carry the torchVersion setting; plain NativeFiles don't
    )
    if job is not None:
        asyncio.ensure_future(background.follow(ls, uri, job, engine(ls), title="derivls: compiling", report=_report))


def _report(progress: tuple[int, int, str]) -> types.WorkDoneProgressReport:
    done, total, what = progress
    return types.WorkDoneProgressReport(message=what, percentage=int(100 * done / max(total, 1)))


def lsp_diagnostics(ls: DerivlsServer, doc: Any) -> list[types.Diagnostic]:
    """Hook 2 (publish): the compile diagnostics of the entries unchanged since compiled."""
    if not enabled(ls) or doc.analysis is None or doc.lines is None:
        return []
    return background.lsp_diagnostics(engine(ls), doc, SOURCE)


def close(ls: DerivlsServer, uri: str) -> None:
    found = getattr(ls, "_derivls_compile_on_save", None)
    if found is not None:
        found.close(uri)
