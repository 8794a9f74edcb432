"""Open a derivatives.yaml with the native_functions.yaml that goes with it (the CLI's one-shot path)."""

from __future__ import annotations

from pathlib import Path

from derivls.aten.native import NativeIndex, NativeIndexError
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.derivatives.profiles import profile_from_layout, resolve_profile
from derivls.diagnostics import Diagnostic, Span, error, warning
from derivls.discovery import find_native_files
from derivls.limits import FileRefused, read_regular_file

FIRST_LINE = Span(0, 0, 0, 1)


class UsageError(Exception):
    """A problem with what the user asked for (a missing file, …): one line, exit status 2."""


def read_text(path: Path, what: str) -> str:
    try:
        return read_regular_file(path, what)  # regular files only, size-capped
    except FileRefused as e:
        raise UsageError(str(e)) from None
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} is a directory, not a file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {what} {path}: {e}") from None


def load_index(native: Path, tags: Path | None, legacy: bool | None = None) -> NativeIndex:
    """legacy=None: 2021 grammar and no generated functions iff there is no tags.yaml."""
    return NativeIndex.load(str(native), str(tags) if tags is not None else None, legacy=legacy)


def open_workspace_files(
    path: Path, native: Path | None, tags: Path | None, profile: str = "auto"
) -> tuple[DocumentAnalysis, list[Diagnostic]]:
    text = read_text(path, "derivatives.yaml")
    if native is not None and not native.is_file():
        raise UsageError(f"native_functions.yaml not found: {native}")
    if tags is not None and not tags.is_file():
        raise UsageError(f"tags.yaml not found: {tags}")
    files = find_native_files(path, native, tags)
    extra: list[Diagnostic] = []
    index: NativeIndex | None = None
    if files.native is None:
        extra.append(warning(FIRST_LINE, "native-not-found", files.missing_message()))
    else:
        try:
            # the legacy profile reads native_functions.yaml as 2021 torchgen did, tags.yaml or not
            legacy = profile == "legacy" or (profile == "auto" and profile_from_layout(path) == "legacy")
            index = load_index(files.native, files.tags, True if legacy else None)
        except NativeIndexError as e:
            extra.append(error(FIRST_LINE, "native-unreadable", f"Cannot use {files.native}: {e}"))
    chosen = resolve_profile(profile, path, index)
    analyzer = DocumentAnalyzer(index, str(files.native) if files.native else None, chosen)
    return analyzer.analyse(text), extra
