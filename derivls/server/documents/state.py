"""The server's state: native indexes (from disk or open buffers) and analysed derivatives.yaml documents.

Nothing here speaks LSP; main.py wires it to notifications and requests. Opening follows
derivls.project step by step (the CLI runs the same steps at once), so both build the same index
and the same analyzer from the same inputs.
"""

from __future__ import annotations

import hashlib
import logging
import time
from dataclasses import dataclass, field
from pathlib import Path

from derivls import project
from derivls.aten.native import NativeIndex
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.derivatives.profiles import AUTO, TORCHGEN, Profile
from derivls.diagnostics import FIRST_LINE, Diagnostic
from derivls.discovery import NativeFiles
from derivls.server.documents.positions import LineIndex

log = logging.getLogger(__name__)

# (native_functions.yaml, tags.yaml, the profile set or shown by the layout: None = by the files,
#  the torchVersion setting: None = found from the files), paths resolved
IndexKey = tuple[str, "str | None", "Profile | None", "str | None"]


def build_analyzer(loaded: LoadedIndex | None, files: NativeFiles | None) -> DocumentAnalyzer:
    """The only place the server makes an analyzer (derivls.project.make_analyzer). Entry results are
    read from the persistent cache and written back in a thread, after the diagnostics are out."""
    preset = files.preset if isinstance(files, DocFiles) else None
    return project.make_analyzer(loaded.load if loaded is not None else None, preset, save_in_background=True)


def digest(text: str) -> str:
    return hashlib.blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).hexdigest()


@dataclass
class LoadedIndex:
    """One native_functions.yaml (+ tags.yaml) indexed; `version` changes whenever it is rebuilt."""

    key: IndexKey
    version: int
    load: project.NativeLoad
    problem: str | None = None  # why there is no index
    native_digest: str | None = None
    tags_digest: str | None = None
    from_buffer: bool = False
    seconds: float = 0.0

    @property
    def index(self) -> NativeIndex | None:
        return self.load.index

    @property
    def problem_line(self) -> int | None:
        """1-based, in the native file."""
        return self.load.problem_line

    @property
    def native_path(self) -> str:
        return self.key[0]


def build_index(
    key: IndexKey, version: int, native_text: str | None, tags_text: str | None, from_buffer: bool
) -> LoadedIndex:
    """Index one native_functions.yaml (runs in a worker thread: touches no shared state)."""
    native_path, tags_path, preset, torch_version = key
    started = time.perf_counter()
    try:
        texts = project.read_texts(native_path, tags_path, native_text, tags_text)
        load = project.index_native(native_path, tags_path, preset, texts, torch_version)
    except Exception as e:  # a bug in the index must not take the server down
        log.exception("indexing %s failed", native_path)
        failed = project.NativeLoad(preset or TORCHGEN, None, f"internal error while indexing: {e!r}")
        return LoadedIndex(key, version, failed, failed.problem)
    return LoadedIndex(
        key,
        version,
        load,
        load.problem,
        digest(texts.native) if texts.native is not None else None,
        digest(texts.tags) if texts.tags is not None else None,
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
    analyzer_profile: str | None = None  # the profile setting the analyzer was made for
    analysis: DocumentAnalysis | None = None
    text: str | None = None  # the text `analysis` is of
    version: int | None = None
    lines: LineIndex | None = None
    setup: list[Diagnostic] = field(default_factory=list)  # about finding/reading native_functions.yaml
    index_version: int = -1
    generated_shown: set[str] = field(default_factory=set)  # derivls-generated: URIs shown for it
    fragments: dict[str, object] = field(default_factory=dict)  # answer kind → raw.FragmentCache
    settled: bool = False  # its first analysis is out and the heap was frozen after it (pipeline.py)


@dataclass(frozen=True, slots=True)
class DocFiles(NativeFiles):
    """A document's native files, the profile set or shown by its layout (None: the files decide), and
    the torchVersion setting (None: the release is found from the files)."""

    preset: Profile | None = None
    torch_version: str | None = None


def resolve_key(files: NativeFiles) -> IndexKey | None:
    if files.native is None:
        return None
    native = str(files.native.resolve()) if files.native.exists() else str(files.native)
    tags = (
        str(files.tags.resolve())
        if files.tags is not None and files.tags.exists()
        else (str(files.tags) if files.tags is not None else None)
    )
    if isinstance(files, DocFiles):
        return native, tags, files.preset, files.torch_version
    return native, tags, None, None


def discover(
    path: Path | None, native: Path | None, tags: Path | None, profile: str = AUTO, torch_version: str | None = None
) -> DocFiles:
    """derivls.project's first two steps for a document: its native files and its preset profile
    (and the release set by the torchVersion setting, which index_native applies)."""
    files = project.locate(path, native, tags)
    return DocFiles(files.native, files.tags, files.tried, project.preset_profile(profile, path), torch_version)


def setup_diagnostics(files: NativeFiles | None, loaded: LoadedIndex | None) -> list[Diagnostic]:
    return project.setup_diagnostics(files, loaded.load if loaded is not None else None)


__all__ = [
    "FIRST_LINE",
    "DerivDocument",
    "DocFiles",
    "IndexKey",
    "LoadedIndex",
    "build_analyzer",
    "build_index",
    "digest",
    "discover",
    "resolve_key",
    "setup_diagnostics",
]
