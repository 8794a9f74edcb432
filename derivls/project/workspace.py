"""The workspace: native indexes shared by derivatives.yaml files, and each file's analyzer kept up to date.

LSP-free, in the manner of rust-analyzer's AnalysisHost: the server holds one `Workspace`, tells it
what changed (settings, indexes) and asks it for analyses. It follows derivls.project.opener step by step
(the CLI runs the same steps at once in `open_project`), so both build the same index and the same
analyzer from the same inputs:

- `Options`: the settings that choose the inputs (nativeFunctions, tags, profile, torchVersion);
- `locate(source)`: a file's native_functions.yaml / tags.yaml and its preset profile (steps 1-2),
  and the key of the index it reads;
- `build_index(...)`: one native_functions.yaml indexed (step 3; a worker thread: no shared state);
  `add_index` / `forget_all` / `forget_reading` keep the table. Every index gets a version
  (`next_version`) that changes whenever it is rebuilt;
- `analyse(source, text)`: the analysis of a file's text. The analyzer and the set-up problems
  (step 4) are made again here, and only here, when the file's index version or the profile changed.
"""

from __future__ import annotations

import hashlib
import logging
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.base.diagnostics import Diagnostic
from derivls.base.discovery import NativeFiles
from derivls.base.gcpolicy import mark_replaced, paused_gc
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer, TextEdit
from derivls.derivatives.profiles import AUTO, TORCHGEN, Profile
from derivls.project import opener as project

log = logging.getLogger("derivls.project.workspace")

# (native_functions.yaml, tags.yaml, the profile set or shown by the layout: None = by the files,
#  the torchVersion setting: None = found from the files), paths resolved
IndexKey = tuple[str, "str | None", "Profile | None", "str | None"]


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
    """derivls.project.opener's first two steps for a document: its native files and its preset profile
    (and the release set by the torchVersion setting, which index_native applies)."""
    files = project.locate(path, native, tags)
    return DocFiles(files.native, files.tags, files.tried, project.preset_profile(profile, path), torch_version)


def make_analyzer(loaded: LoadedIndex | None, files: NativeFiles | None) -> DocumentAnalyzer:
    """An analyzer against `loaded` (derivls.project.opener.make_analyzer). Entry results are read from the
    persistent cache and written back in a thread, after the diagnostics are out."""
    preset = files.preset if isinstance(files, DocFiles) else None
    return project.make_analyzer(loaded.load if loaded is not None else None, preset, save_in_background=True)


@dataclass(frozen=True, slots=True)
class Options:
    """The settings that choose a file's inputs and rules."""

    native_functions: Path | None = None
    tags: Path | None = None
    profile: str = AUTO
    torch_version: str | None = None


@dataclass(kw_only=True, eq=False)
class Source:
    """One derivatives.yaml as the workspace sees it: where its native files are, the analyzer made for
    them, and its latest analysis. The server's documents extend it with what an editor needs."""

    path: Path | None = None
    files: NativeFiles | None = None
    key: IndexKey | None = None
    analyzer: DocumentAnalyzer | None = None
    analyzer_profile: str | None = None  # the profile setting the analyzer was made for
    index_version: int = -1  # the version of the index the analyzer was made for
    setup: list[Diagnostic] = field(default_factory=list)  # about finding/reading native_functions.yaml
    analysis: DocumentAnalysis | None = None
    text: str | None = None  # the text `analysis` is of


class Workspace:
    """The native indexes in use and the analyzers of the files that read them (no LSP)."""

    def __init__(self, options: Options | None = None) -> None:
        self.options = options or Options()
        self.indexes: dict[IndexKey, LoadedIndex] = {}
        self.analyses = 0  # analyses of sources run (tests and the bench read it through derivls/status)
        self._versions = 0

    # -- settings ---------------------------------------------------------------------------------------

    def configure(self, options: Options) -> bool:
        """New settings. When the rules changed (profile or torchVersion) every index is dropped: files
        wait for fresh ones. Whether they changed."""
        old = self.options
        self.options = options
        if (options.profile, options.torch_version) == (old.profile, old.torch_version):
            return False
        self.forget_all()
        return True

    def locate(self, source: Source) -> None:
        """Find the file's native_functions.yaml / tags.yaml again (after a settings or file change)."""
        source.files = self.files_of(source.path)
        source.key = resolve_key(source.files)
        source.analyzer = None  # re-made against the (possibly different) index

    def files_of(self, path: Path | None) -> DocFiles:
        o = self.options
        return discover(path, o.native_functions, o.tags, o.profile, o.torch_version)

    def key_of(self, files: NativeFiles) -> IndexKey | None:
        """The key of the index `files` read (None: no native_functions.yaml)."""
        return resolve_key(files)

    # -- indexes ----------------------------------------------------------------------------------------

    def next_version(self) -> int:
        """The version of an index about to be built."""
        self._versions += 1
        return self._versions

    def index(self, key: IndexKey | None) -> LoadedIndex | None:
        return self.indexes.get(key) if key is not None else None

    def add_index(self, loaded: LoadedIndex, replaces: bool = False) -> None:
        """`loaded` is the index of its key from now on (`replaces`: a frozen one it replaces may be garbage)."""
        self.indexes[loaded.key] = loaded
        if replaces:
            mark_replaced()

    def forget_all(self) -> None:
        self.indexes.clear()
        mark_replaced()

    def forget_reading(self, path: str) -> None:
        """Drop the indexes that read `path` (its file changed on disk): their files wait for fresh ones."""
        for key in [k for k in self.indexes if path in k]:
            del self.indexes[key]
            mark_replaced()

    def waiting(self, source: Source) -> bool:
        """The file's index is not loaded yet."""
        return source.key is not None and source.key not in self.indexes

    # -- analyses ---------------------------------------------------------------------------------------

    def is_current(self, source: Source, text: str) -> bool:
        """`source.analysis` is of `text`, by the analyzer of the file's index and the profile in use."""
        return not self._stale(source) and source.text is not None and text == source.text

    def analyse(
        self, source: Source, text: str, edits_since: Callable[[str | None], Sequence[TextEdit] | None] | None = None
    ) -> DocumentAnalysis | None:
        """Analyse `text` as the file's newest text (None: its index is still loading). `edits_since(old)`:
        the edits from the text last analysed (`old`, None: none) to `text`, if known (the analyzer
        then splits only what they touch)."""
        if self.waiting(source):
            return None
        if self._stale(source):
            loaded = self.index(source.key)
            preset = source.files.preset if isinstance(source.files, DocFiles) else None
            load = loaded.load if loaded is not None else None
            # the one call into derivls.project.opener for a file's analyzer and its set-up problems
            source.analyzer, source.setup = project.prepare(source.files, load, preset, save_in_background=True)
            source.index_version = loaded.version if loaded is not None else 0
            source.analyzer_profile = self.options.profile
            source.text = None
        assert source.analyzer is not None
        edits = edits_since(source.text) if edits_since is not None else None
        with paused_gc():  # cold: hundreds of thousands of new objects; warm: the keystroke path
            source.analysis = source.analyzer.analyse(text, edits)
        self.analyses += 1
        source.text = text
        return source.analysis

    def analyse_file(self, files: NativeFiles, loaded: LoadedIndex, text: str) -> DocumentAnalysis:
        """The analysis of a file no one edits (a fresh analyzer, not counted in `analyses`)."""
        return make_analyzer(loaded, files).analyse(text)

    def _stale(self, source: Source) -> bool:
        loaded = self.index(source.key)
        index_version = loaded.version if loaded is not None else 0
        return (
            source.analyzer is None
            or source.index_version != index_version
            or source.analyzer_profile != self.options.profile
        )


__all__ = [
    "DocFiles",
    "IndexKey",
    "LoadedIndex",
    "Options",
    "Source",
    "Workspace",
    "build_index",
    "digest",
    "discover",
    "make_analyzer",
    "resolve_key",
]
