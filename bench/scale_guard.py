"""The guard of `python bench/bench_scale.py --guard`: ratios measured in one run, never times.

Two bounds, each a ratio of two costs measured alternately in the same run, so a loaded machine
slows both sides and the ratio holds:

1. edit -> diagnostics on the 10x file / on the real file (1x): two servers, one per size, opened
   once; each round makes the same kind of edit on one, then the other (the order alternates),
   and waits for that version's publishDiagnostics. Fails above EDIT_BOUND (issue 37: the
   keystroke's cost must not grow with the file). Edits: a space added at the end of a one-line
   formula and taken away (the bench's edit), on formula lines spread over the whole file. A
   line added and taken away (Enter) is measured and printed, not bounded (see docs/performance.md).
2. `derivls check` after a one-entry edit (a text never checked before: the whole-result cache
   misses, the entry cache holds every other entry) / torchgen's whole-process load_derivatives,
   on the installed torch's files (the C++ headers found), --guard-checks rounds alternating. Fails
   when the ratio of the two sides' fastest rounds is above CHECK_BOUND (a 0.3 s process next to a 2.5 s
   one: a neighbour's burst of work can double one round of it, never make it faster, so the best round
   is the steady cost); also prints the median ratio and how many rounds met CHECK_TARGET.
3. The same with `check --daemon` (derivls/daemon/: a resident process answers, the edited entry alone
   analysed): fails above DAEMON_BOUND, issue 37's target itself. The daemon is started by the
   warm-up round and stopped at the end.

Exit status 1 if a bound is exceeded. The numbers and their bounds are in docs/performance.md.
"""

from __future__ import annotations

import asyncio
import os
import re
import shutil
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

from bench_scale import build
from bench_server import TORCHGEN, Client, child_environment, file_uri, formula_positions, p99, packaged_dir

EDIT_BOUND = 2.0  # 10x edit -> diagnostics / 1x (medians)
CHECK_TARGET = 0.05  # check after a new one-entry edit / torchgen (issue 37's goal: met by `check --daemon`)
# What the guard fails above (fastest rounds' ratio): not the target, which needs what docs/performance.md
# says. Unchanged code measured 0.09-0.13 (load 1.5-3); a check that redoes the file (the entry cache lost,
# a file-wide step per new edit: 0.25-0.30, as the cold check) fails; a regression of a few tens of ms
# does not (the per-stage bench, bench_edit_stages.py, shows those).
CHECK_BOUND = 0.20
# `check --daemon` (derivls/daemon/): the same edits answered by a resident process; the target itself.
DAEMON_BOUND = CHECK_TARGET


class Session:
    """One server with one derivatives.yaml open; `edit()` makes a change and times its diagnostics."""

    def __init__(self, client: Client, uri: str, text: str) -> None:
        self.client = client
        self.uri = uri
        self.positions = formula_positions(text)
        self.version = 1

    @classmethod
    async def open(cls, derivatives: Path) -> Session:
        text = derivatives.read_text(encoding="utf-8")
        client = await Client.start()  # DERIVLS_NO_CACHE=1 (edits()): no background save between keystrokes
        await client.initialize(derivatives.parent.parent)
        uri = file_uri(derivatives)
        await client.notify(
            "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}
        )
        await client.diagnostics_for(uri, None)
        return cls(client, uri, text)

    def place(self, i: int, of: int) -> tuple[int, int]:
        """The i-th of `of` formula ends spread over the whole file."""
        return self.positions[(i * len(self.positions)) // max(of, 1) % len(self.positions)]

    async def change(self, start: tuple[int, int], end: tuple[int, int], text: str) -> float:
        self.version += 1
        change = {
            "range": {
                "start": {"line": start[0], "character": start[1]},
                "end": {"line": end[0], "character": end[1]},
            },
            "text": text,
        }
        since = self.client.published_count()
        sent = await self.client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": self.uri, "version": self.version}, "contentChanges": [change]},
        )
        received, _ = await self.client.diagnostics_for(self.uri, self.version, since)
        return received - sent

    async def keystroke(self, i: int, of: int) -> list[float]:
        """A space added at the end of a formula, then taken away."""
        line, column = self.place(i, of)
        return [
            await self.change((line, column), (line, column), " "),
            await self.change((line, column), (line, column + 1), ""),
        ]

    async def enter(self, i: int, of: int) -> list[float]:
        """A line break added at the end of a formula, then taken away."""
        line, column = self.place(i, of)
        return [
            await self.change((line, column), (line, column), "\n"),
            await self.change((line, column), (line + 1, 0), ""),
        ]


async def edits(files: dict[int, Path], rounds: int) -> dict[str, dict[int, list[float]]]:
    before = os.environ.get("DERIVLS_NO_CACHE")
    os.environ["DERIVLS_NO_CACHE"] = "1"  # the servers' environment: no entry cache to write back meanwhile
    try:
        sessions = {size: await Session.open(path) for size, path in files.items()}
    finally:
        if before is None:
            del os.environ["DERIVLS_NO_CACHE"]
        else:
            os.environ["DERIVLS_NO_CACHE"] = before
    await asyncio.sleep(0.5)
    times: dict[str, dict[int, list[float]]] = {"keystroke": {s: [] for s in files}, "enter": {s: [] for s in files}}
    try:
        for i in range(rounds):
            order = list(files) if i % 2 == 0 else list(reversed(files))
            for kind in ("keystroke", "enter"):
                for size in order:
                    session = sessions[size]
                    done = await (session.keystroke(i, rounds) if kind == "keystroke" else session.enter(i, rounds))
                    times[kind][size] += done
                    await asyncio.sleep(0.03)  # typing pace: the server's idle work (saves, GC) runs between
    finally:
        for session in sessions.values():
            await session.client.close()
    return times


def _seconds(argv: list[str], env: dict[str, str]) -> float:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True)
    if done.returncode not in (0, 1):
        raise SystemExit(f"{argv[:4]} failed ({done.returncode}): {done.stderr.decode(errors='replace')[-2000:]}")
    return time.perf_counter() - start


_NAME = re.compile(r"^- name: .*\n", re.MULTILINE)


def check_rounds(rounds: int, scratch: Path, daemon: bool = False) -> list[tuple[float, float]]:
    """(check after a one-entry edit, torchgen) seconds per round, alternating (the order too); with
    `daemon`, `check --daemon` (the daemon started by the warm-up check, stopped at the end)."""
    packaged = packaged_dir()
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    original = (packaged / "autograd" / "derivatives.yaml").read_text(encoding="utf-8")
    work = scratch / "derivatives.yaml"
    env = child_environment(scratch / "cache")
    check = [sys.executable, "-m", "derivls", "check", str(work), "--native", str(native), "--tags", str(tags)]
    check += ["--daemon"] if daemon else []
    torchgen = [sys.executable, "-c", TORCHGEN, str(packaged / "autograd" / "derivatives.yaml"), str(native), str(tags)]
    work.write_text(original, encoding="utf-8")
    _seconds(check, env)  # the entry cache holds the real file's entries (and .pyc files, the page cache)
    time.sleep(1.0)  # its detached writer done
    _seconds(torchgen, env)
    results = []
    for i in range(rounds):
        # the entry at a different place each round, given a comment no cache has seen
        names = list(_NAME.finditer(original))
        m = names[(i * 97 + 13) % len(names)]
        work.write_text(f"{original[: m.end()]}  # guard {os.getpid()}.{i}\n{original[m.end() :]}", encoding="utf-8")
        if i % 2 == 0:
            ours = _seconds(check, env)
            theirs = _seconds(torchgen, env)
        else:
            theirs = _seconds(torchgen, env)
            ours = _seconds(check, env)
        results.append((ours, theirs))
        time.sleep(0.5)  # the check's detached cache writer
    if daemon:
        subprocess.run([sys.executable, "-m", "derivls", "daemon", "stop"], env=env, capture_output=True, check=True)
    return results


def _load() -> str:
    try:
        return "load average " + " ".join(f"{x:.2f}" for x in os.getloadavg())
    except OSError:
        return "load average n/a"


def run(files_dir: Path | None, edit_rounds: int, check_runs: int) -> int:
    failed = False
    print(f"guard: {_load()} at the start")
    with tempfile.TemporaryDirectory(prefix="derivls-guard-") as tmp:
        root = files_dir or Path(tmp) / "files"
        files = {size: build(size, root)[0] for size in (1, 10)}
        times = asyncio.run(edits(files, edit_rounds))
        print(f"edit -> diagnostics, a server per size, {edit_rounds} rounds alternating (ms):")
        print(f"  {'edit':<10} {'1x med':>7} {'1x p99':>7} {'10x med':>8} {'10x p99':>8} {'ratio':>6}  bound")
        for kind, by_size in times.items():
            one, ten = by_size[1], by_size[10]
            ratio = statistics.median(ten) / statistics.median(one)
            verdict = "(not bounded)"
            if kind == "keystroke":
                ok = ratio <= EDIT_BOUND
                failed |= not ok
                verdict = f"<= {EDIT_BOUND}: {'ok' if ok else 'FAIL'}"
            print(
                f"  {kind:<10} {statistics.median(one) * 1000:7.2f} {p99(one) * 1000:7.2f} "
                f"{statistics.median(ten) * 1000:8.2f} {p99(ten) * 1000:8.2f} {ratio:6.2f}  {verdict}"
            )
        for daemon, bound in ((False, CHECK_BOUND), (True, DAEMON_BOUND)):
            scratch = Path(tmp) / "check"
            scratch.mkdir()
            rounds = check_rounds(check_runs, scratch, daemon)
            shutil.rmtree(scratch, ignore_errors=True)
            failed |= not report_checks(rounds, "check --daemon" if daemon else "check", bound)
    print(f"guard: {_load()} at the end; {'FAILED' if failed else 'passed'}")
    return 1 if failed else 0


def report_checks(rounds: list[tuple[float, float]], what: str, bound: float) -> bool:
    """Print the rounds and their ratios; whether the fastest rounds' ratio is within `bound`."""
    ratios = [ours / theirs for ours, theirs in rounds]
    print(f"{what} after a new one-entry edit / torchgen load_derivatives, {len(rounds)} rounds alternating:")
    for i, (ours, theirs) in enumerate(rounds, 1):
        print(f"  round {i}: {what} {ours * 1000:6.0f} ms, torchgen {theirs * 1000:6.0f} ms, ratio {ours / theirs:.3f}")
    best = min(ours for ours, _ in rounds) / min(theirs for _, theirs in rounds)
    ok = best <= bound
    met = sum(r <= CHECK_TARGET for r in ratios)
    print(
        f"  fastest rounds' ratio {best:.3f} (bound {bound}: {'ok' if ok else 'FAIL'}); median ratio "
        f"{statistics.median(ratios):.3f}; {met} of {len(ratios)} rounds <= the target {CHECK_TARGET}"
    )
    return ok


def main(args: Any) -> int:
    return run(args.files, args.guard_rounds, args.guard_checks)
