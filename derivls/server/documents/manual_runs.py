"""FunctionsManual.cpp in the editor → LSP: its saves re-check the entries calling a changed helper, and a failure
of such an entry is shown on the helper's definition too. The plain logic is derivls.gradcheck.manual_saves; this
module is the wiring, called from the server's hook points:

    handlers: did_open / did_change / did_close of a FunctionsManual.cpp buffer call `opened`, `changed`,
              `closed`; did_save calls `on_save(ls, uri)`; didChangeWatchedFiles calls `files_changed(ls, paths)`
    gradcheck_runs.lsp_diagnostics: `seen(ls, doc)` when a derivatives.yaml is first published with
              gradcheckOnSave (its FunctionsManual.cpp is read then: what "changed" and "edited" start from),
              and `publish(ls)` after each publication of a derivatives.yaml (its results may have changed)

Which FunctionsManual.cpp a derivatives.yaml uses: the `functionsManual` setting, else its checkout's
`torch/csrc/autograd/FunctionsManual.cpp` (discovery.functions_manual_sources). A buffer is one when its name is
`FunctionsManual.cpp` or it is the setting's file.

With gradcheckOnSave in a trusted workspace, a save (or a change on disk) that changes helpers starts a gradcheck
run, on each open derivatives.yaml using that file, of the entries that call a changed helper (directly or through
other helpers), through the same path as a derivatives.yaml save (the session when warm, else one-shot), with the
file named in the request so the run compiles the edited helpers. Those entries' old results are dropped at once.
A failing entry that calls an edited helper (one whose definition differs from the file as the server first read
it, or from the base the run compiled against: derivls.gradcheck.edited) gets, besides its diagnostics in derivatives.yaml, one on the helper's name in FunctionsManual.cpp (source
`derivls-gradcheck`), published for that buffer while it is open; it goes when the entry's results go (the entry
edited, the helper saved again). A helper that does not compile has the compiler's error on its line there (kept
until the file is saved with changed helpers, or a run compiles helpers of it again).
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

from lsprotocol import types

from derivls.base import discovery
from derivls.base.limits import read_regular_file
from derivls.gradcheck.manual_saves import EntryFailure, ManualSaves, entries_calling, entry_formulas
from derivls.gradcheck.manual_saves import helper_diagnostics as plain_helper_diagnostics
from derivls.server.documents import gradcheck_runs
from derivls.server.documents.positions import LineIndex
from derivls.server.features import convert
from derivls.server.runtime.app import resolved, uri_path

if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer

log = logging.getLogger(__name__)
MANUAL_NAME = "FunctionsManual.cpp"


@dataclass(eq=False)
class ManualState:
    saves: ManualSaves = field(default_factory=ManualSaves)
    buffers: dict[str, tuple[str, str]] = field(default_factory=dict)  # uri -> (resolved path, text) of open buffers
    published: dict[str, list[Any]] = field(default_factory=dict)  # uri -> what was last published for it


def state(ls: DerivlsServer) -> ManualState:
    found = getattr(ls, "_derivls_manual", None)
    if found is None:
        found = ls._derivls_manual = ManualState()
    return found


def _setting(ls: DerivlsServer) -> str | None:
    path = getattr(ls.settings, "functions_manual", None)
    return resolved(path) if path is not None else None


def is_manual(ls: DerivlsServer, uri: str) -> bool:
    """A FunctionsManual.cpp buffer (by name), or the file the `functionsManual` setting names."""
    path = uri_path(uri)
    if path is None:
        return False
    return path.name == MANUAL_NAME or resolved(path) == _setting(ls)


def manual_path(ls: DerivlsServer, doc: Any) -> str | None:
    """The FunctionsManual.cpp a derivatives.yaml document uses: the setting's, else its checkout's."""
    setting = _setting(ls)
    if setting is not None:
        return setting
    path = getattr(doc, "path", None)
    if path is None:
        return None
    files = getattr(doc, "files", None)
    native = files.native if files is not None else None
    roots = list(ls.workspace_roots()) if hasattr(ls, "workspace_roots") else []
    found = discovery.functions_manual_sources(path, Path(native) if native is not None else None, roots)
    return next((resolved(p) for p in found if p.suffix == ".cpp"), None)


def _read(path: str) -> str | None:
    try:
        return read_regular_file(path, MANUAL_NAME)
    except (OSError, UnicodeDecodeError, ValueError) as e:
        log.info("cannot read %s: %s", path, e)
        return None


def seen(ls: DerivlsServer, doc: Any) -> None:
    """A derivatives.yaml opened with gradcheckOnSave: its FunctionsManual.cpp as it is now is the base."""
    path = manual_path(ls, doc)
    saves = state(ls).saves
    if path is None or saves.known(path):
        return
    text = _read(path)
    if text is not None:
        saves.read(path, text)


def opened(ls: DerivlsServer, uri: str, text: str) -> None:
    path = uri_path(uri)
    if path is None:
        return
    key = resolved(path)
    found = state(ls)
    found.buffers[uri] = (key, text)
    found.saves.read(key, text)  # (the file as first read, when nothing read it before)
    found.published.pop(uri, None)
    publish(ls)


def changed(ls: DerivlsServer, uri: str, text: str) -> None:
    found = state(ls)
    if uri in found.buffers:
        found.buffers[uri] = (found.buffers[uri][0], text)


def closed(ls: DerivlsServer, uri: str) -> None:
    found = state(ls)
    shown = found.published.pop(uri, [])
    if found.buffers.pop(uri, None) is not None and shown:
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=[]))


def on_save(ls: DerivlsServer, uri: str) -> None:
    """didSave of a FunctionsManual.cpp buffer: its helpers read again from disk, the callers of the changed ones
    checked again."""
    if not is_manual(ls, uri):
        return
    path = uri_path(uri)
    if path is not None:
        _file_saved(ls, resolved(path))


def files_changed(ls: DerivlsServer, paths: list[str]) -> None:
    """didChangeWatchedFiles: a FunctionsManual.cpp (or the setting's file) changed on disk. A buffer's save comes
    here too (the client's watcher) after didSave: the helpers are unchanged then, nothing runs twice."""
    setting = _setting(ls)
    for path in paths:
        key = resolved(path)
        if Path(key).name == MANUAL_NAME or key == setting:
            _file_saved(ls, key)


def _file_saved(ls: DerivlsServer, path: str) -> None:
    text = _read(path)
    if text is None:
        return
    saves = state(ls).saves
    names = saves.saved(path, text)
    if not names:
        publish(ls)  # (the helpers' lines may have moved)
        return
    log.info("%s saved: helpers changed: %s", path, ", ".join(sorted(names)))
    enabled = bool(getattr(ls.settings, "gradcheck_on_save", False)) and gradcheck_runs.trusted(ls)
    for uri, doc in list(ls.docs.items()):
        if doc.analysis is None or manual_path(ls, doc) != path:
            continue
        lines = entries_calling(doc.analysis, saves.manual(path), names)
        if not lines:
            continue
        runs = gradcheck_runs.engine(ls) if enabled else getattr(ls, "_derivls_gradcheck", None)
        if runs is not None:
            runs.forget(uri, doc.analysis, lines)  # their results were of the helpers before this save
            runs.forget_manual_errors(path)
        if doc.lines is not None:
            ls.publish(doc)
        if enabled:
            gradcheck_runs.start_entries(ls, uri, doc, lines, manual=path)
    publish(ls)


def helper_diagnostics(ls: DerivlsServer, path: str) -> list[Any]:
    """The derivls Diagnostics of FunctionsManual.cpp `path`: each failing entry of the open derivatives.yaml
    documents using it, on each edited helper it calls."""
    saves = state(ls).saves
    runs = getattr(ls, "_derivls_gradcheck", None)
    report = runs.manual.get(path) if runs is not None else None
    errors = list(report.errors) if report is not None else []  # helpers that do not compile: the compiler's
    edited = saves.edited(path) | (report.edited if report is not None else frozenset())
    if not edited:
        return errors
    failures = []
    for doc in list(ls.docs.values()):
        if doc.analysis is None or doc.path is None or manual_path(ls, doc) != path:
            continue
        found = gradcheck_runs.diagnostics_now(ls, doc)
        if not found:
            continue
        for placed in doc.analysis.entries:
            mine = [d for d in found if placed.line <= d.span.line <= placed.end_line]
            if mine:
                name = placed.result.entry.name
                failures.append(
                    EntryFailure(
                        str(doc.path),
                        str(name.value) if name is not None else "",
                        entry_formulas(placed),
                        mine,
                    )
                )
    return errors + plain_helper_diagnostics(saves.manual(path), edited, failures)


def publish(ls: DerivlsServer) -> None:
    """The helper diagnostics of every open FunctionsManual.cpp buffer, when they changed."""
    found = state(ls)
    for uri, (path, text) in list(found.buffers.items()):
        plain = helper_diagnostics(ls, path)  # (called at each publication of a derivatives.yaml: mostly none)
        lsp = convert.to_lsp_all(plain, LineIndex(text, ls.encoding), uri) if plain else []
        for d in lsp:
            d.source = gradcheck_runs.SOURCE
        if found.published.get(uri) == lsp:
            continue
        found.published[uri] = lsp
        ls.text_document_publish_diagnostics(types.PublishDiagnosticsParams(uri=uri, diagnostics=lsp))


__all__ = ["closed", "changed", "files_changed", "is_manual", "manual_path", "on_save", "opened", "publish", "seen"]
