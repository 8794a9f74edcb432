"""The one opener: a derivatives.yaml + settings → Profile, NativeIndex, analyzer and set-up diagnostics.

`derivls check`, `dump`, `codegen` and the server all open their inputs here, so they cannot
disagree. The steps, in order (the server runs them one by one: it indexes in a worker thread,
shares one index between documents and indexes open buffers; the CLI calls `open_project`):

1. `locate`: where native_functions.yaml and tags.yaml are (derivls.base.discovery);
2. `preset_profile`: the profile set, or shown by the layout (None: native_functions.yaml decides);
3. `read_texts` + `index_native`: the texts (open-buffer overlays win over the files), the profile
   (profiles.detect), and the index read by that profile's grammar;
4. `setup_diagnostics` and `make_analyzer` (both at once: `prepare`).
"""

from __future__ import annotations

from pathlib import Path

from derivls.aten.native import NativeIndex, NativeIndexError
from derivls.base.diagnostics import FIRST_LINE, Diagnostic, error, warning
from derivls.base.discovery import NativeFiles, find_native_files
from derivls.base.diskcache import DiskCache, content_key
from derivls.base.exits import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, UsageError  # light, for the CLI's fast path
from derivls.base.frozen import frozen_dataclass
from derivls.base.limits import FileRefused, read_regular_file
from derivls.codes.setup import NATIVE_FUNCTIONS_LEFT_OUT, NATIVE_NOT_FOUND, NATIVE_UNREADABLE
from derivls.derivatives import profiles
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.derivatives.profiles import AUTO, Profile
from derivls.derivatives.releases import NEWEST, Detected, detect, parse_version

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.entrycache import EntryCache


def locate(derivatives: Path | None, native: Path | None = None, tags: Path | None = None) -> NativeFiles:
    """native_functions.yaml and tags.yaml for `derivatives`: the given paths, else found by the layout."""
    return find_native_files(derivatives, native, tags)


def preset_profile(requested: str, derivatives: Path | None) -> Profile | None:
    """The profile set (`requested` other than auto) or shown by the layout; None: the native files decide."""
    return profiles.choose_before_reading(requested, derivatives)


@frozen_dataclass(slots=True)
class NativeTexts:
    native: str | None  # None: unreadable (see problem)
    tags: str | None
    problem: str | None = None  # why one of them cannot be read (then nothing is indexed)
    problem_path: str | None = None  # the file it is about (None: native_functions.yaml)


def read_texts(
    native_path: str, tags_path: str | None, native_text: str | None = None, tags_text: str | None = None
) -> NativeTexts:
    """The texts to index: the given ones (open buffers) or the files. An unreadable tags.yaml is a problem,
    as for torchgen (which reads it first): nothing is indexed."""
    if native_text is None:
        try:
            native_text = read_regular_file(native_path, "native_functions.yaml")
        except FileNotFoundError:
            return NativeTexts(None, None, f"{native_path} does not exist")
        except (OSError, UnicodeDecodeError) as e:
            return NativeTexts(None, None, f"cannot read {native_path}: {e}")
    if tags_text is None and tags_path is not None:
        try:
            tags_text = read_regular_file(tags_path, "tags.yaml")
        except FileNotFoundError:
            tags_text = None  # gone since it was found: as if there were none
        except (OSError, UnicodeDecodeError) as e:
            return NativeTexts(native_text, None, f"cannot read it: {e}", tags_path)
    return NativeTexts(native_text, tags_text)


@frozen_dataclass(slots=True)
class NativeLoad:
    """native_functions.yaml (+ tags.yaml) indexed by the rules of `profile`, or why it could not be."""

    profile: Profile
    index: NativeIndex | None
    problem: str | None = None
    problem_path: str | None = None
    problem_line: int | None = None  # 1-based
    release: Detected | None = None  # which PyTorch release's rules (torchgen profile), and why
    cache_key: str | None = None  # the index's key in the persistent cache (entry results are keyed by it)


def index_native(
    native_path: str,
    tags_path: str | None,
    preset: Profile | None,
    texts: NativeTexts,
    torch_version: str | None = None,
    derivatives: Path | None = None,
    cache: DiskCache | None = None,
) -> NativeLoad:
    """Choose the profile (the preset, else by the texts) and, for torchgen, the release; index the texts
    by their grammar. Raises ValueError for a `torch_version` that is not a version."""
    profile = preset or profiles.choose_from_native(texts.native, texts.tags is not None)
    release = None
    native_rules = NEWEST.native
    if not profile.native_2021_grammar:
        release = detect(torch_version, derivatives, Path(native_path), texts.native)
        native_rules = release.rules.native
        profile = profiles.TorchgenProfile(release.rules.family, release.reason)
    if texts.native is None or texts.problem is not None:
        problem = texts.problem or f"cannot read {native_path}"
        return NativeLoad(profile, None, problem, texts.problem_path or native_path, release=release)
    key = content_key(
        "native-index",
        texts.native,
        texts.tags,
        native_path,
        tags_path,
        str(profile.native_2021_grammar),
        native_rules.label,
    )
    cache = cache if cache is not None else default_cache()
    index = cache.get(key)
    if isinstance(index, NativeIndex):
        index.rules = native_rules  # the rules of this process (releases.rules_of compares by identity)
        _persist_headers(index, cache, key)
        return NativeLoad(profile, index, release=release, cache_key=key)
    try:
        index = NativeIndex.from_text(
            texts.native,
            texts.tags,
            native_path,
            tags_path=tags_path or "tags.yaml",
            legacy=profile.native_2021_grammar,
            rules=native_rules,
        )
    except NativeIndexError as e:
        return NativeLoad(profile, None, e.message, e.path, e.line, release)
    cache.put(key, index)
    _persist_headers(index, cache, key)
    return NativeLoad(profile, index, release=release, cache_key=key)


def _persist_headers(index: NativeIndex, cache: DiskCache, key: str) -> None:
    """The header index of `index`'s formula checks is kept in the same cache (formulas/headers.py)."""
    if cache.enabled:
        from derivls.derivatives.formulas.headercache import persist_with

        persist_with(index, cache, key)


_default_cache: DiskCache | None = None


def default_cache() -> DiskCache:
    """The user's persistent cache of native indexes (derivls.base.diskcache); `DERIVLS_NO_CACHE=1` turns it off."""
    global _default_cache
    if _default_cache is None:
        _default_cache = DiskCache()
    return _default_cache


def disable_cache() -> None:
    """`--no-cache`: neither read nor write the persistent cache in this process."""
    global _default_cache
    _default_cache = DiskCache(enabled=False)


def left_out_warning(index: NativeIndex) -> Diagnostic:
    """One line-1 warning naming the functions of native_functions.yaml the release rules left out."""
    shown = "\n".join(f"  {p}" for p in index.problems[:10])
    more = f"\n  … and {len(index.problems) - 10} more" if len(index.problems) > 10 else ""
    return warning(
        FIRST_LINE,
        NATIVE_FUNCTIONS_LEFT_OUT,
        f"{len(index.problems)} function(s) of native_functions.yaml use what {index.rules.label} does not know "
        f"and were left out (entries for them are not checked):\n{shown}{more}",
    )


def native_diagnostics(load: NativeLoad | None) -> dict[str, list[Diagnostic]]:
    """The diagnostics of native_functions.yaml and tags.yaml themselves (path → diagnostics): what the
    release's torchgen rejects there (derivls.aten.native_report), errors where the release is known."""
    from derivls.aten.native_report import problems_by_file, whole_file_diagnostic

    if load is None:
        return {}
    if load.index is None:
        if load.problem is None or load.problem_path is None or load.profile.native_2021_grammar:
            return {}
        return {load.problem_path: [whole_file_diagnostic(load.problem, load.problem_line)]}
    if load.index.legacy:
        return {}
    known = load.release is not None and load.release.known
    return problems_by_file(load.index.rejected, known)


def rejected_warning(index: NativeIndex, rules: str) -> Diagnostic:
    """One line-1 warning: native_functions.yaml has errors (reported on that file, at their lines)."""
    first = index.rejected[0]
    left = f"; {len(index.problems)} function(s) left out (entries for them are not checked)" if index.problems else ""
    return warning(
        FIRST_LINE,
        NATIVE_FUNCTIONS_LEFT_OUT,
        f"native_functions.yaml / tags.yaml: {len(index.rejected)} error(s) by {rules}, reported there "
        f"(first: {first.path}:{first.line}: {first.message}){left}",
    )


def setup_diagnostics(files: NativeFiles | None, load: NativeLoad | None) -> list[Diagnostic]:
    """What keeps schemas from being resolved (native_functions.yaml not found, or not usable), and the
    one notice when the C++ sources formula names are checked against (FunctionsManual.h, …) are missing."""
    found = _native_setup(files, load)
    if files is not None and load is not None and load.index is not None and load.profile.codegen_stage_checks:
        from derivls.derivatives.formulas.entry_formulas import workspace_diagnostics

        found += workspace_diagnostics(load.index, load.index.path)  # formula-sources-missing
    return found


def _native_setup(files: NativeFiles | None, load: NativeLoad | None) -> list[Diagnostic]:
    if files is None:
        return []
    if files.native is None:
        return [warning(FIRST_LINE, NATIVE_NOT_FOUND, files.missing_message())]
    if load is not None and load.index is not None and load.index.rejected and load.release and load.release.known:
        return [rejected_warning(load.index, load.release.describe())]
    if load is not None and load.index is not None and load.index.problems:
        return [left_out_warning(load.index)]
    if load is None or load.index is not None or load.problem is None:
        return []
    where = load.problem_path or str(files.native)
    if load.problem_line is not None:
        where += f":{load.problem_line}"
    if files.tags is not None and load.problem_path == str(files.tags):
        option, setting, what = "--tags", "derivls.tags", "tags.yaml"
    else:
        option, setting, what = "--native", "derivls.nativeFunctions", "native_functions.yaml"
    return [
        error(
            FIRST_LINE,
            NATIVE_UNREADABLE,
            f"Cannot use {where}: {load.problem}. Fix the file, or point {option} (CLI) or the "
            f"'{setting}' setting (editor) at another {what}.",
        )
    ]


def make_analyzer(
    load: NativeLoad | None, preset: Profile | None, *, save_in_background: bool = False
) -> DocumentAnalyzer:
    """The analyzer of a derivatives.yaml: its index (if any) and the profile chosen with it, and the
    persistent cache of entry results for them (`save_in_background`: the server's, written in a
    thread a moment after a full pass; the CLI's at once)."""
    if load is None:
        return DocumentAnalyzer(None, None, preset or profiles.choose_from_native(None, False))
    native_path = load.index.path if load.index is not None else None
    return DocumentAnalyzer(load.index, native_path, load.profile, entry_cache(load, save_in_background))


def prepare(
    files: NativeFiles | None, load: NativeLoad | None, preset: Profile | None, *, save_in_background: bool = False
) -> tuple[DocumentAnalyzer, list[Diagnostic]]:
    """Step 4: the analyzer of a derivatives.yaml (`make_analyzer`) and its set-up diagnostics."""
    return make_analyzer(load, preset, save_in_background=save_in_background), setup_diagnostics(files, load)


def entry_cache(load: NativeLoad, background: bool = False) -> EntryCache | None:
    """The persistent entry-result cache of an analyzer of `load` (None: no index, or the cache is off)."""
    cache = default_cache()
    if load.index is None or load.cache_key is None or not cache.enabled:
        return None
    from derivls.derivatives.entrycache import EntryCache

    return EntryCache(cache, load.cache_key, load.index, load.index.path, load.profile, background=background)


@frozen_dataclass(slots=True)
class Project:
    """An opened derivatives.yaml: everything `check`, `dump` and `codegen` need."""

    path: Path
    files: NativeFiles
    profile: Profile
    index: NativeIndex | None
    analyzer: DocumentAnalyzer
    setup: tuple[Diagnostic, ...]  # native-not-found, native-unreadable, native-functions-left-out
    release: Detected | None = None  # the PyTorch release whose rules apply (torchgen profile), and why
    # the diagnostics of native_functions.yaml / tags.yaml themselves: ((path, diagnostics), ...)
    native: tuple[tuple[str, tuple[Diagnostic, ...]], ...] = ()


def open_project(
    derivatives: Path,
    native: Path | None = None,
    tags: Path | None = None,
    profile: str = AUTO,
    *,
    native_text: str | None = None,
    tags_text: str | None = None,
    torch_version: str | None = None,
) -> Project:
    """Open `derivatives` with its native index, by the rules of `profile` (and of the release
    `torch_version`, else the one found). Raises UsageError for a path given that does not exist."""
    if torch_version and torch_version != AUTO and parse_version(torch_version) is None:
        raise UsageError(f"'{torch_version}' is not a torch version (expected e.g. 2.4 or 2.4.1)")
    for given, what in ((native, "native_functions.yaml"), (tags, "tags.yaml")):
        if native_text is None:
            given_file(given, what)
    files = locate(derivatives, native, tags)
    preset = preset_profile(profile, derivatives)
    load = None
    if files.native is not None:
        tags_path = str(files.tags) if files.tags is not None else None
        texts = read_texts(str(files.native), tags_path, native_text, tags_text)
        try:
            load = index_native(str(files.native), tags_path, preset, texts, torch_version, derivatives)
        except ValueError as e:  # --torch-version that is not a version
            raise UsageError(str(e)) from None
    analyzer, found = prepare(files, load, preset)
    setup = tuple(found)
    release = load.release if load is not None else None
    native_found = tuple((path, tuple(ds)) for path, ds in native_diagnostics(load).items())
    return Project(derivatives, files, analyzer.profile, analyzer.index, analyzer, setup, release, native_found)


def check_native(
    native: Path, tags: Path | None = None, torch_version: str | None = None
) -> tuple[dict[str, list[Diagnostic]], Detected | None]:
    """`derivls check native_functions.yaml` without a derivatives.yaml: the file (and its tags.yaml) judged by
    the release's torchgen rules. Raises UsageError for a path that does not exist."""
    for given, what in ((native, "native_functions.yaml"), (tags, "tags.yaml")):
        if given is not None and not given.is_file():
            raise UsageError(f"{what} not found: {given}")
    if tags is None and native.with_name("tags.yaml").is_file():
        tags = native.with_name("tags.yaml")
    tags_path = str(tags) if tags is not None else None
    texts = read_texts(str(native), tags_path)
    try:
        load = index_native(str(native), tags_path, None, texts, torch_version)
    except ValueError as e:  # --torch-version that is not a version
        raise UsageError(str(e)) from None
    found = native_diagnostics(load)
    if load.index is None and not found and load.problem:
        from derivls.aten.native_report import whole_file_diagnostic

        found = {str(native): [whole_file_diagnostic(load.problem, load.problem_line)]}
    return found, load.release


def given_file(given: Path | None, what: str) -> None:
    """A file named by an option (--native, --tags) exists and is a file. Raises UsageError."""
    if given is None or given.is_file():
        return
    if given.is_dir():
        raise UsageError(f"{what} {given} is a folder, not a file")
    raise UsageError(f"{what} not found: {given}")


def read_text(path: Path, what: str) -> str:
    """A file the user named, or UsageError saying why it cannot be read."""
    try:
        return read_regular_file(path, what)  # regular files only, size-capped
    except FileRefused as e:
        raise UsageError(str(e)) from None
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} is a directory, not a file: {path}") from None
    except UnicodeDecodeError as e:
        raise UsageError(f"{what} {path} is not UTF-8 text (byte {e.start + 1} is {e.object[e.start]:#04x})") from None
    except OSError as e:
        raise UsageError(f"cannot read {what} {path}: {e.strerror or e}") from None


__all__ = [
    "EXIT_ERRORS",
    "EXIT_OK",
    "EXIT_USAGE",
    "NativeLoad",
    "NativeTexts",
    "Project",
    "UsageError",
    "check_native",
    "entry_cache",
    "given_file",
    "index_native",
    "left_out_warning",
    "locate",
    "make_analyzer",
    "native_diagnostics",
    "open_project",
    "prepare",
    "preset_profile",
    "read_text",
    "read_texts",
    "setup_diagnostics",
]
