"""The gradcheck session (derivls/gradcheck/session.py) against the one-shot path, in one run.

    python bench/bench_session.py [--edits 5] [--one-shot 3] [--rss-edits 0] [--op acos|mul.Tensor] [--wrong N]

An edited acos: each edit changes acos's formula text (a new, still right, formula: `... * (N.0 / N.0)`
with an N never used before) so the extension is compiled again (the precompiled header and helpers cached), then
gradchecks it through the gradcheck worker's code (derivls.gradcheck.worker.run: what the server runs for a
save, from the document's text to the diagnostics' JSON), with the session warm and with the one-shot path
(a torch child started per run). Prints each time, the medians, the session's start time, its RSS after the
edits, and the load (/proc/loadavg) before and after. Uses the user's cache folder (the pch is built once).
"""

from __future__ import annotations

import argparse
import io
import json
import os
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

FORMULA = "  self: grad * -((-self * self + 1).rsqrt()).conj()\n"
WRONG = "  self: grad * ((-self * self + 1).rsqrt()).conj()\n"  # the sign dropped: fails, the repair restores it
# the entries an edit changes: (the name line, the formula line edited)
ENTRIES = {
    "acos": ("- name: acos(Tensor self) -> Tensor", FORMULA),
    "mul.Tensor": (
        "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor",
        "  self: mul_tensor_backward(grad, other, self.scalar_type())\n",
    ),
}


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def edited(text: str, n: int, formula: str = FORMULA, wrong: bool = False) -> str:
    assert formula in text
    new = WRONG if wrong else formula
    return text.replace(formula, new.rstrip("\n") + f" * ({n}.0 / {n}.0)\n", 1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5, help="edits timed with the session warm")
    parser.add_argument("--one-shot", type=int, default=3, help="edits timed on the one-shot path")
    parser.add_argument("--rss-edits", type=int, default=0, help="more edits, then the session's RSS")
    parser.add_argument("--op", choices=sorted(ENTRIES), default="acos", help="the entry edited")
    parser.add_argument("--wrong", type=int, default=0, help="edits of acos with its sign dropped (failed, repaired)")
    args = parser.parse_args()
    name_line, formula = ENTRIES[args.op]

    from bench.bench_gradcheck import wheel_copy
    from derivls.gradcheck import session as sessions
    from derivls.gradcheck.worker import run
    from derivls.project.opener import open_project

    folder = Path(tempfile.mkdtemp(prefix="bench-session-"))
    path = wheel_copy(folder / "site-packages")
    native = path.parent.parent / "ATen" / "native" / "native_functions.yaml"
    tags = native.parent / "tags.yaml"
    base = path.read_text()
    project = open_project(path, native, tags, "auto")
    setup: dict = {}
    edit = [int(time.time() * 1000)]  # an edit no earlier run of the bench built: a compile each time

    def once(session, wrong: bool = False) -> tuple[float, str]:
        edit[0] += 1
        op_line, op_formula = ENTRIES["acos"] if wrong else (name_line, formula)
        text = edited(base, edit[0], op_formula, wrong)
        analysis = project.analyzer.analyse(text)
        line = text.splitlines().index(op_line)
        request = {"path": str(path), "text": text, "native": str(native), "tags": str(tags), "lines": [line]}
        out = io.StringIO()
        started = time.monotonic()
        run(request, out, analysis=analysis, session=session, setup=setup)
        took = time.monotonic() - started
        last = json.loads(out.getvalue().splitlines()[-1])
        verdict = last["entries"][0]["verdict"] if "entries" in last else last.get("error", "?")
        if wrong:
            fixes = [f for e in last.get("entries", []) for d in e["diagnostics"] for f in d.get("fixes", [])]
            verdict += f", {len(fixes)} repair{'s' if len(fixes) != 1 else ''} offered"
        how = f"JIT, Cling {last.get('jit_define', 0):.2f} s" if last.get("jit") else "g++"
        return took, f"{verdict} ({how})" if session is not None else verdict

    print(f"load {load()} at the start", flush=True)
    session = sessions.Session(sys.executable)
    started = time.monotonic()
    session.start()
    session.ready.wait(300)
    print(
        f"session start: {time.monotonic() - started:.1f} s ({session.state}; JIT {session.jit}), load {load()}",
        flush=True,
    )
    took, verdict = once(session)  # the session's first run of the entry: its samples found then
    print(f"  session, first edit of {args.op} (its samples found): {took:.2f} s {verdict} (load {load()})", flush=True)
    warm = []
    for _ in range(args.edits):
        took, verdict = once(session)
        warm.append(took)
        print(f"  session, edited {args.op}: {took:.2f} s {verdict} (load {load()})", flush=True)
    wrong = []
    for _ in range(args.wrong):
        took, verdict = once(session, wrong=True)
        wrong.append(took)
        print(f"  session, acos with its sign dropped: {took:.2f} s {verdict} (load {load()})", flush=True)
    shot = []
    for _ in range(args.one_shot):
        took, verdict = once(None)
        shot.append(took)
        print(f"  one-shot, edited {args.op}: {took:.2f} s {verdict} (load {load()})", flush=True)
    rss_before = session.rss()
    for n in range(1, args.rss_edits + 1):
        took, verdict = once(session)
        if n % 25 == 0 or n == args.rss_edits:  # (a restart, above the bound or for a broken JIT, shows here)
            print(
                f"  {args.edits + 1 + n} edits: RSS {session.rss() / 2**20:.0f} MB, {session.starts} starts, JIT {session.jit_runs} runs,"
                f" last {took:.2f} s {verdict} (load {load()})",
                flush=True,
            )
    print(
        f"session, edited {args.op}: median {statistics.median(warm):.2f} s of {len(warm)}"
        + (f"; sign dropped: median {statistics.median(wrong):.2f} s of {len(wrong)}" if wrong else "")
        + (f"; one-shot: median {statistics.median(shot):.2f} s of {len(shot)}" if shot else "")
        + f"; RSS {rss_before / 2**20:.0f} MB after {args.edits + 1} edits"
        + (f", {session.rss() / 2**20:.0f} MB after {args.edits + 1 + args.rss_edits}" if args.rss_edits else "")
        + f"; load {load()} at the end",
        flush=True,
    )
    session.close()
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    os.environ.pop("DERIVLS_CACHE_DIR", None)
    return 0


if __name__ == "__main__":
    sys.exit(main())
