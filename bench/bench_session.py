"""The gradcheck session (derivls/gradcheck/session.py) against the one-shot path, in one run.

    python bench/bench_session.py [--edits 5] [--one-shot 3] [--rss-edits 0]

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


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def edited(text: str, n: int) -> str:
    assert FORMULA in text
    return text.replace(FORMULA, FORMULA.rstrip("\n") + f" * ({n}.0 / {n}.0)\n", 1)


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5, help="edits timed with the session warm")
    parser.add_argument("--one-shot", type=int, default=3, help="edits timed on the one-shot path")
    parser.add_argument("--rss-edits", type=int, default=0, help="more edits, then the session's RSS")
    args = parser.parse_args()

    from bench.bench_gradcheck import wheel_copy
    from derivls.gradcheck import session as sessions
    from derivls.gradcheck.worker import run
    from derivls.project import open_project

    folder = Path(tempfile.mkdtemp(prefix="bench-session-"))
    path = wheel_copy(folder / "site-packages")
    native = path.parent.parent / "ATen" / "native" / "native_functions.yaml"
    tags = native.parent / "tags.yaml"
    base = path.read_text()
    project = open_project(path, native, tags, "auto")
    setup: dict = {}
    edit = [int(time.time() * 1000)]  # an edit no earlier run of the bench built: a compile each time

    def once(session) -> tuple[float, str]:
        edit[0] += 1
        text = edited(base, edit[0])
        analysis = project.analyzer.analyse(text)
        line = text.splitlines().index("- name: acos(Tensor self) -> Tensor")
        request = {"path": str(path), "text": text, "native": str(native), "tags": str(tags), "lines": [line]}
        out = io.StringIO()
        started = time.monotonic()
        run(request, out, analysis=analysis, session=session, setup=setup)
        took = time.monotonic() - started
        last = json.loads(out.getvalue().splitlines()[-1])
        verdict = last["entries"][0]["verdict"] if "entries" in last else last.get("error", "?")
        return took, verdict

    print(f"load {load()} at the start", flush=True)
    session = sessions.Session(sys.executable)
    started = time.monotonic()
    session.start()
    session.ready.wait(300)
    print(f"session start: {time.monotonic() - started:.1f} s ({session.state}), load {load()}", flush=True)
    once(session)  # the first run finds the reach index and acos's samples
    warm = []
    for _ in range(args.edits):
        took, verdict = once(session)
        warm.append(took)
        print(f"  session, edited acos: {took:.2f} s {verdict} (load {load()})", flush=True)
    shot = []
    for _ in range(args.one_shot):
        took, verdict = once(None)
        shot.append(took)
        print(f"  one-shot, edited acos: {took:.2f} s {verdict} (load {load()})", flush=True)
    rss_before = session.rss()
    for _ in range(args.rss_edits):
        once(session)
    print(
        f"session, edited acos: median {statistics.median(warm):.2f} s of {len(warm)}"
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
