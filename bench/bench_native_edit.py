"""A keystroke in native_functions.yaml: the time from the edited text to its diagnostics
(`EntryChecker.check`, per entry, see derivls/aten/native_incremental.py) on the real 16k-line file, five
characters typed one at a time into another entry each run (each keystroke on the last text). Prints the
best, median and worst. Target: <= 10 ms.

    python bench/bench_native_edit.py [--runs 50]
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
    parser.add_argument("--runs", type=int, default=50)
    args = parser.parse_args()
    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        sys.exit("torch (torchgen) is not installed")
    native_dir = Path(spec.origin).parent / "packaged" / "ATen" / "native"
    text = (native_dir / "native_functions.yaml").read_text(encoding="utf-8")
    tags = (native_dir / "tags.yaml").read_text(encoding="utf-8")

    from derivls.aten.native import NativeIndex
    from derivls.aten.native_incremental import EntryChecker
    from derivls.derivatives.releases import NEWEST

    index = NativeIndex.from_text(text, tags, "native_functions.yaml", rules=NEWEST.native)
    checker = EntryChecker("native_functions.yaml", set(index.tags or ()), NEWEST.native)
    checker.check(text)
    checker.adopt(text, index.rejected)
    starts = [i for i in range(len(text)) if text.startswith("\n- func: ", i)]
    times: list[float] = []
    edited = text
    for run in range(args.runs):
        # typing: 5 characters, one at a time, at the start of a schema's name (each keystroke on the last text)
        at = starts[run * (len(starts) // args.runs)] + len("\n- func: ") + 5 * run  # (5 typed before it per run)
        for _ in range(5):
            edited = edited[:at] + "x" + edited[at:]
            started = time.perf_counter()
            found = checker.check(edited)
            times.append(time.perf_counter() - started)
            assert not found, found  # a new, valid name
            at += 1
    ms = [t * 1000 for t in times]
    print(
        f"keystroke -> diagnostics: best {min(ms):.2f} ms, median {statistics.median(ms):.2f} ms, worst {max(ms):.2f} ms"
    )
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
