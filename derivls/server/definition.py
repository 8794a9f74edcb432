"""Go to definition (`name:` → its `func:` line; a formula's function → FunctionsManual) and references
(a native_functions.yaml `func:` → the derivatives.yaml entries whose formulas apply to it)."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from lsprotocol import types

from derivls.aten.native import NativeFunction, NativeIndex
from derivls.derivatives import query
from derivls.derivatives.loader import DocumentAnalysis
from derivls.server.convert import file_uri
from derivls.server.positions import LineIndex

if TYPE_CHECKING:
    from derivls.server.main import DerivlsServer

log = logging.getLogger(__name__)

MANUAL = Path("torch/csrc/autograd")
MANUAL_FILES = ("FunctionsManual.cpp", "FunctionsManual.h")
# a top-level C++ function definition/declaration: `Tensor foo(`, `TORCH_API std::tuple<…> foo(`, `foo(`
_DEFINITION = re.compile(
    r"^(?![\s/#}])(?!(?:return|namespace|using|if|for|while|switch)\b)[^;=(]*?\b([A-Za-z_]\w*)\s*\("
)


# -- FunctionsManual ------------------------------------------------------------------------------


@dataclass
class _Source:
    mtime: float
    definitions: dict[str, list[tuple[int, int]]]  # name → (line, column), 0-based


_sources: dict[str, _Source] = {}


def forget_sources(paths: list[str]) -> None:
    for path in paths:
        _sources.pop(str(path), None)


def _definitions(path: Path) -> dict[str, list[tuple[int, int]]]:
    key = str(path)
    try:
        mtime = path.stat().st_mtime
    except OSError:
        return {}
    cached = _sources.get(key)
    if cached is not None and cached.mtime == mtime:
        return cached.definitions
    definitions: dict[str, list[tuple[int, int]]] = {}
    try:
        text = path.read_text(encoding="utf-8", errors="replace")
    except OSError:
        return {}
    for i, line in enumerate(text.splitlines()):
        m = _DEFINITION.match(line)
        if m:
            definitions.setdefault(m.group(1), []).append((i, m.start(1)))
    _sources[key] = _Source(mtime, definitions)
    return definitions


def manual_files(ls: DerivlsServer, doc) -> list[Path]:
    """FunctionsManual.cpp/.h of the workspace: the checkout around the files, the folders, torch's headers."""
    roots: list[Path] = []
    if doc.path is not None:
        parents = doc.path.resolve().parents
        if len(parents) > 2 and doc.path.parent.name == "autograd" and doc.path.parent.parent.name == "tools":
            roots.append(parents[2])
    if doc.files is not None and doc.files.native is not None:
        native = Path(doc.files.native)
        if len(native.parents) > 4:
            roots.append(native.parents[4])  # <root>/aten/src/ATen/native/native_functions.yaml
    if ls.root is not None:
        roots.append(ls.root)
    try:
        roots.extend(Path(f.path) for f in ls.workspace.folders.values() if getattr(f, "path", None))
    except Exception:
        pass
    found: list[Path] = []
    for root in roots:
        for name in MANUAL_FILES:
            candidate = root / MANUAL / name
            if candidate.is_file() and candidate not in found:
                found.append(candidate)
    if doc.path is not None and doc.path.parent.name == "autograd" and doc.path.parent.parent.name == "packaged":
        # a torch wheel ships FunctionsManual.h under torch/include
        site = doc.path.resolve().parents[3]
        header = site / "torch" / "include" / MANUAL / "FunctionsManual.h"
        if header.is_file():
            found.append(header)
    return found


def _manual_locations(ls: DerivlsServer, doc, name: str) -> list[types.Location]:
    locations = []
    files = manual_files(ls, doc)
    # definitions in the .cpp first; the header only when the .cpp does not have it
    for path in sorted(files, key=lambda p: p.suffix != ".cpp"):
        for line, column in _definitions(path).get(name, []):
            locations.append(
                types.Location(
                    uri=file_uri(str(path)),
                    range=types.Range(
                        start=types.Position(line=line, character=column),
                        end=types.Position(line=line, character=column + len(name)),
                    ),
                )
            )
        if locations:
            break
    return locations


# -- definition -------------------------------------------------------------------------------------


def native_location(ls: DerivlsServer, f: NativeFunction) -> types.Location | None:
    if f.line is None:
        f = f.generated_from or f
    if f.line is None:
        return None
    overlay = ls.overlays.get(f.path)
    uri = overlay[0] if overlay is not None else file_uri(f.path)
    line = f.line - 1
    column = f.func_column or 0
    width = len(str(f.func))
    return types.Location(
        uri=uri,
        range=types.Range(
            start=types.Position(line=line, character=column), end=types.Position(line=line, character=column + width)
        ),
    )


def definition(ls: DerivlsServer, params: types.DefinitionParams) -> list[types.Location] | None:
    uri = params.text_document.uri
    if uri not in ls.docs:
        return None  # from native_functions.yaml: see references
    doc = ls.current(uri)
    if doc is None or doc.analysis is None or doc.lines is None:
        return None
    line, column = doc.lines.column(params.position)
    target = query.target_at(doc.analysis, line, column)
    if target is None:
        return None
    if target.kind == "name":
        f = target.entry.result.schema_function
        location = native_location(ls, f) if f is not None else None
        return [location] if location is not None else None
    if target.kind == "formula" and target.word and target.item is not None and target.pattern is None:
        word = target.word
        if not re.fullmatch(r"[A-Za-z_]\w*", word):
            return None
        source = target.item.value.source
        if not re.search(rf"(?<![\w.>]){re.escape(word)}\s*[(<]", source):
            return None  # not called here
        locations = _manual_locations(ls, doc, word)
        return locations or None
    return None


# -- references from native_functions.yaml ----------------------------------------------------------

_FUNC_LINE = re.compile(r"^\s*(?:-\s+)?func\s*:\s*(.+?)\s*(?:#.*)?$")


def _strip_quotes(value: str) -> str:
    if len(value) >= 2 and value[0] == value[-1] and value[0] in "'\"":
        return value[1:-1]
    return value


def func_at(lines: list[str], line: int) -> str | None:
    """The schema of the native_functions.yaml entry holding `line`."""
    for i in range(min(line, len(lines) - 1), -1, -1):
        text = lines[i]
        m = _FUNC_LINE.match(text)
        if m:
            return _strip_quotes(m.group(1))
        if text.startswith("-") and i != line:
            break
    # the cursor may be on the `- ` line of an entry whose func: comes later
    for i in range(line + 1, min(len(lines), line + 30)):
        if lines[i].startswith("-"):
            break
        m = _FUNC_LINE.match(lines[i])
        if m:
            return _strip_quotes(m.group(1))
    return None


def _lookup(index: NativeIndex, schema: str) -> NativeFunction | None:
    f = index.by_schema.get(schema)
    if f is not None:
        return f
    try:
        from derivls.aten.schema import FunctionSchema

        return index.by_schema.get(str(FunctionSchema.parse(schema)))
    except Exception:
        return None


def derivatives_for_native(native: Path) -> list[Path]:
    """The derivatives.yaml that goes with a native_functions.yaml (checkout or packaged layout)."""
    found = []
    resolved = native.resolve()
    parents = resolved.parents
    if len(parents) > 4:
        candidate = parents[4] / "tools" / "autograd" / "derivatives.yaml"
        if candidate.is_file():
            found.append(candidate)
    if len(parents) > 1:
        candidate = parents[1] / "autograd" / "derivatives.yaml"  # packaged: ATen/native → autograd
        if candidate.is_file():
            found.append(candidate)
    return found


async def references(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
    uri = params.text_document.uri
    if uri in ls.docs:
        return _references_in_derivatives(ls, params)
    from derivls.server.main import native_kind, resolved, uri_path

    if native_kind(uri) != "native_functions.yaml":
        return None
    text_document = ls.workspace.get_text_document(uri)
    lines = LineIndex(text_document.source, ls.encoding)
    line, _ = lines.column(params.position)
    schema = func_at(lines.lines, line)
    if schema is None:
        return None
    path = uri_path(uri)
    native = resolved(path) if path is not None else None
    analyses: list[tuple[str, DocumentAnalysis, LineIndex, NativeIndex]] = []
    seen_paths: set[str] = set()
    for doc in list(ls.docs.values()):
        if doc.key is None or doc.key[0] != native:
            continue
        if doc.key not in ls.indexes:
            await ls.ensure_index(doc.key)
        current = ls.current(doc.uri)
        if current is None or current.analysis is None or current.analyzer is None or current.analyzer.index is None:
            continue
        analyses.append((doc.uri, current.analysis, current.lines, current.analyzer.index))
        if current.path is not None:
            seen_paths.add(str(current.path.resolve()))
    if path is not None:
        for candidate in derivatives_for_native(path):
            if str(candidate) in seen_paths:
                continue
            closed = await ls.closed_analysis(candidate)
            if closed is not None:
                analyses.append(closed)
    locations: list[types.Location] = []
    for doc_uri, analysis, doc_lines, index in analyses:
        f = _lookup(index, schema)
        if f is None:
            continue
        exact, group = [], []
        for placed, is_exact in query.entries_for_function(analysis, f):
            name = placed.entry.name
            if name is None:
                continue
            location = types.Location(uri=doc_uri, range=doc_lines.range(name.span.shifted(placed.start_line)))
            (exact if is_exact else group).append(location)
        locations.extend(exact + group)
    if params.context.include_declaration and locations:
        pass  # the declaration is the func: line the request came from; clients show it already
    return locations


def _references_in_derivatives(ls: DerivlsServer, params: types.ReferenceParams) -> list[types.Location] | None:
    """From a `name:`: the `func:` line(s) of the functions sharing the entry's formulas."""
    doc = ls.current(params.text_document.uri)
    if doc is None or doc.analysis is None or doc.lines is None or doc.analyzer is None or doc.analyzer.index is None:
        return None
    line, column = doc.lines.column(params.position)
    target = query.target_at(doc.analysis, line, column)
    if target is None or target.kind != "name" or target.entry.result.schema_function is None:
        return None
    group = query.overload_group(
        doc.analyzer.index, target.entry.result.schema_function, query.profile_of(target.entry)
    )
    return [loc for f in group if (loc := native_location(ls, f)) is not None] or None


__all__ = ["definition", "derivatives_for_native", "forget_sources", "func_at", "manual_files", "references"]
