"""The server's state: native indexes (from disk or open buffers) and analysed derivatives.yaml documents.

Nothing here speaks LSP; main.py wires it to notifications and requests.
`build_analyzer` is the one place an analyzer is made (profiles plug in there).
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from derivls.aten.native import NativeIndex, NativeIndexError
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.diagnostics import Diagnostic, Span, error, warning
from derivls.discovery import NativeFiles, find_native_files
from derivls.limits import read_regular_file
from derivls.server.positions import LineIndex

log = logging.getLogger(__name__)

FIRST_LINE = Span(0, 0, 0, 1)

IndexKey = tuple[str, "str | None"]  # (native_functions.yaml, tags.yaml), resolved


def build_analyzer(
    index: NativeIndex | None, native_path: str | None, profile: str, derivatives: Path | None = None
) -> DocumentAnalyzer:
    """The only place the server makes an analyzer: `auto` is resolved and the profile wired here."""
    try:
        from derivls.derivatives.profiles import resolve_profile
    except ImportError:  # pragma: no cover - a loader without profiles
        return DocumentAnalyzer(index, native_path)
    chosen = resolve_profile(profile, derivatives, index)
    try:
        return DocumentAnalyzer(index, native_path, chosen)
    except ValueError as e:
        log.warning("profile %r is not available (%s); using torchgen", chosen, e)
        return DocumentAnalyzer(index, native_path, "torchgen")


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class LoadedIndex:
    """One native_functions.yaml (+ tags.yaml) indexed; `version` changes whenever it is rebuilt."""

    key: IndexKey
    version: int
    index: NativeIndex | None
    problem: str | None  # why there is no index
    problem_line: int | None = None  # 1-based, in the native file
    native_digest: str | None = None
    tags_digest: str | None = None
    from_buffer: bool = False
    seconds: float = 0.0

    @property
    def native_path(self) -> str:
        return self.key[0]


def read_optional(path: str | None) -> str | None:
    if path is None:
        return None
    try:
        return read_regular_file(path)
    except (OSError, UnicodeDecodeError):
        return None


def build_index(
    key: IndexKey,
    version: int,
    native_text: str | None,
    tags_text: str | None,
    from_buffer: bool,
    legacy: bool | None = None,
) -> LoadedIndex:
    """Index one native_functions.yaml (runs in a worker thread: touches no shared state)."""
    native_path, tags_path = key
    started = time.perf_counter()
    if native_text is None:
        try:
            native_text = read_regular_file(native_path)
        except FileNotFoundError:
            return LoadedIndex(key, version, None, f"{native_path} does not exist")
        except (OSError, UnicodeDecodeError) as e:
            return LoadedIndex(key, version, None, f"cannot read {native_path}: {e}")
    if tags_text is None and tags_path is not None:
        tags_text = read_optional(tags_path)
    try:
        index = NativeIndex.from_text(
            native_text, tags_text, native_path, tags_path=tags_path or "tags.yaml", legacy=legacy
        )
    except NativeIndexError as e:
        return LoadedIndex(
            key,
            version,
            None,
            str(e),
            getattr(e, "line", None),
            digest(native_text),
            digest(tags_text) if tags_text is not None else None,
            from_buffer,
        )
    except Exception as e:  # a bug in the index must not take the server down
        log.exception("indexing %s failed", native_path)
        return LoadedIndex(key, version, None, f"internal error while indexing: {e!r}")
    return LoadedIndex(
        key,
        version,
        index,
        None,
        None,
        digest(native_text),
        digest(tags_text) if tags_text is not None else None,
        from_buffer,
        time.perf_counter() - started,
    )


@dataclass
class DerivDocument:
    """One open derivatives.yaml and its latest analysis."""

    uri: str
    path: Path | None
    files: NativeFiles | None = None
    key: IndexKey | None = None
    analyzer: DocumentAnalyzer | None = None
    analyzer_version: int = -1  # LoadedIndex.version the analyzer was made for
    analyzer_profile: str | None = None
    analysis: DocumentAnalysis | None = None
    text: str | None = None  # the text `analysis` is of
    version: int | None = None
    lines: LineIndex | None = None
    setup: list[Diagnostic] = field(default_factory=list)  # about finding/reading native_functions.yaml
    published: object = None  # what was last published (to skip identical re-publishes)
    index_version: int = -1
    generated_shown: set[str] = field(default_factory=set)  # derivls-generated: URIs shown for it
    fragments: dict[str, object] = field(default_factory=dict)  # answer kind → raw.FragmentCache


def resolve_key(files: NativeFiles) -> IndexKey | None:
    if files.native is None:
        return None
    native = str(files.native.resolve()) if files.native.exists() else str(files.native)
    tags = (
        str(files.tags.resolve())
        if files.tags is not None and files.tags.exists()
        else (str(files.tags) if files.tags is not None else None)
    )
    return native, tags


def discover(path: Path | None, native: Path | None, tags: Path | None) -> NativeFiles:
    if path is None:
        if native is not None:
            return NativeFiles(native, tags, (native,))
        return NativeFiles(None, tags, ())
    return find_native_files(path, native, tags)


def setup_diagnostics(files: NativeFiles | None, loaded: LoadedIndex | None) -> list[Diagnostic]:
    if files is None:
        return []
    if files.native is None:
        return [warning(FIRST_LINE, "native-not-found", files.missing_message())]
    if loaded is not None and loaded.index is None and loaded.problem is not None:
        where = f" (line {loaded.problem_line})" if loaded.problem_line else ""
        return [
            error(
                FIRST_LINE,
                "native-unreadable",
                f"Cannot use {files.native}{where}: {loaded.problem}. "
                "Fix the file, or point the 'derivls.nativeFunctions' setting at another native_functions.yaml.",
            )
        ]
    return []


__all__ = [
    "FIRST_LINE",
    "DerivDocument",
    "IndexKey",
    "LoadedIndex",
    "build_analyzer",
    "build_index",
    "digest",
    "discover",
    "resolve_key",
    "setup_diagnostics",
]
