"""Whole-process `derivls check` vs whole-process torchgen `load_derivatives` on the real files.

Runs both alternately in the same session (the machines here are noisy), prints
each side's median wall time and peak RSS, and the median ratio derivls/torchgen.
Target (issue 2): ratio <= 0.2.

    python bench/bench_check.py [--runs 7] [--packaged DIR]
    python bench/bench_check.py --against DIR   # A/B: this tree's `check` vs the derivls in DIR

`--against DIR` runs `derivls check` from this tree and from DIR (a folder holding another
version's `derivls/` package) alternately instead of torchgen, and prints the median ratio
this/other (e.g. to measure what one change costs).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

# Each child reports its own peak RSS (ru_maxrss, KiB on Linux) on its last stderr line.
DERIVLS = """
import resource, sys
from derivls.cli import main
code = main(["check", sys.argv[1], "--native", sys.argv[2], "--tags", sys.argv[3]])
sys.stdout.flush()
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
sys.exit(code)
"""

TORCHGEN = """
import resource, sys
from torchgen.packaged.autograd.load_derivatives import load_derivatives
infos, keys = load_derivatives(sys.argv[1], sys.argv[2], sys.argv[3])
assert sum(len(v) for v in infos.values()) > 0
print(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss, file=sys.stderr)
"""


def packaged_dir() -> Path:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torchgen not found: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


def child_environment(tree: Path | None = None) -> dict[str, str]:
    # Both sides run as installed code normally runs: with bytecode caches. (torchgen's .pyc files
    # were written when its wheel was installed; an editable derivls writes its own on the warm-up
    # run unless PYTHONDONTWRITEBYTECODE forbids it, which some sandboxes set.)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    return env


def run(script: str, files: list[str], tree: Path | None = None) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(
        [sys.executable, "-c", script, *files],
        capture_output=True,
        text=True,
        check=False,
        env=child_environment(tree),
        cwd=tree,  # `python -c` puts the working directory first on sys.path
    )
    elapsed = time.perf_counter() - start
    if done.returncode not in (0, 1):
        sys.exit(f"benchmark child failed ({done.returncode}):\n{done.stderr}")
    return elapsed, int(done.stderr.strip().splitlines()[-1])


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=7)
    parser.add_argument("--packaged", type=Path, default=None)
    parser.add_argument("--json", action="store_true", help="print the result as JSON")
    parser.add_argument("--against", type=Path, default=None, help="A/B against the derivls package in DIR")
    args = parser.parse_args()
    packaged = args.packaged or packaged_dir()
    files = [
        str(packaged / "autograd" / "derivatives.yaml"),
        str(packaged / "ATen" / "native" / "native_functions.yaml"),
        str(packaged / "ATen" / "native" / "tags.yaml"),
    ]
    if args.against is not None:
        return against(args.against, files, args.runs)
    run(DERIVLS, files)  # warm the page cache and .pyc files for both sides
    run(TORCHGEN, files)
    ours: list[tuple[float, int]] = []
    theirs: list[tuple[float, int]] = []
    ratios: list[float] = []
    for _ in range(args.runs):
        ours.append(run(DERIVLS, files))
        theirs.append(run(TORCHGEN, files))
        ratios.append(ours[-1][0] / theirs[-1][0])
    result = {
        "runs": args.runs,
        "derivls_median_s": statistics.median(t for t, _ in ours),
        "torchgen_median_s": statistics.median(t for t, _ in theirs),
        "median_ratio": statistics.median(ratios),
        "derivls_peak_rss_mib": max(m for _, m in ours) / 1024,
        "torchgen_peak_rss_mib": max(m for _, m in theirs) / 1024,
        "target_ratio": 0.2,
    }
    if args.json:
        print(json.dumps(result, indent=2))
        return
    print(
        f"derivls check   median {result['derivls_median_s'] * 1000:7.0f} ms   peak RSS {result['derivls_peak_rss_mib']:6.1f} MiB"
    )
    print(
        f"torchgen loader median {result['torchgen_median_s'] * 1000:7.0f} ms   peak RSS {result['torchgen_peak_rss_mib']:6.1f} MiB"
    )
    verdict = "meets" if result["median_ratio"] <= 0.2 else "MISSES"
    print(
        f"median ratio derivls/torchgen: {result['median_ratio']:.3f} ({verdict} the 0.2 target) over {args.runs} alternating runs"
    )


def against(other: Path, files: list[str], runs: int) -> None:
    here = Path(__file__).resolve().parent.parent
    run(DERIVLS, files, here)
    run(DERIVLS, files, other)
    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(runs):
        ours.append(run(DERIVLS, files, here)[0])
        theirs.append(run(DERIVLS, files, other)[0])
    ratios = [a / b for a, b in zip(ours, theirs)]
    print(f"this tree       median {statistics.median(ours) * 1000:7.0f} ms   ({here})")
    print(f"other tree      median {statistics.median(theirs) * 1000:7.0f} ms   ({other})")
    print(f"median ratio this/other: {statistics.median(ratios):.3f} over {runs} alternating runs")


if __name__ == "__main__":
    main()
