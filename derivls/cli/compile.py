"""`derivls check --compile [--torch-include DIR] [--cxx CXX] [--op NAME]`.

`add_compile_arguments(parser)` adds the options to `check`; `run_compile(args, out)` runs after the
normal check (cli.py calls it when `args.compile` is set) and returns the exit status.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

TYPE_CHECKING = (
    False  # typing is not imported at run time (derivls.cli.commandline imports this module to build its parser)
)
if TYPE_CHECKING:
    from typing import Any, TextIO

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def add_compile_arguments(parser: argparse.ArgumentParser) -> None:
    group = parser.add_argument_group("compile", "compile the generated C++ against torch's headers")
    group.add_argument(
        "--compile",
        action="store_true",
        help="also compile the C++ the codegen generates for the formulas and report compiler errors on them",
    )
    group.add_argument(
        "--torch-include",
        metavar="DIR",
        help="torch's include folder: what --compile compiles against (default: the matching torch), and where "
        "the formula checks find FunctionsManual.h and the Tensor headers when the files' tree lacks them",
    )
    group.add_argument("--cxx", metavar="CXX", help="the C++ compiler (default: $CXX, g++, c++, clang++)")
    group.add_argument(
        "--op",
        metavar="NAME",
        action="append",
        help="only this entry: a node or function (MulBackward0, mul.Tensor, mul), as codegen and gradcheck take it; "
        "what is compiled with --compile, the diagnostics shown without it; repeatable",
    )
    group.add_argument("--jobs", "-j", type=int, default=2, help="compilers run at once (default: 2)")


def run_compile(args: argparse.Namespace, out: TextIO, err: TextIO | None = None, write: Any = None) -> int:
    """`check --compile`: check's diagnostics and the compiler's, in one report (any --format; `write(results)`
    writes it when given, as `check` does for its lintrunner format). Raises UsageError."""
    from derivls.base.diagnostics import Severity
    from derivls.base.discovery import find_default_derivatives
    from derivls.base.words import plural
    from derivls.cli.report import CheckedFile, write_diagnostics
    from derivls.compile.document import compile_file
    from derivls.compile.toolchain import SetupError
    from derivls.project.analyse import analyse_path_with_rules
    from derivls.project.opener import UsageError

    err = sys.stderr if err is None else err
    paths: list[Path] = list(args.paths)
    if not paths:
        found, _ = find_default_derivatives()
        if found is None:
            raise UsageError("no derivatives.yaml given and none found; pass a PATH")
        paths = [found]
    results = []
    for path in paths:
        analysis, extra, release = analyse_path_with_rules(
            path, args.native, args.tags, args.profile, getattr(args, "torch_version", None)
        )
        diagnostics = list(extra) + list(analysis.diagnostics if analysis is not None else ())
        changed = None
        if getattr(args, "since", None) is not None:  # only the entries changed since a git revision
            from derivls.project.opener import read_text
            from derivls.project.since import changed_since

            changed = changed_since(args.since, path, read_text(path, "derivatives.yaml"))
            diagnostics = list(changed.filter(diagnostics))
        if analysis is not None and (changed is None or changed.ranges):
            try:
                result = compile_file(
                    path,
                    analysis,
                    cxx=args.cxx,
                    torch_include=args.torch_include,
                    ops=args.op,
                    lines=changed.first_lines if changed is not None else None,
                    jobs=max(1, args.jobs),
                )
            except (SetupError, LookupError) as e:
                raise UsageError(str(e.args[0] if e.args else e)) from None
            diagnostics += result.diagnostics
            stats = result.stats
            pch = stats.pch
            built = f"built in {pch.seconds:.0f} s" if pch and pch.built else "reused"
            size = f"{pch.size / 2**20:.0f} MB" if pch else "?"
            per_batch = sum(stats.batch_seconds) / len(stats.batch_seconds) if stats.batch_seconds else 0.0
            print(
                f"compiled {plural(stats.units, 'unit')} of {path} in {plural(stats.batches, 'batch', 'batches')} "
                f"({per_batch:.1f} s each, {max(1, args.jobs)} at a time), {stats.seconds:.1f} s "
                f"(precompiled header {built}, {size})",
                file=err,
            )
        diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
        results.append(CheckedFile(path, tuple(diagnostics), release.describe() if release is not None else None))
    if write is not None:
        write(results)
    else:
        write_diagnostics(results, args.format, out)
    has_errors = any(d.severity == Severity.ERROR for r in results for d in r.diagnostics)
    return EXIT_ERRORS if has_errors else EXIT_OK
