"""`derivls gradcheck --all` on the installed torch wheel's derivatives.yaml (a copy laid out as
site-packages), timed; prints the summary (checked / passed / failed / not checkable by reason) and
optionally writes the baseline expectations file the gradcheck tests compare with.

    python bench/bench_gradcheck.py [--ops acos mul.Tensor ...] [--write-expectations FILE]
    python bench/bench_gradcheck.py --one acos     # cold (empty cache) and warm time of one entry

Without --ops: every entry (--all): one unit of every node (tens of minutes on 2 cores, GBs of RAM).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def packaged() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        sys.exit("torch (torchgen) is not installed")
    return Path(spec.origin).parent / "packaged"


def wheel_copy(folder: Path) -> Path:
    from tests.conftest import RealFiles
    from tests.gradcheck.conftest import make_wheel_copy

    return make_wheel_copy(RealFiles(packaged()), folder)


def run(path: Path, args: list[str], cwd: Path, env: dict[str, str] | None = None) -> tuple[float, int, dict, str]:
    summary = cwd / "summary.json"
    started = time.monotonic()
    result = subprocess.run(
        [sys.executable, "-m", "derivls", "gradcheck", str(path), *args, "--summary-json", str(summary)],
        capture_output=True,
        text=True,
        cwd=cwd,
        env=env,
        check=False,
    )
    seconds = time.monotonic() - started
    data = json.loads(summary.read_text()) if summary.is_file() else {}
    return seconds, result.returncode, data, result.stderr + result.stdout


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", nargs="*", help="these entries only (default: --all)")
    parser.add_argument("--one", metavar="OP", help="time one entry cold (an empty cache) and warm")
    parser.add_argument("--write-expectations", type=Path, metavar="FILE")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="derivls-bench-gradcheck-") as tmp:
        folder = Path(tmp)
        path = wheel_copy(folder / "site-packages")
        if args.one:
            env = dict(os.environ, XDG_CACHE_HOME=str(folder / "cache"))
            for label in ("cold", "warm"):
                seconds, code, data, _ = run(path, ["--op", args.one], folder, env)
                print(f"{label}: {seconds:.1f} s (exit {code}, {data.get('counts')})")
            shutil.rmtree(folder / "cache", ignore_errors=True)
            return 0
        selection = [a for op in args.ops for a in ("--op", op)] if args.ops else ["--all"]
        seconds, code, data, output = run(path, selection, folder)
        print(output[-3000:])
        print(f"time: {seconds:.0f} s, exit {code}")
        print("counts:", data.get("counts"))
        print("not checkable by reason:", json.dumps(data.get("not_checkable_by_reason"), indent=1))
        if args.write_expectations:
            expectations = {
                "torch": "2.13",
                "ops": args.ops or "all",
                "units": {u["name"]: {"status": u["status"], "reason": u["reason"]} for u in data.get("units", [])},
            }
            args.write_expectations.write_text(json.dumps(expectations, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
