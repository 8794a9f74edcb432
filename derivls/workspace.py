"""Open a derivatives.yaml with the native_functions.yaml that goes with it (the CLI's one-shot path)."""

from __future__ import annotations

from pathlib import Path

from derivls.aten.native import NativeIndex, NativeIndexError
from derivls.derivatives.loader import DocumentAnalysis, DocumentAnalyzer
from derivls.derivatives.profiles import profile_from_layout, resolve_profile
from derivls.derivatives.releases import Detected, detect
from derivls.diagnostics import Diagnostic, Span, error, warning
from derivls.discovery import find_native_files

FIRST_LINE = Span(0, 0, 0, 1)


class UsageError(Exception):
    """A problem with what the user asked for (a missing file, …): one line, exit status 2."""


def read_text(path: Path, what: str) -> str:
    try:
        return path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise UsageError(f"{what} not found: {path}") from None
    except IsADirectoryError:
        raise UsageError(f"{what} is a directory, not a file: {path}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise UsageError(f"cannot read {what} {path}: {e}") from None


def load_index(
    native: Path, tags: Path | None, legacy: bool | None = None, rules: Detected | None = None
) -> NativeIndex:
    """legacy=None: 2021 grammar and no generated functions iff there is no tags.yaml."""
    native_rules = (rules or detect(None, None, native)).rules.native
    return NativeIndex.load(str(native), str(tags) if tags is not None else None, legacy=legacy, rules=native_rules)


def left_out_warning(index: NativeIndex) -> Diagnostic:
    """One line-1 warning naming the functions of native_functions.yaml the release rules left out."""
    shown = "\n".join(f"  {p}" for p in index.problems[:10])
    more = f"\n  … and {len(index.problems) - 10} more" if len(index.problems) > 10 else ""
    return warning(
        FIRST_LINE,
        "native-functions-left-out",
        f"{len(index.problems)} function(s) of native_functions.yaml use what {index.rules.label} does not know "
        f"and were left out (entries for them are not checked):\n{shown}{more}",
    )


def open_workspace_files(
    path: Path, native: Path | None, tags: Path | None, profile: str = "auto"
) -> tuple[DocumentAnalysis, list[Diagnostic]]:
    analysis, extra, _ = open_workspace(path, native, tags, profile)
    return analysis, extra


def open_workspace(
    path: Path, native: Path | None, tags: Path | None, profile: str = "auto", torch_version: str | None = None
) -> tuple[DocumentAnalysis, list[Diagnostic], Detected | None]:
    """Like open_workspace_files, plus which release's rules were used and why (None: legacy profile)."""
    text = read_text(path, "derivatives.yaml")
    if native is not None and not native.is_file():
        raise UsageError(f"native_functions.yaml not found: {native}")
    if tags is not None and not tags.is_file():
        raise UsageError(f"tags.yaml not found: {tags}")
    files = find_native_files(path, native, tags)
    extra: list[Diagnostic] = []
    index: NativeIndex | None = None
    try:
        detected = detect(torch_version, path, files.native)
    except ValueError as e:
        raise UsageError(str(e)) from None
    if files.native is None:
        extra.append(warning(FIRST_LINE, "native-not-found", files.missing_message()))
    else:
        try:
            # the legacy profile reads native_functions.yaml as 2021 torchgen did, tags.yaml or not
            legacy = profile == "legacy" or (profile == "auto" and profile_from_layout(path) == "legacy")
            index = load_index(files.native, files.tags, True if legacy else None, detected)
        except NativeIndexError as e:
            extra.append(error(FIRST_LINE, "native-unreadable", f"Cannot use {files.native}: {e}"))
    if index is not None and index.problems:
        extra.append(left_out_warning(index))
    chosen = resolve_profile(profile, path, index)
    analyzer = DocumentAnalyzer(index, str(files.native) if files.native else None, chosen)
    return analyzer.analyse(text), extra, detected if chosen == "torchgen" else None
