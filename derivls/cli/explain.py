"""`derivls explain [CODE]`: a code's doc (as `ruff rule` and `rustc --explain`), or every code with its summary."""

from __future__ import annotations

import argparse

from derivls.base.exits import EXIT_OK, UsageError
from derivls.codes.model import _REGISTRY, all_codes

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import TextIO


def add_explain_command(commands: argparse._SubParsersAction[argparse.ArgumentParser]) -> None:
    explain = commands.add_parser("explain", help="print a diagnostic code's doc (without CODE: list every code)")
    explain.add_argument("code", nargs="?", metavar="CODE", help="a code, e.g. schema-not-found")


def run_explain(args: argparse.Namespace, out: TextIO) -> int:
    import difflib  # (here: `derivls check` builds this command's parser, and imports this module, too)

    from derivls.codes.docs import REPOSITORY_PAGE, body, doc_path

    codes = all_codes()
    if args.code is None:
        width = max(len(c) for c in codes)
        for c in codes:
            out.write(f"{c:<{width}}  {c.severity.label:<11} {c.stage:<8} {c.summary}\n")
        out.write(f"\n{len(codes)} codes; `derivls explain CODE` prints one.\n")
        return EXIT_OK
    code = _REGISTRY.get(args.code.strip().strip("[]"))
    if code is None:
        close = difflib.get_close_matches(args.code, list(_REGISTRY), n=3, cutoff=0.5)
        hint = f"; did you mean {', '.join(close)}?" if close else "; `derivls explain` lists them"
        raise UsageError(f"no diagnostic code {args.code!r}{hint}")
    out.write(f"{code}\n\n{body(code)}\nDoc page: {doc_path(code)} (online: {REPOSITORY_PAGE.format(code=code)})\n")
    return EXIT_OK


__all__ = ["add_explain_command", "run_explain"]
