"""`python -m derivls`: drops the working directory from sys.path, then runs the command line.

`python -m` puts the working directory first on sys.path (`python -c` puts ''), so a workspace
holding `yaml/`, `pygls/`, `lsprotocol/`, `json/`, `asyncio/`... would have its code imported by
the server. This runs before anything but the derivls package itself is imported; a workspace that
shadows `derivls` itself is imported even before this file runs, which is why the editors launch
the server from a neutral working directory with the current directory kept off sys.path
(editors/vscode/src/serverCommand.ts, editors/nvim/lsp/derivls.lua).
"""

from __future__ import annotations

import os
import sys


def drop_working_directory(path: list[str], cwd: str | None) -> list[str]:
    """`path` without the entries naming the working directory `cwd` ('', '.', or `cwd` itself);
    with `cwd` None (it was removed), without every relative entry."""
    if cwd is None:
        return [p for p in path if os.path.isabs(p)]
    here = os.path.normcase(os.path.normpath(cwd))
    return [p for p in path if p not in ("", ".") and os.path.normcase(os.path.normpath(os.path.join(cwd, p))) != here]


def main() -> int:
    try:
        cwd: str | None = os.getcwd()
    except OSError:
        cwd = None
    sys.path[:] = drop_working_directory(sys.path, cwd)
    argv = sys.argv[1:]
    if cwd is not None and argv[:1] == ["check"]:
        from derivls.daemon.client import run, wants_daemon

        if wants_daemon(argv):  # answered by the daemon before the parser is even imported
            code = run(argv)
            if code is not None:
                return code
    from derivls.cli import main as cli_main

    return cli_main(fast_exit=True)


if __name__ == "__main__":
    raise SystemExit(main())
