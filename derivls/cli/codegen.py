"""``derivls codegen``: print the C++ autograd nodes torchgen would generate.

    derivls codegen PATH [--op NAME]... [--native FILE] [--tags FILE] [--format text|json] [--torch-version X.Y]

Text output is, per node, a ``// ===== OP =====`` line, the node's Functions.h
declaration and its Functions.cpp definition, exactly as torchgen renders them.
JSON output is ``{"nodes": [{"op", "declaration", "definition"}, ...]}``.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Callable, Sequence
from pathlib import Path

from derivls.base.exits import error_line
from derivls.project.opener import EXIT_ERRORS as EXIT_FAILURE
from derivls.project.opener import EXIT_OK, EXIT_USAGE

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any, TextIO

if TYPE_CHECKING:
    # (derivatives_path, native_path, tags_path) -> {FunctionSchema: {dispatch key: info}}
    Loader = Callable[[str, str, str | None], Any]


def add_codegen_arguments(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("path", metavar="PATH", help="the derivatives.yaml to generate nodes for")
    parser.add_argument(
        "--op",
        metavar="NAME",
        action="append",
        help="only this node or function (MulBackward0, mul.Tensor, mul), as check and gradcheck take it; repeatable",
    )
    parser.add_argument("--native", metavar="FILE", help="native_functions.yaml (default: found next to PATH)")
    parser.add_argument("--tags", metavar="FILE", help="tags.yaml (default: beside native_functions.yaml)")
    parser.add_argument("--format", choices=("text", "json"), default="text", help="output format (default: text)")
    parser.add_argument(
        "--torch-version", metavar="X.Y", help="follow this PyTorch release's torchgen (default: found, else newest)"
    )


def run_codegen(
    args: argparse.Namespace,
    out: TextIO,
    *,
    err: TextIO | None = None,
    load: Loader | None = None,
) -> int:
    """Run the command; ``load`` replaces derivls's loader (tests use it)."""
    err = sys.stderr if err is None else err

    derivatives = Path(args.path)
    from derivls.project.opener import UsageError, given_file, locate, read_text

    try:  # a folder, a binary file: said before the loader runs
        read_text(derivatives, "derivatives.yaml")
        for given, what in ((args.native, "native_functions.yaml"), (args.tags, "tags.yaml")):
            given_file(_path(given), what)
    except UsageError as e:
        print(error_line("codegen", str(e)), file=err)
        return EXIT_USAGE
    files = locate(derivatives, _path(args.native), _path(args.tags))
    if files.native is None:
        print(error_line("codegen", files.missing_message()), file=err)
        return EXIT_USAGE
    native, tags = files.native, files.tags

    from derivls.codegen.nodes import generate_node, infos_with_derivatives_list

    if load is None:
        load = _default_loader(getattr(args, "torch_version", None))
    try:
        infos = load(str(derivatives), str(native), None if tags is None else str(tags))
    except Exception as e:  # the loader's own errors carry the file position
        print(error_line("codegen", f"cannot load {derivatives}: {e}"), file=err)
        return EXIT_FAILURE

    flat = infos_with_derivatives_list(infos)
    if args.op:
        unknown = [name for name in args.op if not any(name in op_names(info) for info in flat)]
        if unknown:
            for name in unknown:
                print(error_line("codegen", _unknown_op_message(name, flat)), file=err)
            return EXIT_USAGE
        wanted = set(args.op)
        flat = [info for info in flat if op_names(info) & wanted]

    from derivls.derivatives.releases import detect

    rules = detect(getattr(args, "torch_version", None), derivatives, native).rules
    nodes = [generate_node(info, rules) for info in flat]
    if args.format == "json":
        import json

        json.dump(
            {"nodes": [{"op": n.op, "declaration": n.declaration, "definition": n.definition} for n in nodes]},
            out,
            indent=2,
        )
        out.write("\n")
    else:
        for n in nodes:
            out.write(f"// ===== {n.op} =====\n")
            out.write(n.declaration)
            out.write("\n")
            out.write(n.definition)
    return EXIT_OK


def op_names(info: Any) -> set[str]:
    """The names `--op NAME` knows an info by, in every command (codegen, check, check --compile, gradcheck):
    its node (MulBackward0), its function with its overload (mul.Tensor) and without (mul)."""
    return {name for name in (info.op, info.name, str(info.func.func.name)) if name}


def close_matches(name: str, infos: Sequence[Any], limit: int = 8) -> list[str]:
    """Node names a mistyped ``--op NAME`` probably meant.

    Nodes of the operator called NAME come first (``mul`` -> MulBackward0, MulBackward1),
    then difflib's close matches, then names containing NAME, all case-insensitive.
    """
    import difflib

    ops = list(dict.fromkeys(info.op for info in infos))
    lowered = name.lower()
    base = lowered.split(".")[0]
    by_lower: dict[str, str] = {}
    for op in ops:
        by_lower.setdefault(op.lower(), op)
    found: list[str] = []
    found += [info.op for info in infos if info.name.lower() in (lowered, base)]
    found += [by_lower[m] for m in difflib.get_close_matches(lowered, list(by_lower), n=limit, cutoff=0.6)]
    found += [op for op in ops if lowered in op.lower()]
    return list(dict.fromkeys(found))[:limit]


def _unknown_op_message(name: str, infos: Sequence[Any]) -> str:
    matches = close_matches(name, infos)
    message = f"no autograd node or function named {name!r}"
    if matches:
        return message + "; close matches: " + ", ".join(matches)
    return message + " (names look like MulBackward0, mul.Tensor or mul)"


def _path(given: str | None) -> Path | None:
    return Path(given) if given is not None else None


def _default_loader(torch_version: str | None = None) -> Loader:
    def load(derivatives: str, native: str, tags: str | None) -> Any:
        from derivls.derivatives.profiles import TORCHGEN
        from derivls.project.opener import open_project, read_text

        # the nodes are those of torchgen 2.x's templates, whatever the layout suggests
        project = open_project(Path(derivatives), Path(native), _path(tags), TORCHGEN.name, torch_version=torch_version)
        analysis = project.analyzer.analyse(read_text(Path(derivatives), "derivatives.yaml"))
        errors = [d for d in (*project.setup, *analysis.diagnostics) if d.severity == 1]
        if errors:
            first = errors[0]
            raise ValueError(f"{derivatives}:{first.span.line + 1}:{first.span.column + 1}: {first.message}")
        return analysis.infos

    return load
