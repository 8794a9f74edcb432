"""`derivls gradcheck --all` on the installed torch wheel's derivatives.yaml (a copy laid out as
site-packages), timed; prints the summary (checked / passed / failed / not checkable by reason) and
optionally writes the baseline expectations file the gradcheck tests compare with.

    python bench/bench_gradcheck.py [--ops acos mul.Tensor ...] [--write-expectations FILE]
    python bench/bench_gradcheck.py --one acos     # one entry: cold (an empty cache), warm (unchanged)
                                                   # and edited (its formula changed: the extension is
                                                   # compiled again, the precompiled header is reused)

Without --ops: every entry (--all): tens of minutes on 2 cores, GBs of RAM for the compiler. The run is
compared with the expectations file (default for --all: tests/gradcheck/baseline-all-2.13.json): how many
units match it, which differ (a pass that was expected to fail or be not checkable is progress: refresh the
file with --write-expectations), and the times (build, run) as derivls printed them.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
import time
from collections import Counter
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))


def packaged() -> Path:
    import importlib.util

    spec = importlib.util.find_spec("torchgen")
    if spec is None or spec.origin is None:
        sys.exit("torch (torchgen) is not installed")
    return Path(spec.origin).parent / "packaged"


def wheel_copy(folder: Path) -> Path:
    from derivls.base.cachedir import cache_directory

    # tests.conftest points DERIVLS_CACHE_DIR at a fresh temporary folder unless it is set: the bench
    # uses the user's cache (the precompiled header and extensions are kept, as for a user)
    os.environ.setdefault("DERIVLS_CACHE_DIR", str(cache_directory()))
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


ALL_EXPECTATIONS = Path(__file__).resolve().parent.parent / "tests" / "gradcheck" / "baseline-all-2.13.json"


def _kind(reason: str) -> str:
    return reason.split(":", 1)[0].strip()


def keyed(units: list[dict]) -> dict[str, dict]:
    """The units by name, or by `name (function)` for a name several entries share (`eq`: one per overload)."""
    names = Counter(u["name"] for u in units)
    return {(u["name"] if names[u["name"]] == 1 else f"{u['name']} ({u['function']})"): u for u in units}


def compare(data: dict, expected: dict, where: Path) -> None:
    """Print how the run's units compare with the expectations file's."""
    found = keyed(data.get("units", []))
    same = [
        n
        for n, u in found.items()
        if n in expected and u["status"] == expected[n]["status"] and _kind(u["reason"]) == _kind(expected[n]["reason"])
    ]
    print(f"expectations ({where.name}): {len(same)} of {len(expected)} units as expected")
    for name in sorted(set(found) | set(expected)):
        u, e = found.get(name), expected.get(name)
        if u is None or e is None:
            print(f"  {name}: {'not in this run' if u is None else 'not in the expectations'}")
        elif name not in same:
            print(f"  {name}: {u['status']} ({u['reason'][:120]}), expected {e['status']} ({e['reason'][:120]})")


def parenthesize_first_formula(path: Path, op: str) -> bool:
    """Edit the entry `- name: OP(...)`: its first formula `key: F` becomes `key: (F)` (the same math, another
    text: what an edit costs when the precompiled header and helpers are cached)."""
    lines = path.read_text(encoding="utf-8").splitlines(keepends=True)
    start = next((i for i, line in enumerate(lines) if line.startswith(f"- name: {op}(")), None)
    if start is None:
        return False
    for i in range(start + 1, len(lines)):
        if lines[i].startswith("- name:"):
            return False
        m = re.match(r"^(  \w+: )(.+?)\s*$", lines[i])
        one_line = i + 1 >= len(lines) or not lines[i + 1].startswith("    ")
        plain = not m[2].startswith(("'", '"', "|", ">")) if m else False
        if (
            m
            and plain
            and one_line
            and m[1].strip() not in ("dispatch:", "output_differentiability:")
            and "auto_" not in m[2]
        ):
            lines[i] = f"{m[1]}({m[2]})\n"
            path.write_text("".join(lines), encoding="utf-8")
            return True
    return False


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--ops", nargs="*", help="these entries only (default: --all)")
    parser.add_argument("--one", metavar="OP", help="time one entry cold (an empty cache) and warm")
    parser.add_argument("--write-expectations", type=Path, metavar="FILE")
    parser.add_argument("--expectations", type=Path, metavar="FILE", help="compare with this file")
    parser.add_argument("--save", type=Path, metavar="FOLDER", help="keep the full output and summary JSON here")
    args = parser.parse_args()
    with tempfile.TemporaryDirectory(prefix="derivls-bench-gradcheck-") as tmp:
        folder = Path(tmp)
        path = wheel_copy(folder / "site-packages")
        if args.one:
            env = dict(os.environ, DERIVLS_CACHE_DIR=str(folder / "cache"))
            for label in ("cold", "warm", "edited"):
                if label == "edited" and not parenthesize_first_formula(path, args.one):
                    print(f"edited: no `- name: {args.one}(` entry with a formula to edit")
                    break
                seconds, code, data, output = run(path, ["--op", args.one], folder, env)
                times = re.search(r"build ([\d.]+) s \((\w+)[^)]*\), run ([\d.]+) s", output)
                parts = f"build {times[1]} s ({times[2]}), run after it {times[3]} s" if times else "no timings printed"
                print(f"{label}: {seconds:.1f} s: {parts} (exit {code}, {data.get('counts')})")
            shutil.rmtree(folder / "cache", ignore_errors=True)
            return 0
        selection = [a for op in args.ops for a in ("--op", op)] if args.ops else ["--all"]
        seconds, code, data, output = run(path, selection, folder)
        if args.save:
            args.save.mkdir(parents=True, exist_ok=True)
            (args.save / "output.txt").write_text(output)
            (args.save / "summary.json").write_text(json.dumps(data, indent=1))
        print(output[-3000:])
        print(f"time: {seconds:.0f} s, exit {code}")
        print("counts:", data.get("counts"))
        c = data.get("counts") or {}
        if c:
            total = c["checked"] + c["not-checkable"]
            print(
                f"passed {c['passed']} of {c['checked']} checked ({100 * c['passed'] / max(1, c['checked']):.0f}%); "
                f"checked {c['checked']} of {total} units ({100 * c['checked'] / max(1, total):.0f}%); "
                f"checks run: {data.get('checks')}"
            )
        print("not checkable by reason:", json.dumps(data.get("not_checkable_by_reason"), indent=1))
        if "checkable_at_most" in data:
            facts = data["not_checkable_for_facts"]
            print(
                f"not checkable for a fact about the op: {facts}; for a limit of the harness: "
                f"{c.get('not-checkable', 0) - facts}; checkable at most: {data['checkable_at_most']}"
            )
        times = re.search(r"build ([\d.]+) s \((\w+)[^)]*\), run ([\d.]+) s", output)
        if times:
            print(f"build {times.group(1)} s ({times.group(2)}), run {times.group(3)} s")
        expected = args.expectations or (None if args.ops else ALL_EXPECTATIONS)
        if expected is not None and expected.is_file():
            compare(data, json.loads(expected.read_text())["units"], expected)
        if args.write_expectations:
            expectations = {
                "about": (
                    "derivls gradcheck of the unmodified 2.13 derivatives.yaml"
                    + (" (these entries)" if args.ops else " (--all, bench/bench_gradcheck.py)")
                    + ": every unit passes or is listed with its reason; a reason of the kinds 'nothing to check',"
                    " 'no CPU kernel', 'not implemented', \"another backend's formula\" and 'not a derivative by design'"
                    " is a fact about the op, any"
                    " other a limit of the harness (the list should shrink)"
                ),
                "torch": "2.13",
                "ops": args.ops or "all",
                "counts": data.get("counts"),
                "not_checkable_by_reason": data.get("not_checkable_by_reason"),
                "not_checkable_for_facts": data.get("not_checkable_for_facts"),
                "checkable_at_most": data.get("checkable_at_most"),
                "units": {
                    key: {"function": u["function"], "status": u["status"], "reason": u["reason"]}
                    for key, u in keyed(data.get("units", [])).items()
                },
            }
            args.write_expectations.write_text(json.dumps(expectations, indent=1, sort_keys=True) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
