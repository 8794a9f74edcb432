"""`derivls gradcheck [PATH] --op NAME [--op NAME ...] [--all] [--python PY] [--double-backward] [--force]
[--no-repair] [--manual FILE]`.

In a checkout (or with `--manual FILE`) the formulas call FunctionsManual.cpp's edited helpers
(derivls.gradcheck.edited); `--since REF` also picks the entries calling a helper changed since REF.

Exit: 0 every checked formula passes, 1 a formula fails (or the file has errors), 2 usage / set-up.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any, TextIO

EXIT_OK, EXIT_ERRORS, EXIT_USAGE = 0, 1, 2


def add_gradcheck_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", nargs="?", type=Path, metavar="PATH", help="derivatives.yaml (default: found)")
    parser.add_argument(
        "--op", metavar="NAME", action="append", help="a node or function (AcosBackward0, acos, mul.Tensor); repeatable"
    )
    parser.add_argument("--all", action="store_true", help="every entry of the file")
    parser.add_argument(
        "--since", metavar="REF", help="the entries whose text differs from the file at git revision REF"
    )
    parser.add_argument("--python", metavar="PY", help="the Python whose torch runs the check (default: this one)")
    parser.add_argument("--double-backward", action="store_true", help="also gradgradcheck the backward formulas")
    parser.add_argument("--force", action="store_true", help="run even when the file's release is not torch's")
    parser.add_argument("--format", choices=("text", "json", "github"), default="text")
    parser.add_argument("--native", type=Path, metavar="FILE", help="native_functions.yaml (default: found)")
    parser.add_argument("--tags", type=Path, metavar="FILE", help="tags.yaml (default: beside native_functions.yaml)")
    parser.add_argument("--cxx", metavar="CXX", help="the C++ compiler (default: $CXX, g++, c++, clang++)")
    parser.add_argument("--torch-include", metavar="DIR", help="torch's include folder (default: the chosen torch's)")
    parser.add_argument("--max-samples", type=int, default=4, help="OpInfo samples per dtype and entry (default: 4)")
    parser.add_argument("--summary-json", type=Path, metavar="FILE", help="also write the summary as JSON here")
    parser.add_argument(
        "--no-repair", action="store_true", help="do not try the usual repairs of a failing formula (faster)"
    )
    parser.add_argument(
        "--manual",
        type=Path,
        metavar="FILE",
        help="the FunctionsManual.cpp whose edited helpers the formulas call (default: the checkout's)",
    )


def run_gradcheck(args: argparse.Namespace, out: TextIO, err: TextIO | None = None) -> int:
    from derivls.base.diagnostics import Severity
    from derivls.base.discovery import find_default_derivatives
    from derivls.base.words import plural
    from derivls.cli.report import CheckedFile, diagnostic_rows, write_diagnostics
    from derivls.codes.setup import NATIVE_NOT_FOUND, NATIVE_UNREADABLE
    from derivls.codes.yamlfile import NOT_A_LIST
    from derivls.compile.toolchain import SetupError
    from derivls.compile.units import collect_units
    from derivls.gradcheck.engine import gradcheck_units
    from derivls.gradcheck.release import release_mismatch
    from derivls.gradcheck.runner import python_version, torch_include
    from derivls.project.analyse import analyse_path
    from derivls.project.opener import UsageError

    err = sys.stderr if err is None else err
    if not args.op and not args.all and args.since is None:
        raise UsageError("name an entry with --op NAME, or pass --all or --since REF")
    if args.all and (args.op or args.since is not None):
        raise UsageError(
            f"--all checks every entry: it cannot be combined with {'--op' if args.op else '--since'} "
            "(which choose some of them)"
        )
    if args.max_samples < 1:
        raise UsageError(f"--max-samples must be at least 1 (got {args.max_samples})")
    if args.summary_json is not None:  # (before the work: never a run of minutes lost to a bad path)
        writable_output(args.summary_json, "--summary-json")
    path = args.path
    if path is None:
        path, _ = find_default_derivatives()
        if path is None:
            raise UsageError("no derivatives.yaml given and none found; pass a PATH")
    from derivls.gradcheck import edited

    manual_path = edited.find_manual(path, getattr(args, "manual", None))  # (a bad --manual: before any work)
    analysis, extra = analyse_path(path, args.native, args.tags)
    missing = [d for d in extra if d.code in (NATIVE_NOT_FOUND, NATIVE_UNREADABLE)]
    if missing:  # no schemas: no entry can be found, nor compiled (`check` goes on with a warning)
        raise UsageError(missing[0].message)
    python = args.python or sys.executable
    version = python_version(python)
    if version is None:
        raise UsageError(f"{python} has no torch; pass --python PY of a Python with torch")
    mismatch = release_mismatch(path, version)
    if mismatch and not args.force:
        raise UsageError(mismatch)
    # the headers and libraries of the chosen Python's torch, never ones a workspace ships beside the file
    include = args.torch_include or torch_include(python)
    manual = None
    if manual_path is not None:  # its edited helpers (against --since REF, else torch's own commit)
        header = edited.header_beside(manual_path, [Path(include)] if include else [])
        manual = edited.load(manual_path, since=args.since, python=python, header=header)
    whole_file = () if analysis is None else tuple(d for d in analysis.diagnostics if d.code == NOT_A_LIST)
    if analysis is None or whole_file:  # no index, or a file torchgen's loader rejects whole (an empty one)
        results = [CheckedFile(path, tuple(extra) + whole_file)]
        if args.format == "json":
            out.write(json.dumps({"diagnostics": diagnostic_rows(results), "summary": None}, indent=1) + "\n")
        else:
            write_diagnostics(results, args.format, out)
        return EXIT_ERRORS
    lines = None
    if args.since is not None:  # the entries changed since a git revision (with --op: those of them)
        from derivls.project.opener import read_text
        from derivls.project.since import changed_since

        lines = changed_since(args.since, path, read_text(path, "derivatives.yaml")).first_lines
        if manual is not None and manual.edited:  # and the entries calling a helper changed since REF
            lines = sorted(set(lines) | {u.entry_line for u in collect_units(analysis) if manual.edited_reached(u)})
        if not lines:
            changed = f" or {manual.path.name}" if manual is not None else ""
            print(
                f"derivls gradcheck: no entry of {path}{changed} changed since {args.since}; nothing to check.",
                file=err,
            )
            return EXIT_OK
    units = collect_units(analysis, None if args.all else args.op, lines)
    if not units and args.op:
        raise UsageError(f"no autograd node or function named {', '.join(args.op)}")
    if not units:
        print(f"derivls gradcheck: the changed entries of {path} have no autograd node; nothing to check.", file=err)
        return EXIT_OK
    repair = None
    if not args.no_repair:
        from derivls.gradcheck.engine import RepairSource
        from derivls.project.opener import read_text

        repair = RepairSource(read_text(path, "derivatives.yaml"), analysis)
    try:
        result = gradcheck_units(
            units,
            path,
            python=python,
            repair=repair,
            cxx=args.cxx,
            torch_include=include,
            double_backward=args.double_backward,
            max_samples=args.max_samples,
            progress=(lambda what: print(f"derivls gradcheck: {what}", file=err)) if args.format == "text" else None,
            manual=manual,
        )
    except SetupError as e:
        raise UsageError(str(e.args[0] if e.args else e)) from None
    t = result.timings
    repaired = (
        f", repairs {t.repair:.1f} s ({plural(t.repairs_tried, 'candidate')}, build {t.repair_build:.1f} s)"
        if t.repair
        else ""
    )
    print(
        f"derivls gradcheck: build {t.build:.1f} s ({'reused' if t.build_reused else 'compiled'}"
        f"{', precompiled header built' if t.pch_built else ''}), run {t.run:.1f} s{repaired} "
        f"(torch {result.torch_version})",
        file=err,
    )
    if t.repair_error:
        print(f"derivls gradcheck: no repair tried: {t.repair_error}", file=err)
    shown = result.diagnostics
    if args.format != "json":  # a `suggestion:` line under each failure a repair was found for
        shown = [_with_suggestion(d) for d in shown]
    checked = [CheckedFile(path, tuple(shown))]
    if result.manual_path is not None and result.manual_diagnostics:  # (FunctionsManual.cpp's own lines)
        checked.append(CheckedFile(result.manual_path, tuple(result.manual_diagnostics)))
    if args.format == "json":  # the diagnostics, the summary (counts, checks, units), the repairs found
        document = {
            "diagnostics": diagnostic_rows(checked),
            "summary": _summary(result),
            "suggestions": [s.to_json() for s in result.suggestions],
        }
        out.write(json.dumps(document, indent=1) + "\n")
    else:
        write_diagnostics(checked, args.format, out)
    if args.format == "text":
        out.write(result.summary.text() + "\n")
    if args.summary_json:
        try:
            args.summary_json.write_text(json.dumps(_summary(result), indent=1), encoding="utf-8")
        except OSError as e:  # (checked before the run; changed since)
            raise UsageError(f"--summary-json: cannot write {args.summary_json}: {e.strerror or e}") from None
    failed = any(d.severity == Severity.ERROR for d in (*result.diagnostics, *result.manual_diagnostics))
    return EXIT_ERRORS if failed else EXIT_OK


def writable_output(path: Path, option: str) -> None:
    """UsageError unless `path` can be written as a file: not a folder, in a folder that exists and is writable
    (an existing file writable)."""
    import os

    from derivls.project.opener import UsageError

    if path.is_dir():
        raise UsageError(f"{option} {path}: is a folder; give a file's path")
    folder = path.parent if str(path.parent) else Path(".")
    if not folder.is_dir():
        raise UsageError(f"{option} {path}: the folder {folder} does not exist")
    if path.exists() and not os.access(path, os.W_OK):
        raise UsageError(f"{option} {path}: the file is not writable")
    if not path.exists() and not os.access(folder, os.W_OK | os.X_OK):
        raise UsageError(f"{option} {path}: the folder {folder} is not writable")


def _with_suggestion(d: Any) -> Any:
    """The diagnostic with its repair (a fix derivls never applies) as a last line of its message."""
    from dataclasses import replace

    if not d.fixes:
        return d
    title = d.fixes[0].title
    return replace(d, message=f"{d.message}\nsuggestion: {title[0].lower()}{title[1:]}")


def _summary(result: Any) -> dict[str, Any]:
    """What `--format json` gives as `summary` and `--summary-json` writes."""
    s = result.summary
    return {
        "counts": s.counts(),
        "checks": s.checks(),
        "unstable_points": s.unstable(),
        "not_checkable_by_reason": s.reasons(),
        # (issue 35: a fact about the op is not the harness's to fix; the rest is work left)
        "not_checkable_for_facts": s.facts(),
        "checkable_at_most": s.checkable_at_most(),
        "units": [
            {
                "name": o.name,
                "function": o.function,
                "line": o.entry_line + 1,
                "status": o.status,
                "reason": o.reason,
                "inputs": o.inputs,
                "checks": o.checks,
                "unstable_points": o.unstable,
            }
            for o in s.outcomes
        ],
        "unreachable_helpers": s.unreachable_helpers,
        # FunctionsManual.cpp: its path, the base its edits are told against, the edited helpers, the ones compiled
        "manual": getattr(result, "manual_summary", None),
    }
