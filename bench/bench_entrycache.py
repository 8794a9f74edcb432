"""Whole-process `derivls check` with the persistent entry cache, after changing N entries, vs torchgen.

The cache (a fresh folder) first holds the real derivatives.yaml's entries; each measured `check`
then reads a copy in which N entries (1, 10, every one) differ from everything cached (a comment
line with a new number: the chunk's text changes, so its result is computed again and written
back). Also measured: `--no-cache`, and the first run into an empty cache (which writes it all).
torchgen's `load_derivatives` runs alternately in the same session; each row prints the median
wall time, the median CPU time (user+sys of the child) and the median ratio to torchgen's wall time.

    python bench/bench_entrycache.py [--runs 5] [--packaged DIR]
"""

from __future__ import annotations

import argparse
import importlib.util
import os
import re
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

DERIVLS = """
import sys
from derivls.cli import main
sys.exit(main(["check", *sys.argv[1:]]))
"""

TORCHGEN = """
import sys
from torchgen.packaged.autograd.load_derivatives import load_derivatives
infos, keys = load_derivatives(sys.argv[1], sys.argv[2], sys.argv[3])
assert sum(len(v) for v in infos.values()) > 0
"""

_ENTRY = re.compile(r"^- name: .*\n", re.MULTILINE)


def packaged_dir() -> Path:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torchgen not found: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


def changed(text: str, count: int | None, stamp: int) -> str:
    """`text` with the first `count` entries (None: all) given a comment line no cache has seen."""
    done = 0

    def mark(m: re.Match[str]) -> str:
        nonlocal done
        if count is not None and done >= count:
            return m.group(0)
        done += 1
        return f"{m.group(0)}  # bench {stamp}.{done}\n"

    return _ENTRY.sub(mark, text)


def run(script: str, args: list[str], env: dict[str, str]) -> tuple[float, float]:
    """(wall seconds, CPU seconds of the child)."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    done = subprocess.run([sys.executable, "-c", script, *args], capture_output=True, text=True, env=env)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    if done.returncode not in (0, 1):
        sys.exit(f"benchmark child failed ({done.returncode}):\n{done.stderr}")
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--packaged", type=Path, default=None)
    args = parser.parse_args()
    packaged = args.packaged or packaged_dir()
    derivatives = packaged / "autograd" / "derivatives.yaml"
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    text = derivatives.read_text()
    entries = len(_ENTRY.findall(text))
    with tempfile.TemporaryDirectory(prefix="derivls-bench-entrycache-") as tmp:
        work = Path(tmp) / "derivatives.yaml"
        env = dict(os.environ, DERIVLS_CACHE_DIR=str(Path(tmp) / "cache"))
        for name in ("DERIVLS_NO_CACHE", "PYTHONDONTWRITEBYTECODE"):
            env.pop(name, None)
        files = [str(work), "--native", str(native), "--tags", str(tags)]
        theirs_files = [str(derivatives), str(native), str(tags)]
        stamp = 0

        def check(count: int | None, *extra: str, empty: bool = False) -> tuple[float, float]:
            nonlocal stamp
            stamp += 1
            if empty:
                for f in (Path(tmp) / "cache").glob("*"):
                    f.unlink()
                work.write_text(text)
            else:
                work.write_text(changed(text, count, stamp) if count != 0 else text)
            return run(DERIVLS, files + list(extra), env)

        work.write_text(text)
        run(DERIVLS, files, env)  # warm: .pyc files, page cache, and the cache holds the real file's entries
        run(TORCHGEN, theirs_files, env)
        rows: list[tuple[str, dict[str, object]]] = [
            ("--no-cache", {"count": 0, "extra": ("--no-cache",)}),
            ("empty cache (writes it)", {"count": 0, "empty": True}),
            ("1 entry changed", {"count": 1}),
            ("10 entries changed", {"count": 10}),
            (f"all {entries} entries changed", {"count": None}),
        ]
        results: dict[str, list[tuple[float, float]]] = {name: [] for name, _ in rows}
        torchgen: list[float] = []
        ratios: dict[str, list[float]] = {name: [] for name, _ in rows}
        for _ in range(args.runs):
            for name, how in rows:
                theirs = run(TORCHGEN, theirs_files, env)[0]
                torchgen.append(theirs)
                # the cache holds the entries of the run before, which differ from this one's in the same
                # first N entries (a new stamp each run): N misses
                ours = check(how["count"], *how.get("extra", ()), empty=bool(how.get("empty")))  # type: ignore[arg-type]
                results[name].append(ours)
                ratios[name].append(ours[0] / theirs)
    print(f"torchgen load_derivatives   median {statistics.median(torchgen) * 1000:7.0f} ms wall")
    for name, _ in rows:
        wall = statistics.median(w for w, _ in results[name])
        cpu = statistics.median(c for _, c in results[name])
        print(
            f"derivls check, {name:<26} median {wall * 1000:7.0f} ms wall {cpu * 1000:7.0f} ms CPU   "
            f"ratio to torchgen {statistics.median(ratios[name]):.3f}"
        )
    print(f"({args.runs} rounds, derivls and torchgen alternating)")


if __name__ == "__main__":
    main()
