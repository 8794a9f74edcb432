"""`derivls check [PATH ... | @FILE] [--format text|json|github|lintrunner] [--since REF] [--op NAME]
[--torch-include DIR] [--compile ...]`: which files, checked (from the whole-result cache when the inputs are unchanged), filtered to
the changed entries, written in the format asked, and the exit status.

Heavy imports (the ATen model and the loader) happen only when a file is analysed: a check of unchanged
inputs is answered from the whole-result cache (derivls.project.resultcache) without importing the loader at all.
"""

from __future__ import annotations

import argparse
import os
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from derivls.base.diagnostics import Severity
from derivls.base.exits import EXIT_ERRORS, EXIT_OK, EXIT_USAGE, UsageError
from derivls.cli.report import CheckedFile, write_diagnostics

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import TextIO

    from derivls.project.resultcache import CachedCheck


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
    from derivls.base.discovery import derivatives_for_native, find_default_derivatives

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
            from derivls.base.discovery import nothing_found_message

            raise UsageError(nothing_found_message(tried))
        paths = [found]
    return paths


def write_results(args: argparse.Namespace, results: list[CheckedFile], out: TextIO) -> None:
    """`check`'s report in `--format` (shared by `check --compile`)."""
    if args.format == "lintrunner":
        from derivls.cli.lintmessages import write_lint_messages

        write_lint_messages(results, out, _read_or_none)
    else:
        write_diagnostics(results, args.format, out)


def _read_or_none(path: Path) -> str | None:
    from derivls.project.opener import read_text

    try:
        return read_text(path, "derivatives.yaml")
    except UsageError:
        return None


def since_filtered(ref: str, checked: CheckedFile) -> CheckedFile:
    """`checked` with only the diagnostics of the entries changed since git revision `ref`."""
    from dataclasses import replace

    from derivls.project.opener import read_text
    from derivls.project.since import changed_since

    changed = changed_since(ref, checked.path, read_text(checked.path, "derivatives.yaml"))
    return replace(checked, diagnostics=changed.filter(checked.diagnostics))


def op_filtered(args: argparse.Namespace, results: list[CheckedFile]) -> list[CheckedFile]:
    """`check --op NAME`: the results with only the diagnostics of the entries named (a node, a function with its
    overload or without, as `codegen`, `check --compile` and `gradcheck` take it), and those about the set-up or
    outside every entry. An entry whose schema is not found is known by its `name:`. Raises UsageError when a
    NAME is no entry of any file."""
    found: set[str] = set()
    kept = [
        checked if checked.path.name in _NATIVE_NAMES else _op_filtered(args, checked, found) for checked in results
    ]
    missing = [name for name in args.op if name not in found]
    if missing:
        names = ", ".join(missing)
        derivatives = [r.path for r in results if r.path.name not in _NATIVE_NAMES]
        if len(derivatives) == 1:
            raise UsageError(f"{derivatives[0]} has no autograd node or function named {names}")
        raise UsageError(f"none of the files has an autograd node or function named {names}")
    return kept


def _op_filtered(args: argparse.Namespace, checked: CheckedFile, found: set[str]) -> CheckedFile:
    from dataclasses import replace

    from derivls.cli.codegen import op_names
    from derivls.project.analyse import analyse_path
    from derivls.project.opener import read_text
    from derivls.project.since import Changed, changed_entries

    analysis, _ = analyse_path(checked.path, args.native, args.tags, args.profile, args.torch_version)
    wanted = set(args.op)
    first_lines = set()
    for placed in analysis.entries if analysis is not None else ():
        names = {n for _, info in placed.infos() for n in op_names(info)}
        names |= {node for _, node in placed.ops if node}
        name = placed.entry.name
        if name is not None and isinstance(name.value, str):  # `mul.Tensor(Tensor self, ...)`
            function = name.value.split("(")[0].strip()
            names |= {function, function.split(".")[0]}
        if names & wanted:
            first_lines.add(placed.line)
            found |= names & wanted
    every = changed_entries(read_text(checked.path, "derivatives.yaml"), None).entries
    kept = Changed(tuple(lines for lines in every if lines[0] in first_lines), every)
    return replace(checked, diagnostics=kept.filter(checked.diagnostics))


def exit_status(args: argparse.Namespace, results: list[CheckedFile]) -> int:
    """1 if any error, else 0; always 0 for lintrunner (its protocol: it judges the messages)."""
    if args.format == "lintrunner":
        return EXIT_OK
    has_errors = any(d.severity == Severity.ERROR for r in results for d in r.diagnostics)
    return EXIT_ERRORS if has_errors else EXIT_OK


def run_check(args: argparse.Namespace, out: TextIO) -> int:
    paths = check_targets(args)
    from derivls.base import writebehind

    with torch_include(args.torch_include), writebehind.deferring():  # the caches: written after, by a child
        results = native_results(check_paths(args, paths))
        if args.since is not None:
            results = [r if r.path.name in _NATIVE_NAMES else since_filtered(args.since, r) for r in results]
        if args.op:
            results = op_filtered(args, results)
        write_results(args, results, out)
        out.flush()
        writebehind.finish()
    return exit_status(args, results)


def check_paths(args: argparse.Namespace, paths: list[Path]) -> list[tuple[Path, CachedCheck]]:
    """Each path's diagnostics and rules: from the whole-result cache when its inputs are unchanged
    (derivls.project.resultcache), else analysed (and stored, when no input changed while it was analysed); in
    a daemon (`args.resident`), by the projects it keeps open (derivls.daemon.projects)."""
    from derivls.base.diskcache import DiskCache
    from derivls.project import resultcache

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
            from derivls.project.analyse import analyse_path_with_native

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
    from derivls.project.opener import check_native
    from derivls.project.resultcache import CachedCheck

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
    """`check --compile`: derivls.cli.compile's run, written in `--format` (lintrunner's included)."""
    from derivls.cli.compile import run_compile

    shown: list[CheckedFile] = []

    def write(results: list[CheckedFile]) -> None:  # with --op, check's own diagnostics too are the op's
        shown.extend(op_filtered(args, results) if args.op else results)
        write_results(args, shown, out)

    with torch_include(args.torch_include):
        code = run_compile(args, out, write=write)
    return exit_status(args, shown) if shown and code != EXIT_USAGE else code


__all__ = ["check_paths", "check_targets", "run_check", "run_check_compile", "torch_include", "write_results"]
