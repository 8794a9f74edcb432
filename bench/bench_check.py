"""Whole-process `derivls check` vs whole-process torchgen `load_derivatives` on the real files.

Runs them alternately in the same session (the machines here are noisy), prints each side's
median wall time and peak RSS, and the median ratios derivls/torchgen of two derivls runs per round:

- cold: an empty cache (DERIVLS_CACHE_DIR a fresh temporary folder per run): target (issue 13) <= 0.15;
- warm: the same check again with the cache it filled (the whole-result cache answers it,
  derivls/project/resultcache.py): target (issue 13) <= 0.08.

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
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path


# derivls runs as its executable runs (`python -m derivls` is the `derivls` command: it ends the process
# itself once its answer is written, derivls.cli.commandline.exit_now); torchgen's loader as build_variables would call it.
# Each child's peak RSS is read from its own resource usage (os.wait4).
def derivls_command(files: list[str]) -> list[str]:
    return ["-m", "derivls", "check", files[0], "--native", files[1], "--tags", files[2]]


TORCHGEN = """
import sys
from torchgen.packaged.autograd.load_derivatives import load_derivatives
infos, keys = load_derivatives(sys.argv[1], sys.argv[2], sys.argv[3])
assert sum(len(v) for v in infos.values()) > 0
"""


def torchgen_command(files: list[str]) -> list[str]:
    return ["-c", TORCHGEN, *files]


def packaged_dir() -> Path:
    spec = importlib.util.find_spec("torchgen")
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torchgen not found: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


def child_environment(tree: Path | None = None, cache: Path | None = None) -> dict[str, str]:
    # Both sides run as installed code normally runs: with bytecode caches. (torchgen's .pyc files
    # were written when its wheel was installed; an editable derivls writes its own on the warm-up
    # run unless PYTHONDONTWRITEBYTECODE forbids it, which some sandboxes set.)
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    env.pop("DERIVLS_NO_CACHE", None)
    if tree is not None:
        env["PYTHONPATH"] = str(tree)
    if cache is not None:
        env["DERIVLS_CACHE_DIR"] = str(cache)
    return env


def run(
    command: list[str],
    tree: Path | None = None,
    cache: Path | None = None,
    written: list[float] | None = None,
) -> tuple[float, int]:
    """(wall time to the command's exit, its peak RSS in KiB). derivls leaves its cache writes to a detached
    child (derivls/base/writebehind.py): the next run starts only once that child is done, and `written` gets
    the time until then (the command's answer came earlier)."""
    with tempfile.TemporaryFile() as errors:
        start = time.perf_counter()
        child = subprocess.Popen(
            [sys.executable, *command],
            stdout=subprocess.DEVNULL,
            stderr=errors,
            env=child_environment(tree, cache),
            cwd=tree,  # `python -m` / `-c` put the working directory first on sys.path
        )
        _, status, usage = os.wait4(child.pid, 0)
        elapsed = time.perf_counter() - start
        child.returncode = code = os.waitstatus_to_exitcode(status)  # reaped here: Popen must not wait again
        if code not in (0, 1):
            errors.seek(0)
            sys.exit(f"benchmark child failed ({code}):\n{errors.read().decode(errors='replace')}")
    if cache is not None:
        wait_for_writer(cache)
        if written is not None:
            written.append(time.perf_counter() - start)
    return elapsed, usage.ru_maxrss


def wait_for_writer(cache: Path) -> None:
    """Block while a detached derivls cache writer holds the folder's lock (derivls/base/writebehind.py)."""
    import fcntl

    try:
        fd = os.open(cache / ".writing", os.O_RDONLY)
    except OSError:
        return
    try:
        fcntl.flock(fd, fcntl.LOCK_SH)
    finally:
        os.close(fd)


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
    with tempfile.TemporaryDirectory(prefix="derivls-bench-") as scratch:
        if args.against is not None:
            return against(args.against, files, args.runs, Path(scratch))
        return compare(files, args.runs, Path(scratch), args.json)


COLD_TARGET, WARM_TARGET = 0.15, 0.08


def compare(files: list[str], runs: int, scratch: Path, as_json: bool) -> None:
    warm_cache = scratch / "warm"
    run(derivls_command(files), cache=warm_cache)  # warm the page cache and .pyc files for both sides (and the cache)
    run(torchgen_command(files))
    cold: list[tuple[float, int]] = []
    warm: list[tuple[float, int]] = []
    theirs: list[tuple[float, int]] = []
    cached: list[float] = []  # cold runs: until their cache was written
    for i in range(runs):
        empty = scratch / f"cold-{i}"  # a fresh, empty cache folder per cold run
        cold.append(run(derivls_command(files), cache=empty, written=cached))
        shutil.rmtree(empty, ignore_errors=True)
        warm.append(run(derivls_command(files), cache=warm_cache))
        theirs.append(run(torchgen_command(files)))
    cold_ratios = [c[0] / t[0] for c, t in zip(cold, theirs)]
    warm_ratios = [w[0] / t[0] for w, t in zip(warm, theirs)]
    result = {
        "runs": runs,
        "cold_median_s": statistics.median(t for t, _ in cold),
        "cold_cache_written_median_s": statistics.median(cached),
        "warm_median_s": statistics.median(t for t, _ in warm),
        "torchgen_median_s": statistics.median(t for t, _ in theirs),
        "cold_median_ratio": statistics.median(cold_ratios),
        "warm_median_ratio": statistics.median(warm_ratios),
        "cold_peak_rss_mib": max(m for _, m in cold) / 1024,
        "warm_peak_rss_mib": max(m for _, m in warm) / 1024,
        "torchgen_peak_rss_mib": max(m for _, m in theirs) / 1024,
        "cold_target_ratio": COLD_TARGET,
        "warm_target_ratio": WARM_TARGET,
    }
    if as_json:
        print(json.dumps(result, indent=2))
        return
    for label, side in (("derivls (cold)", "cold"), ("derivls (warm)", "warm"), ("torchgen loader", "torchgen")):
        print(
            f"{label:15} median {result[f'{side}_median_s'] * 1000:7.0f} ms   "
            f"peak RSS {result[f'{side}_peak_rss_mib']:6.1f} MiB"
        )
    print(
        f"derivls (cold)  median {result['cold_cache_written_median_s'] * 1000:7.0f} ms   until its cache was written "
        "(by a detached child, after the answer)"
    )
    for side, target in (("cold", COLD_TARGET), ("warm", WARM_TARGET)):
        ratio = result[f"{side}_median_ratio"]
        verdict = "meets" if ratio <= target else "MISSES"
        print(
            f"median ratio derivls/torchgen, {side} cache: {ratio:.3f} ({verdict} the {target} target) "
            f"over {runs} alternating runs"
        )


def against(other: Path, files: list[str], runs: int, scratch: Path) -> None:
    """A/B with an empty cache folder per run (the cold check)."""
    here = Path(__file__).resolve().parent.parent
    run(derivls_command(files), here, scratch / "warm-up-here")
    run(derivls_command(files), other, scratch / "warm-up-other")
    ours: list[float] = []
    theirs: list[float] = []
    for i in range(runs):
        ours.append(run(derivls_command(files), here, scratch / f"here-{i}")[0])
        theirs.append(run(derivls_command(files), other, scratch / f"other-{i}")[0])
    ratios = [a / b for a, b in zip(ours, theirs)]
    print(f"this tree       median {statistics.median(ours) * 1000:7.0f} ms   ({here})")
    print(f"other tree      median {statistics.median(theirs) * 1000:7.0f} ms   ({other})")
    print(f"median ratio this/other: {statistics.median(ratios):.3f} over {runs} alternating runs")


if __name__ == "__main__":
    main()
