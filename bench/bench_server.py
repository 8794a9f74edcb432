"""Drive the real derivls server over stdio on the real 2.13 files and time what an editor feels.

Prints medians and p99 of:
  open → first diagnostics   (a fresh server per run: didOpen right after `initialized`, so
                               indexing native_functions.yaml is included)
  edit → diagnostics         (one formula changed: didChange → publishDiagnostics of that version;
                               edits are spaced like typing, --edit-gap seconds apart)
  hover on `name:`, inlay hints for 100 lines, completion in `name:`
  semantic tokens of the whole file (the first request, then warm, then right after one-formula edits)
  server RSS                  (VmRSS / VmHWM of the server process at the end)
and, measured in the same run, a whole-process torchgen `load_derivatives` on the same files,
with the ratio open→diagnostics / torchgen (target <= 0.2).

    python bench/bench_server.py [--runs 5] [--edits 200] [--requests 200] [--torchgen-runs 5] [--json]
    python bench/bench_server.py --spawn [--runs 7]

`--spawn` measures only a server's start, alternating in the same run: spawn → first diagnostics
with a warm cache (DERIVLS_CACHE_DIR filled by one earlier session: the boot phase answers,
server/boot.py), with an empty cache (a fresh folder per run), torchgen's whole-process
`load_derivatives`, and the time to import the server's entry module and the full server
(`python -c "import derivls.server.runtime.main"` / `"import derivls.server.runtime.handlers"`). Target (issue 13):
warm spawn → first diagnostics <= 0.15 × torchgen.

Targets (issue 3): edit → diagnostics median <= 10 ms and p99 <= 40 ms; hover median <= 5 ms;
open → diagnostics <= 0.2 × torchgen; RSS <= 150 MB.
"""

from __future__ import annotations

import argparse
import asyncio
import importlib.util
import json
import os
import random
import re
import statistics
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

TORCHGEN = """
import sys
from torchgen.packaged.autograd.load_derivatives import load_derivatives
infos, keys = load_derivatives(sys.argv[1], sys.argv[2], sys.argv[3])
assert sum(len(v) for v in infos.values()) > 0
"""


def packaged_dir() -> Path:
    spec = importlib.util.find_spec("torchgen")  # finds the files without importing torchgen
    if spec is None or not spec.submodule_search_locations:
        sys.exit("torchgen not found: pip install torch==2.13.0")
    return Path(list(spec.submodule_search_locations)[0]) / "packaged"


def child_environment(cache: Path | None = None) -> dict[str, str]:
    env = dict(os.environ)
    env.pop("PYTHONDONTWRITEBYTECODE", None)
    if cache is not None:
        env.pop("DERIVLS_NO_CACHE", None)
        env["DERIVLS_CACHE_DIR"] = str(cache)
    return env


def file_uri(path: Path) -> str:
    return path.resolve().as_uri()


def p99(values: list[float]) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(round(0.99 * (len(ordered) - 1))))]


class Client:
    """A minimal JSON-RPC client over the server's stdio (no pygls on this side: nothing to skew timings)."""

    def __init__(self, proc: asyncio.subprocess.Process) -> None:
        self.proc = proc
        self.next_id = 0
        self.waiting: dict[int, asyncio.Future[Any]] = {}
        self.notifications: dict[str, list[tuple[float, Any]]] = {}
        self.notified = asyncio.Event()
        self.reader = asyncio.ensure_future(self._read())

    @classmethod
    async def start(cls, *args: str, cache: Path | None = None) -> Client:
        proc = await asyncio.create_subprocess_exec(
            sys.executable,
            "-m",
            "derivls",
            *args,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            env=child_environment(cache),
            limit=1 << 26,
        )
        return cls(proc)

    async def _read(self) -> None:
        stdout = self.proc.stdout
        assert stdout is not None
        while True:
            length = None
            while True:
                line = await stdout.readline()
                if not line:
                    return
                line = line.strip()
                if not line:
                    break
                name, _, value = line.partition(b":")
                if name.lower() == b"content-length":
                    length = int(value)
            body = await stdout.readexactly(length or 0)
            received = time.perf_counter()
            message = json.loads(body)
            if "id" in message and "method" in message:  # a request from the server
                self._send({"jsonrpc": "2.0", "id": message["id"], "result": self._answer(message)})
            elif "id" in message:
                future = self.waiting.pop(message["id"], None)
                if future is not None and not future.done():
                    future.set_result((received, message))
            else:
                self.notifications.setdefault(message["method"], []).append((received, message.get("params")))
                self.notified.set()

    def _answer(self, message: dict[str, Any]) -> Any:
        if message["method"] == "workspace/configuration":
            return [None for _ in message["params"]["items"]]
        return None

    def _send(self, message: dict[str, Any]) -> None:
        body = json.dumps(message).encode()
        assert self.proc.stdin is not None
        self.proc.stdin.write(b"Content-Length: %d\r\n\r\n%s" % (len(body), body))

    async def request(self, method: str, params: Any) -> tuple[float, Any]:
        """(seconds from sending to the answer, result)."""
        self.next_id += 1
        future: asyncio.Future[Any] = asyncio.get_running_loop().create_future()
        self.waiting[self.next_id] = future
        sent = time.perf_counter()
        self._send({"jsonrpc": "2.0", "id": self.next_id, "method": method, "params": params})
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()
        received, message = await asyncio.wait_for(future, timeout=120)
        if "error" in message:
            raise RuntimeError(f"{method}: {message['error']}")
        return received - sent, message.get("result")

    async def notify(self, method: str, params: Any) -> float:
        sent = time.perf_counter()
        self._send({"jsonrpc": "2.0", "method": method, "params": params})
        assert self.proc.stdin is not None
        await self.proc.stdin.drain()
        return sent

    async def diagnostics_for(self, uri: str, version: int | None, since: int = 0) -> tuple[float, Any]:
        """The first publishDiagnostics for `uri` (of `version`, if given) among notifications[since:]."""
        while True:
            published = self.notifications.get("textDocument/publishDiagnostics", [])
            for received, params in published[since:]:
                if params["uri"] == uri and (version is None or params.get("version") == version):
                    return received, params
            self.notified.clear()
            await asyncio.wait_for(self.notified.wait(), timeout=120)

    def published_count(self) -> int:
        return len(self.notifications.get("textDocument/publishDiagnostics", []))

    async def initialize(self, root: Path) -> None:
        await self.request(
            "initialize",
            {
                "processId": os.getpid(),
                "rootUri": file_uri(root),
                "capabilities": {
                    "textDocument": {"hover": {"contentFormat": ["markdown", "plaintext"]}},
                    "window": {"workDoneProgress": True},
                    "workspace": {"configuration": True},
                },
            },
        )
        await self.notify("initialized", {})

    def rss(self) -> tuple[int, int]:
        """(VmRSS, VmHWM) of the server in KiB."""
        values = {}
        with open(f"/proc/{self.proc.pid}/status", encoding="ascii") as f:
            for line in f:
                if line.startswith(("VmRSS:", "VmHWM:")):
                    values[line.split(":")[0]] = int(line.split()[1])
        return values.get("VmRSS", 0), values.get("VmHWM", 0)

    async def close(self) -> None:
        try:
            await self.request("shutdown", None)
            await self.notify("exit", None)
            await asyncio.wait_for(self.proc.wait(), timeout=10)
        except Exception:
            self.proc.kill()
            await self.proc.wait()
        self.reader.cancel()


def did_open(uri: str, text: str) -> dict[str, Any]:
    return {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}


async def open_to_diagnostics(root: Path, path: Path, text: str, server_args: list[str]) -> tuple[float, float, Client]:
    """(didOpen → diagnostics, process start → diagnostics, the client)."""
    spawned = time.perf_counter()
    client = await Client.start(*server_args)
    await client.initialize(root)
    sent = await client.notify("textDocument/didOpen", did_open(file_uri(path), text))
    received, params = await client.diagnostics_for(file_uri(path), None)
    if params["diagnostics"]:
        print(f"warning: {len(params['diagnostics'])} diagnostics on the real file", file=sys.stderr)
    return received - sent, received - spawned, client


async def spawn_to_diagnostics(root: Path, path: Path, text: str, cache: Path) -> float:
    """Process spawn → the first publishDiagnostics of the opened file (initialize, initialized, didOpen
    sent as an editor sends them), with DERIVLS_CACHE_DIR=`cache`."""
    spawned = time.perf_counter()
    client = await Client.start(cache=cache)
    await client.initialize(root)
    await client.notify("textDocument/didOpen", did_open(file_uri(path), text))
    received, _ = await client.diagnostics_for(file_uri(path), 1)
    await client.close()
    return received - spawned


def time_process(argv: list[str]) -> float:
    started = time.perf_counter()
    subprocess.run(argv, check=True, env=child_environment(), capture_output=True)
    return time.perf_counter() - started


async def measure_spawn(runs: int) -> dict[str, Any]:
    import shutil
    import tempfile

    packaged = packaged_dir()
    derivatives = packaged / "autograd" / "derivatives.yaml"
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    text = derivatives.read_text(encoding="utf-8")
    torchgen = [sys.executable, "-c", TORCHGEN, str(derivatives), str(native), str(tags)]
    entry = [sys.executable, "-c", "import derivls.server.runtime.main"]
    full = [sys.executable, "-c", "import derivls.server.runtime.handlers"]
    warm_s: list[float] = []
    cold_s: list[float] = []
    torchgen_s: list[float] = []
    entry_s: list[float] = []
    full_s: list[float] = []
    with tempfile.TemporaryDirectory(prefix="derivls-bench-") as scratch:
        warm = Path(scratch) / "warm"
        await spawn_to_diagnostics(packaged, derivatives, text, warm)  # fills the cache (and .pyc files)
        time_process(torchgen)
        for i in range(runs):
            warm_s.append(await spawn_to_diagnostics(packaged, derivatives, text, warm))
            empty = Path(scratch) / f"cold-{i}"
            cold_s.append(await spawn_to_diagnostics(packaged, derivatives, text, empty))
            shutil.rmtree(empty, ignore_errors=True)
            torchgen_s.append(time_process(torchgen))
            entry_s.append(time_process(entry))
            full_s.append(time_process(full))
    return {
        "runs": runs,
        "warm_spawn_to_diagnostics_ms": summary(warm_s),
        "cold_spawn_to_diagnostics_ms": summary(cold_s),
        "torchgen_load_derivatives_ms": summary(torchgen_s),
        "import_server_entry_ms": summary(entry_s),
        "import_full_server_ms": summary(full_s),
        "warm_ratio_to_torchgen": statistics.median(w / t for w, t in zip(warm_s, torchgen_s)),
        "cold_ratio_to_torchgen": statistics.median(c / t for c, t in zip(cold_s, torchgen_s)),
        "warm_target_ratio": 0.15,
    }


def report_spawn(results: dict[str, Any]) -> None:
    print(f"{'':44} {'median':>10} {'min':>10} {'n':>5}")
    for label, key in (
        ("spawn → first diagnostics, warm cache", "warm_spawn_to_diagnostics_ms"),
        ("spawn → first diagnostics, empty cache", "cold_spawn_to_diagnostics_ms"),
        ("torchgen load_derivatives (process)", "torchgen_load_derivatives_ms"),
        ("python -c 'import derivls.server.runtime.main'", "import_server_entry_ms"),
        ("python -c 'import derivls.server.runtime.handlers'", "import_full_server_ms"),
    ):
        r = results[key]
        print(f"{label:44} {r['median']:9.1f}ms {r['min']:9.1f}ms {r['n']:5d}")
    warm = results["warm_ratio_to_torchgen"]
    print(
        f"median ratio spawn → diagnostics / torchgen: warm cache {warm:.3f} "
        f"({'meets' if warm <= 0.15 else 'MISSES'} the 0.15 target), empty cache {results['cold_ratio_to_torchgen']:.3f}"
    )


def formula_positions(text: str) -> list[tuple[int, int]]:
    """(line, column) just after the end of every one-line backward formula (`  self: …`)."""
    positions = []
    for i, line in enumerate(text.split("\n")):
        m = re.match(r"^\s+(\w+): (.+)$", line)
        if m and m.group(1) not in ("name", "dispatch", "output_differentiability", "result") and "#" not in line:
            positions.append((i, len(line)))
    return positions


def name_positions(text: str) -> list[tuple[int, int]]:
    return [(i, 10) for i, line in enumerate(text.split("\n")) if line.startswith("- name: ")]


def summary(values: list[float], scale: float = 1000.0) -> dict[str, float]:
    return {
        "median": statistics.median(values) * scale,
        "p99": p99(values) * scale,
        "min": min(values) * scale,
        "n": len(values),
    }


async def measure(args: argparse.Namespace) -> dict[str, Any]:
    packaged = packaged_dir()
    derivatives = packaged / "autograd" / "derivatives.yaml"
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    text = derivatives.read_text(encoding="utf-8")
    uri = file_uri(derivatives)
    root = packaged
    rng = random.Random(args.seed)
    results: dict[str, Any] = {}

    # open → first diagnostics, a fresh server each run; alternate with torchgen runs
    opens: list[float] = []
    starts: list[float] = []
    torchgen: list[float] = []
    client = None
    for run in range(max(args.runs, args.torchgen_runs)):
        if run < args.runs:
            server_args = ["--log-level", "DEBUG", "--log-file", args.server_log] if args.server_log else []
            seconds, from_spawn, fresh = await open_to_diagnostics(root, derivatives, text, server_args)
            opens.append(seconds)
            starts.append(from_spawn)
            if client is not None:
                await client.close()
            client = fresh
        if run < args.torchgen_runs:
            start = time.perf_counter()
            subprocess.run(
                [sys.executable, "-c", TORCHGEN, str(derivatives), str(native), str(tags)],
                check=True,
                env=child_environment(),
            )
            torchgen.append(time.perf_counter() - start)
    assert client is not None
    results["open_to_diagnostics_ms"] = summary(opens)
    results["process_start_to_diagnostics_ms"] = summary(starts)
    results["torchgen_load_derivatives_ms"] = summary(torchgen)
    results["open_ratio_to_torchgen"] = statistics.median(opens) / statistics.median(torchgen)

    # one-formula edit → publishDiagnostics of that version
    positions = formula_positions(text)
    version = 1
    edits: list[float] = []
    current = text.split("\n")
    for i in range(args.edits):
        line, column = positions[rng.randrange(len(positions))]
        version += 1
        # append " " to a formula, then take it away again: the text stays valid
        if i % 2 == 0:
            change = {
                "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column}},
                "text": " ",
            }
            current[line] += " "
            last_edit = (line, column)
        else:
            line, column = last_edit
            change = {
                "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": column + 1}},
                "text": "",
            }
            current[line] = current[line][:column]
        since = client.published_count()
        sent = await client.notify(
            "textDocument/didChange",
            {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
        )
        received, params = await client.diagnostics_for(uri, version, since)
        edits.append(received - sent)
        if params["diagnostics"]:
            print(f"warning: edit {i} gave {len(params['diagnostics'])} diagnostics", file=sys.stderr)
        await asyncio.sleep(args.edit_gap)
    results["edit_to_diagnostics_ms"] = summary(edits)

    doc = {"uri": uri}
    names = name_positions(text)
    hovers = []
    for _ in range(args.requests):
        line, column = names[rng.randrange(len(names))]
        seconds, result = await client.request(
            "textDocument/hover", {"textDocument": doc, "position": {"line": line, "character": column}}
        )
        assert result is not None, (line, column)
        hovers.append(seconds)
    results["hover_name_ms"] = summary(hovers)

    line_count = len(current)
    inlays = []
    for _ in range(args.requests):
        start = rng.randrange(max(1, line_count - 100))
        seconds, result = await client.request(
            "textDocument/inlayHint",
            {
                "textDocument": doc,
                "range": {"start": {"line": start, "character": 0}, "end": {"line": start + 100, "character": 0}},
            },
        )
        inlays.append(seconds)
    results["inlay_hints_100_lines_ms"] = summary(inlays)

    completions = []
    for _ in range(args.requests):
        line, _ = names[rng.randrange(len(names))]
        seconds, result = await client.request(
            "textDocument/completion", {"textDocument": doc, "position": {"line": line, "character": 10}}
        )
        assert result and result["items"], line
        completions.append(seconds)
    results["completion_name_ms"] = summary(completions)

    # semantic tokens of the whole file: the first request tokenizes every formula, then entries are cached;
    # after a one-formula edit only that entry is tokenized again
    token_runs = max(1, min(args.requests, 50))
    seconds, result = await client.request("textDocument/semanticTokens/full", {"textDocument": doc})
    assert result and result["data"], "no semantic tokens"
    results["semantic_tokens_count"] = len(result["data"]) // 5
    results["semantic_tokens_first_ms"] = summary([seconds])
    warm = []
    for _ in range(token_runs):
        seconds, result = await client.request("textDocument/semanticTokens/full", {"textDocument": doc})
        warm.append(seconds)
    results["semantic_tokens_full_ms"] = summary(warm)
    after_edit = []
    for _ in range(token_runs):
        line, column = positions[rng.randrange(len(positions))]
        for text_, end in ((" ", column), ("", column + 1)):
            version += 1
            change = {
                "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": end}},
                "text": text_,
            }
            since = client.published_count()
            await client.notify(
                "textDocument/didChange",
                {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]},
            )
            await client.diagnostics_for(uri, version, since)
            seconds, result = await client.request("textDocument/semanticTokens/full", {"textDocument": doc})
            after_edit.append(seconds)
    results["semantic_tokens_after_edit_ms"] = summary(after_edit)

    rss, hwm = client.rss()
    results["server_rss_mb"] = rss / 1024
    results["server_peak_rss_mb"] = hwm / 1024
    await client.close()
    return results


def report(results: dict[str, Any]) -> None:
    rows = [
        ("open → first diagnostics", "open_to_diagnostics_ms"),
        ("(server spawn → first diagnostics)", "process_start_to_diagnostics_ms"),
        ("torchgen load_derivatives (process)", "torchgen_load_derivatives_ms"),
        ("edit → diagnostics", "edit_to_diagnostics_ms"),
        ("hover on name:", "hover_name_ms"),
        ("inlay hints, 100 lines", "inlay_hints_100_lines_ms"),
        ("completion in name:", "completion_name_ms"),
        ("semantic tokens, whole file (first)", "semantic_tokens_first_ms"),
        ("semantic tokens, whole file", "semantic_tokens_full_ms"),
        ("semantic tokens, after an edit", "semantic_tokens_after_edit_ms"),
    ]
    print(f"{'':38} {'median':>10} {'p99':>10} {'min':>10} {'n':>5}")
    for label, key in rows:
        r = results[key]
        print(f"{label:38} {r['median']:9.1f}ms {r['p99']:9.1f}ms {r['min']:9.1f}ms {r['n']:5d}")
    print(f"{'open → diagnostics / torchgen':38} {results['open_ratio_to_torchgen']:10.3f}   (target <= 0.2)")
    print(
        f"{'server RSS (end / peak)':38} {results['server_rss_mb']:8.1f}MB {results['server_peak_rss_mb']:8.1f}MB   (target <= 150 MB)"
    )
    edit = results["edit_to_diagnostics_ms"]
    hover = results["hover_name_ms"]
    checks = {
        "edit median <= 10 ms": edit["median"] <= 10,
        "edit p99 <= 40 ms": edit["p99"] <= 40,
        "hover median <= 5 ms": hover["median"] <= 5,
        "open <= 0.2 torchgen": results["open_ratio_to_torchgen"] <= 0.2,
        "RSS <= 150 MB": results["server_peak_rss_mb"] <= 150,
    }
    print("targets: " + ", ".join(f"{k}: {'ok' if v else 'MISSED'}" for k, v in checks.items()))


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5, help="fresh servers for open → diagnostics")
    parser.add_argument("--torchgen-runs", type=int, default=5)
    parser.add_argument("--edits", type=int, default=200)
    parser.add_argument("--edit-gap", type=float, default=0.05, help="seconds between edits (typing pace)")
    parser.add_argument("--requests", type=int, default=200)
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--json", action="store_true", help="print the results as JSON")
    parser.add_argument("--server-log", help="let the server log at DEBUG level into this file")
    parser.add_argument("--spawn", action="store_true", help="only the server's start, warm and empty cache")
    args = parser.parse_args()
    if args.spawn:
        spawned = asyncio.run(measure_spawn(args.runs))
        if args.json:
            print(json.dumps(spawned, indent=1))
        else:
            report_spawn(spawned)
        return 0
    results = asyncio.run(measure(args))
    if args.json:
        print(json.dumps(results, indent=1))
    else:
        report(results)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
