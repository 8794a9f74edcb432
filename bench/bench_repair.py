"""The repair that passes (derivls/gradcheck/trials.py) on the seeded sign / conj / swapped-input mistakes.

    python bench/bench_repair.py [--kinds sign,conj,swap] [--max-samples 4]

The mistakes of tests/gradcheck/mistakes.py of those kinds are seeded into copies of the 2.13 wheel's file, in
as few copies as keep one mistake per entry (two mistakes of one entry make its unit fail on two formulas, and
no single repair can pass), and each copy is checked with `derivls gradcheck --op ... --format json` (repairs
on). Per mistake: caught (a diagnostic on its line), the right repair offered (a suggestion on its line that is
the shipped formula, or the same formula written another way: repair.canonical), another repair offered (a
wrong one, or an equivalent rewrite canonical() does not see: printed, to be judged), none. Prints the time of
each run's repair phase (from its stderr) and the load (/proc/loadavg) before and after. Uses the user's cache
folder (the precompiled header is built once).
"""

from __future__ import annotations

import argparse
import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

KINDS = {"sign": "dropped sign", "conj": "missing .conj() (complex)", "swap": "swapped inputs"}


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def groups(mistakes: list[tuple[str, str, str, str]]) -> list[list[tuple[str, str, str, str]]]:
    """The mistakes in as few groups as keep each entry's mistakes apart."""
    out: list[list[tuple[str, str, str, str]]] = []
    for m in mistakes:
        for group in out:
            if all(other[0] != m[0] for other in group):
                group.append(m)
                break
        else:
            out.append([m])
    return out


def formula(line: str) -> str:
    """The formula of a `names: formula` line."""
    return line.split(": ", 1)[1].strip()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--kinds", default="sign,conj,swap", help="of: " + ", ".join(KINDS))
    parser.add_argument("--max-samples", type=int, default=4)
    args = parser.parse_args()

    from bench.bench_gradcheck import wheel_copy
    from derivls.gradcheck.repair import canonical
    from tests.gradcheck.conftest import replace_in_entry, subprocess_env
    from tests.gradcheck.mistakes import MISTAKES

    kinds = {KINDS[k.strip()] for k in args.kinds.split(",")}
    chosen = [m for m in MISTAKES if m[3] in kinds]
    print(f"{len(chosen)} seeded mistakes ({', '.join(sorted(kinds))}); load {load()}", flush=True)
    rows = []
    repair_seconds = []
    for number, group in enumerate(groups(chosen)):
        folder = Path(tempfile.mkdtemp(prefix=f"bench-repair-{number}-"))
        path = wheel_copy(folder / "site-packages")
        lines = {
            replace_in_entry(path, entry, shipped, mistaken): (entry, shipped, mistaken, kind)
            for entry, shipped, mistaken, kind in group
        }
        ops = list(dict.fromkeys(entry.split("(")[0] for entry, *_ in group))
        before = load()
        started = time.monotonic()
        result = subprocess.run(
            [
                sys.executable,
                "-m",
                "derivls",
                "gradcheck",
                str(path),
                *(a for op in ops for a in ("--op", op)),
                "--format",
                "json",
                "--max-samples",
                str(args.max_samples),
            ],
            capture_output=True,
            text=True,
            cwd=folder,
            env=subprocess_env(),
            check=False,
        )
        wall = time.monotonic() - started
        output = json.loads(result.stdout) if result.stdout.strip().startswith("{") else {}
        timing = re.search(
            r"build ([\d.]+) s .*run ([\d.]+) s(?:, repairs ([\d.]+) s \((\d+) candidates?, build ([\d.]+) s\))?",
            result.stderr,
        )
        repair = float(timing.group(3)) if timing and timing.group(3) else 0.0
        tried = int(timing.group(4)) if timing and timing.group(4) else 0
        repair_build = float(timing.group(5)) if timing and timing.group(5) else 0.0
        repair_seconds.append(repair)
        print(
            f"run {number + 1}: {len(group)} mistakes, {len(ops)} ops: {wall:.1f} s in all "
            f"(build {timing.group(1) if timing else '?'} s, checks {timing.group(2) if timing else '?'} s, "
            f"repair phase {repair:.1f} s: {tried} candidates, their build {repair_build:.1f} s); "
            f"load {before} -> {load()}",
            flush=True,
        )
        shutil.rmtree(folder, ignore_errors=True)
        if not output:
            print(result.stderr[-2000:])
        flagged = {d["line"] for d in output.get("diagnostics", [])}
        offered: dict[int, list[dict]] = {}
        for s in output.get("suggestions", []):
            offered.setdefault(s["line"], []).append(s)
        for line, (entry, shipped, mistaken, kind) in sorted(lines.items()):
            found = offered.get(line, [])
            right = any(canonical(s["formula"]) == canonical(formula(shipped)) for s in found)
            verdict = "right" if right else ("other" if found else "none")
            rows.append((entry, kind, line in flagged, verdict, found, shipped, mistaken))
    print()
    for entry, kind, caught, verdict, found, shipped, mistaken in rows:
        shown = "; ".join(s["formula"] for s in found)
        print(f"  {entry:<14} {kind:<26} caught={'yes' if caught else 'NO':<3} repair={verdict:<5} {shown}")
        if verdict == "other":
            print(f"      shipped: {formula(shipped)}   seeded: {formula(mistaken)}")
    caught = sum(1 for r in rows if r[2])
    right = sum(1 for r in rows if r[3] == "right")
    other = sum(1 for r in rows if r[3] == "other")
    print(
        f"\n{len(rows)} mistakes: {caught} caught, right repair offered {right} ({100 * right / max(len(rows), 1):.0f}%), "
        f"another repair offered {other}, none {len(rows) - right - other}; repair phase "
        f"{' + '.join(f'{s:.1f}' for s in repair_seconds)} s; load {load()}"
    )
    return 0


if __name__ == "__main__":
    sys.exit(main())
