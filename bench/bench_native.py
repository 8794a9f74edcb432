"""derivls's native_functions.yaml index (`NativeIndex.load`) vs torchgen's `parse_native_yaml` on the real
files, alternately in one process (the machines here are noisy): prints each side's best and median time
and the median ratio derivls/torchgen. Target: the index loads in well under 0.5 s.

    python bench/bench_native.py [--runs 5]

(This was a timed test, tests/unit/test_aten_native.py::test_load_time; timings belong here.)
"""

from __future__ import annotations

import argparse
import importlib.util
import statistics
import sys
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--runs", type=int, default=5)
    args = parser.parse_args()
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        sys.exit("torch (torchgen) is not installed")
    native_dir = Path(spec.origin).parent / "packaged" / "ATen" / "native"
    native, tags = str(native_dir / "native_functions.yaml"), str(native_dir / "tags.yaml")

    from torchgen.gen import parse_native_yaml

    from derivls.aten.native import NativeIndex

    ours: list[float] = []
    theirs: list[float] = []
    for _ in range(args.runs):
        started = time.perf_counter()
        NativeIndex.load(native, tags)
        ours.append(time.perf_counter() - started)
        started = time.perf_counter()
        parse_native_yaml(native, tags, skip_native_fns_gen=True)  # (not cached: a new path set each call)
        theirs.append(time.perf_counter() - started)
        parse_native_yaml.__globals__.get("_GLOBAL_PARSE_NATIVE_YAML_CACHE", {}).clear()
    ratios = [o / t for o, t in zip(ours, theirs)]
    print(f"NativeIndex.load: best {min(ours):.3f} s, median {statistics.median(ours):.3f} s")
    print(f"torchgen parse_native_yaml: best {min(theirs):.3f} s, median {statistics.median(theirs):.3f} s")
    verdict = "meets" if min(ours) < 0.5 else "MISSES"
    print(f"median ratio derivls/torchgen: {statistics.median(ratios):.3f}; best load {verdict} the 0.5 s target")
    return 0


if __name__ == "__main__":
    sys.exit(main())
