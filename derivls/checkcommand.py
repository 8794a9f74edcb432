"""`derivls check [PATH ... | @FILE] [--format text|json|github|lintrunner] [--since REF] [--torch-include DIR]
[--compile ...]`: which files, checked (from the whole-result cache when the inputs are unchanged), filtered to
the changed entries, written in the format asked, and the exit status.

Heavy imports (the ATen model and the loader) happen only when a file is analysed: a check of unchanged
inputs is answered from the whole-result cache (derivls.resultcache) without importing the loader at all.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from derivls.diagnostics import Severity
from derivls.exits import EXIT_ERRORS, EXIT_OK, UsageError
from derivls.report import CheckedFile, write_diagnostics

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import TextIO

    from derivls.resultcache import CachedCheck


@contextmanager
def torch_include(folder: str | None) -> Iterator[None]:
    """`--torch-include DIR` without --compile: where the formula checks find what the layout lacks
    (FunctionsManual.h, the Tensor headers; $DERIVLS_TORCH_INCLUDE for the duration). Raises UsageError."""
    if folder is None:
        yield
        return
    if not os.path.isdir(folder):
        raise UsageError(f"--torch-include {folder} is not a folder")
    name = "DERIVLS_TORCH_INCLUDE"  # derivls.derivatives.formulas.sources.TORCH_INCLUDE (not imported here)
    before = os.environ.get(name)
    os.environ[name] = os.path.abspath(folder)
    try:
        yield
    finally:
        if before is None:
            os.environ.pop(name, None)
        else:
            os.environ[name] = before


def check_targets(args: argparse.Namespace) -> list[Path]:
    """The derivatives.yaml files to check: the PATHs (a native_functions.yaml stands for the
    derivatives.yaml of its tree), else the one found. Raises UsageError."""
    from derivls.discovery import derivatives_for_native, find_default_derivatives

    paths: list[Path] = []
    seen: set[str] = set()
    for path in args.paths:
        targets = derivatives_for_native(path) if path.name == "native_functions.yaml" else [path]
        if not targets:  # a native_functions.yaml alone: that file is checked (check_paths)
            targets = [path]
        for target in targets:
            if os.path.abspath(target) not in seen:  # a derivatives.yaml and its native_functions.yaml: once
                seen.add(os.path.abspath(target))
                paths.append(target)
    if not paths:
        found, tried = find_default_derivatives()
        if found is None:
            from derivls.discovery import nothing_found_message

            raise UsageError(nothing_found_message(tried))
        paths = [found]
    return paths


def write_results(args: argparse.Namespace, results: list[CheckedFile], out: TextIO) -> None:
    """`check`'s report in `--format` (shared by `check --compile`)."""
    if args.format == "lintrunner":
        from derivls.lintmessages import write_lint_messages

        write_lint_messages(results, out, _read_or_none)
    else:
        write_diagnostics(results, args.format, out)


def _read_or_none(path: Path) -> str | None:
    from derivls.project import read_text

    try:
        return read_text(path, "derivatives.yaml")
    except UsageError:
        return None


def since_filtered(ref: str, checked: CheckedFile) -> CheckedFile:
    """`checked` with only the diagnostics of the entries changed since git revision `ref`."""
    from dataclasses import replace

    from derivls.project import read_text
    from derivls.since import changed_since

    changed = changed_since(ref, checked.path, read_text(checked.path, "derivatives.yaml"))
    return replace(checked, diagnostics=changed.filter(checked.diagnostics))


def exit_status(args: argparse.Namespace, results: list[CheckedFile]) -> int:
    """1 if any error, else 0; always 0 for lintrunner (its protocol: it judges the messages)."""
    if args.format == "lintrunner":
        return EXIT_OK
    has_errors = any(d.severity == Severity.ERROR for r in results for d in r.diagnostics)
    return EXIT_ERRORS if has_errors else EXIT_OK


def run_check(args: argparse.Namespace, out: TextIO) -> int:
    paths = check_targets(args)
    from derivls import writebehind

    with torch_include(args.torch_include), writebehind.deferring():  # the caches: written after, by a child
        results = native_results(check_paths(args, paths))
        if args.since is not None:
            results = [r if r.path.name in _NATIVE_NAMES else since_filtered(args.since, r) for r in results]
        write_results(args, results, out)
        out.flush()
        writebehind.finish()
    return exit_status(args, results)


def check_paths(args: argparse.Namespace, paths: list[Path]) -> list[tuple[Path, CachedCheck]]:
    """Each path's diagnostics and rules: from the whole-result cache when its inputs are unchanged
    (derivls.resultcache), else analysed (and stored, when no input changed while it was analysed); in
    a daemon (`args.resident`), by the projects it keeps open (derivls.daemon.projects)."""
    from derivls import resultcache
    from derivls.diskcache import DiskCache

    options = (args.native, args.tags, args.profile, args.torch_version)
    resident = getattr(args, "resident", None)  # a daemon's open projects (derivls.daemon.projects.Projects)
    if resident is not None:  # its memory is the cache: the edited entries alone are analysed
        return [(path, resident.check(path, *options)) for path in paths]
    cache = DiskCache(enabled=not getattr(args, "no_cache", False))
    found = []
    for path in paths:
        if path.name == "native_functions.yaml":  # alone (no derivatives.yaml beside it): the file itself
            found.append((path, _check_native_file(path, args)))
            continue
        key = resultcache.check_key(path, *options) if cache.enabled else None
        value = resultcache.load(cache, key)
        if value is None:
            from derivls.report import analyse_path_with_native

            analysis, extra, rules, native = analyse_path_with_native(path, *options)
            diagnostics = tuple(extra) + (analysis.diagnostics if analysis is not None else ())
            value = resultcache.CachedCheck(diagnostics, rules.describe() if rules is not None else None, native)
            if key is not None and resultcache.check_key(path, *options) == key:
                resultcache.store(cache, key, value)
        found.append((path, value))
    return found


_NATIVE_NAMES = ("native_functions.yaml", "tags.yaml")


def _check_native_file(path: Path, args: argparse.Namespace) -> CachedCheck:
    """A native_functions.yaml checked alone: its diagnostics (and its tags.yaml's, as `native`)."""
    from derivls.project import check_native
    from derivls.resultcache import CachedCheck

    found, release = check_native(path, args.tags, args.torch_version)
    mine = tuple(found.pop(str(path), ()))
    return CachedCheck(
        mine, release.describe() if release is not None else None, tuple((p, tuple(ds)) for p, ds in found.items())
    )


def native_results(checked: list[tuple[Path, CachedCheck]]) -> list[CheckedFile]:
    """Each checked file, preceded by its native_functions.yaml / tags.yaml when they have diagnostics (once)."""
    results: list[CheckedFile] = []
    seen: set[str] = set()
    for path, value in checked:
        for native_path, diagnostics in getattr(value, "native", ()):
            if diagnostics and native_path not in seen:
                seen.add(native_path)
                results.append(CheckedFile(Path(native_path), diagnostics))
        results.append(CheckedFile(path, value.diagnostics, value.rules))
    return results


def run_check_compile(args: argparse.Namespace, out: TextIO) -> int:
    """`check --compile`: derivls.compile.cli's run, written in `--format` (lintrunner's included)."""
    from derivls.compile.cli import run_compile

    with torch_include(args.torch_include):
        code = run_compile(args, out, write=lambda results: write_results(args, results, out))
    return EXIT_OK if args.format == "lintrunner" else code


__all__ = ["check_paths", "check_targets", "run_check", "run_check_compile", "torch_include", "write_results"]
