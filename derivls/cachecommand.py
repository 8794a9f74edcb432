"""`derivls cache`: where the cache folder is and how big; `derivls cache --clear` empties it."""

from __future__ import annotations

import argparse
import os
import shutil
import sys

from derivls.cachedir import CacheFolderRefused, cache_directory, folder_size

TYPE_CHECKING = False  # `check` registers this command: typing stays unimported on its path
if TYPE_CHECKING:
    from typing import TextIO


def add_cache_command(commands: argparse._SubParsersAction) -> None:  # type: ignore[type-arg]
    parser = commands.add_parser("cache", help="show where the cache folder is and its size; --clear empties it")
    parser.add_argument("--clear", action="store_true", help="remove everything in the cache folder")


def run_cache(args: argparse.Namespace, out: TextIO = sys.stdout) -> int:
    try:
        folder = cache_directory()
    except CacheFolderRefused as e:
        out.write(f"no cache: {e}\n")
        return 2
    if not folder.is_dir():
        out.write(f"{folder}: empty (not created yet)\n")
        return 0
    size, files = folder_size(folder)
    if args.clear:
        for entry in os.scandir(folder):
            if entry.is_dir(follow_symlinks=False):
                shutil.rmtree(entry.path, ignore_errors=True)
            else:
                try:
                    os.unlink(entry.path)
                except OSError:
                    pass
        left, _ = folder_size(folder)
        out.write(f"{folder}: cleared {_mb(size - left)} in {files} file(s)\n")
        return 0
    out.write(f"{folder}: {_mb(size)} in {files} file(s)\n")
    return 0


def _mb(size: int) -> str:
    return f"{size / 1e6:.1f} MB"


__all__ = ["add_cache_command", "run_cache"]
