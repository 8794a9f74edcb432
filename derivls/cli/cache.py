"""`derivls cache`: where the cache folder is and how big; `derivls cache --clear` empties it (stopping the check
daemons that listen in it first: each would otherwise live on unreachable, its socket removed)."""

from __future__ import annotations

import argparse
import os
import re
import sys
from pathlib import Path

from derivls.base.cachedir import CacheFolderRefused, cache_directory, folder_size
from derivls.base.exits import EXIT_USAGE, error_line

TYPE_CHECKING = False  # `check` registers this command: typing stays unimported on its path
if TYPE_CHECKING:
    from typing import TextIO


def add_cache_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("cache", help="show where the cache folder is and its size; --clear empties it")
    parser.add_argument("--clear", action="store_true", help="remove everything in the cache folder")


def run_cache(args: argparse.Namespace, out: TextIO | None = None) -> int:
    out = sys.stdout if out is None else out
    try:
        folder = cache_directory()
    except CacheFolderRefused as e:
        sys.stderr.write(error_line("cache", f"no cache folder: {e}") + "\n")
        return EXIT_USAGE
    if not folder.is_dir():
        out.write(f"{folder}: empty (not created yet)\n")
        return 0
    size, files = folder_size(folder)
    if args.clear:
        import shutil  # (here: `derivls check` builds this command's parser, and imports this module, too)

        stopped = stop_daemons(folder / "daemon")
        if stopped:
            out.write(f"{folder}: stopped {_count(stopped, 'check daemon')}\n")
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
        left, _ = folder_size(folder)
        out.write(f"{folder}: cleared {_mb(size - left)} in {_count(files, 'file')}\n")
        return 0
    out.write(f"{folder}: {_mb(size)} in {_count(files, 'file')}\n")
    for name, (part_size, part_files) in parts(folder):
        out.write(f"  {name:<24} {_mb(part_size):>10} in {_count(part_files, 'file')}\n")
    return 0


def stop_daemons(folder: Path) -> int:
    """Ask each daemon listening in `folder` (the cache folder's `daemon/`) to stop; how many said they do. (One
    that does not answer in time, busy, stops by itself once it sees its folder gone: derivls.daemon.serve.)"""
    from derivls.daemon.client import ask

    try:
        sockets = sorted(entry.path for entry in os.scandir(folder) if entry.name.endswith(".sock"))
    except OSError:
        return 0
    return sum(ask(path, {"stop": True}, timeout=5.0) is not None for path in sockets)


_HASHED = re.compile(r"-[0-9a-f]{8,}(\.[a-z]+)?$")  # `check-result-<sha1>.pickle`: the part is `check-result`


def parts(folder: Path) -> list[tuple[str, tuple[int, int]]]:
    """What each part of the cache folder weighs, heaviest first: a subfolder (`pch/`, `gradcheck/`) is a
    part, and so are the files of one kind at the top (`entries`, `check-result`, ...)."""
    found: dict[str, tuple[int, int]] = {}
    try:
        entries = list(os.scandir(folder))
    except OSError:
        return []
    for entry in entries:
        if entry.is_dir(follow_symlinks=False):
            name, (size, files) = entry.name + "/", folder_size(Path(entry.path))
        else:
            try:
                size, files = entry.stat(follow_symlinks=False).st_size, 1
            except OSError:
                continue
            name = _HASHED.sub("", entry.name) if not entry.name.startswith(".") else "(bookkeeping)"
        total, count = found.get(name, (0, 0))
        found[name] = (total + size, count + files)
    return sorted(found.items(), key=lambda item: (-item[1][0], item[0]))


def _count(n: int, noun: str) -> str:
    return f"{n} {noun}{'' if n == 1 else 's'}"


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


__all__ = ["add_cache_command", "parts", "run_cache", "stop_daemons"]
