"""How derivls scales with file size: the real 2.13 files and copies 2x / 5x / 10x as large.

A scaled pair holds N copies of every native function and every derivatives.yaml entry; copy k
renames each operator consistently in both files (`add.Tensor` -> `s1_add.Tensor`, `add_` ->
`s1_add_`, `_foreach_add` -> `_foreach_s1_add`, also in `structured_delegate:` and `autogen:`), so every
copy resolves, groups and numbers as the original does. Dunder operators (`__and__`, ...) are not
copied: their inplace forms are a fixed list; nor are the few operators torchgen treats by name
(`SPECIAL_BY_NAME`). Per size it prints, side by side with torchgen's whole-process
`load_derivatives` where torchgen accepts the files:

  check            whole-process `derivls check` (median of --runs)
  open -> diags    a fresh server: didOpen -> first publishDiagnostics
  edit -> diags    one formula changed -> publishDiagnostics of that version (median, p99)
  inlay 100 / all  inlay hints for 100 lines / for the whole file
  completion       in `name:` (items are capped)
  symbols          documentSymbol of the whole file
  RSS              the server's VmRSS once the first diagnostics are out (and the load's garbage freed), and at the end

    python bench/bench_scale.py [--sizes 1 2 5 10] [--runs 3] [--edits 100] [--requests 30]
                                [--files DIR] [--no-check] [--server-log FILE]

--files DIR keeps the scaled files in DIR between runs (built once, reused when present);
--no-check measures only the server (no whole-process check / torchgen runs).

    python bench/bench_scale.py --guard [--guard-rounds 60] [--guard-checks 5] [--files DIR]

--guard (.ci/run's benchmark stage) measures ratios only, each in one run alternating, and exits 1
when one is over its bound (bench/scale_guard.py): edit -> diagnostics at 10x / at 1x (<= 2.0), and
`check` after a new one-entry edit / torchgen's load_derivatives.

Targets (issue 13): edit -> diagnostics median <= 4 ms on the real file and <= 6 ms on the 10x
file, p99 <= 15 ms; RSS after open <= 80 MB on the real file, <= 200 MB on the 10x file.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parent))
from bench_server import (  # noqa: E402  (the sibling benchmark's client and helpers)
    TORCHGEN,
    Client,
    child_environment,
    file_uri,
    formula_positions,
    name_positions,
    packaged_dir,
    summary,
)

_FUNC = re.compile(r"^(- func: )(\w+)(?:\.(\w+))?(\()", re.MULTILINE)
_NAME = re.compile(r"^(- name: )(\w+)(?:\.(\w+))?(\()", re.MULTILINE)
_DELEGATE = re.compile(r"^(  structured_delegate: )(\w+)(?:\.(\w+))?\s*$", re.MULTILINE)
_AUTOGEN = re.compile(r"^(  autogen: )(.+)$", re.MULTILINE)


# torchgen's lists of operators it treats by name (native_function_generation.py, gen.py's
# inplace_view exemptions): a renamed copy of these would not be treated the same, so none is made.
SPECIAL_BY_NAME = frozenset(
    """adaptive_avg_pool3d_backward _slow_conv2d_backward _cummax_helper _cummin_helper _assert_async
    _assert_tensor_metadata _cslt_sparse_mm_search _assert_scalar _dimI _dimV _has_same_storage_numel
    _linalg_check_errors _local_scalar_dense _nested_tensor_from_mask_left_aligned _nnz _use_cudnn_ctc_loss
    _use_miopen_ctc_loss _validate_compressed_sparse_indices allclose dense_dim equal is_coalesced is_pinned
    is_same_size is_set_to q_per_channel_axis q_scale q_zero_point qscheme record_stream sparse_dim
    sym_constrain_range sym_constrain_range_for_size _nested_tensor_storage_offsets
    _chunk_grad_outputs_efficient_attention _fused_sdp_choice _print _sink_tokens _nested_get_ragged_idx
    polygamma similar resize resize_as set random uniform _has_compatible_shallow_copy_type""".split()
)


def _copied(entry: str, key: str) -> bool:
    m = re.match(rf"- {key}: (\w+)", entry)
    if m is None or m[1].startswith("__"):
        return False
    name = m[1]
    name = name[:-1] if name.endswith("_") else name
    return name not in SPECIAL_BY_NAME


def _base(copy: int, name: str) -> str:
    """A prefix keeps every rule torchgen reads off a name's end (`_`, `_copy`, `_inverse`, `_out`)."""
    if name.startswith("_foreach_"):  # `_foreach_add` belongs to `add`
        return f"_foreach_s{copy}_{name[len('_foreach_') :]}"
    return f"s{copy}_{name}"


def _rename(copy: int, name: str, overload: str | None) -> str:
    return _base(copy, name) + (f".{overload}" if overload else "")


def scaled_native(text: str, copy: int) -> str:
    if copy == 0:
        return text
    text = _FUNC.sub(lambda m: f"{m[1]}{_rename(copy, m[2], m[3])}{m[4]}", text)
    text = _DELEGATE.sub(lambda m: f"{m[1]}{_rename(copy, m[2], m[3])}", text)

    def autogen(m: re.Match[str]) -> str:
        names = []
        for item in m[2].split(","):
            name, _, overload = item.strip().partition(".")
            names.append(_rename(copy, name, overload or None))
        return m[1] + ", ".join(names)

    return _AUTOGEN.sub(autogen, text)


def scaled_derivatives(text: str, copy: int) -> str:
    if copy == 0:
        return text
    return _NAME.sub(lambda m: f"{m[1]}{_rename(copy, m[2], m[3])}{m[4]}", text)


def _body(text: str, key: str) -> str:
    """The file's entries without its leading comment lines (kept once, at the top) and without dunder operators."""
    entries = re.split(r"(?m)^(?=- )", text)[1:]
    return "".join(e if e.endswith("\n") else e + "\n" for e in entries if _copied(e, key))


def build(size: int, root: Path) -> tuple[Path, Path, Path]:
    """A wheel-shaped folder holding `size` copies of the real files (reused if `root` has it complete)."""
    packaged = packaged_dir()
    done = root / f"x{size}" / "complete"
    out = root / f"x{size}" / "torchgen" / "packaged"
    if done.exists():
        return (
            out / "autograd" / "derivatives.yaml",
            out / "ATen" / "native" / "native_functions.yaml",
            out / "ATen" / "native" / "tags.yaml",
        )
    native_text = (packaged / "ATen" / "native" / "native_functions.yaml").read_text(encoding="utf-8")
    derivatives_text = (packaged / "autograd" / "derivatives.yaml").read_text(encoding="utf-8")
    (out / "autograd").mkdir(parents=True, exist_ok=True)
    (out / "ATen" / "native").mkdir(parents=True, exist_ok=True)
    native = out / "ATen" / "native" / "native_functions.yaml"
    derivatives = out / "autograd" / "derivatives.yaml"
    tags = out / "ATen" / "native" / "tags.yaml"
    native.write_text(
        native_text.rstrip("\n") + "\n" + "".join(scaled_native(_body(native_text, "func"), k) for k in range(1, size)),
        encoding="utf-8",
    )
    derivatives.write_text(
        derivatives_text.rstrip("\n")
        + "\n"
        + "".join(scaled_derivatives(_body(derivatives_text, "name"), k) for k in range(1, size)),
        encoding="utf-8",
    )
    tags.write_text((packaged / "ATen" / "native" / "tags.yaml").read_text(encoding="utf-8"), encoding="utf-8")
    done.touch()
    return derivatives, native, tags


def _process_seconds(argv: list[str]) -> tuple[float, int]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=child_environment(), capture_output=True)
    return time.perf_counter() - start, done.returncode


def whole_process(derivatives: Path, native: Path, tags: Path, runs: int) -> dict[str, Any]:
    checks, torchgen = [], []
    torchgen_ok = True
    for _ in range(runs):
        seconds, code = _process_seconds([sys.executable, "-m", "derivls", "check", str(derivatives)])
        if code != 0:
            raise SystemExit(f"derivls check found errors in the scaled file {derivatives} (exit {code})")
        checks.append(seconds)
        if torchgen_ok:
            seconds, code = _process_seconds([sys.executable, "-c", TORCHGEN, str(derivatives), str(native), str(tags)])
            torchgen_ok = code == 0
            if torchgen_ok:
                torchgen.append(seconds)
    result: dict[str, Any] = {"check_ms": statistics.median(checks) * 1000}
    if torchgen:
        result["torchgen_ms"] = statistics.median(torchgen) * 1000
        result["check_ratio"] = statistics.median(checks) / statistics.median(torchgen)
    return result


async def server_side(derivatives: Path, edits: int, requests: int, log: str | None = None) -> dict[str, Any]:
    text = derivatives.read_text(encoding="utf-8")
    uri = file_uri(derivatives)
    root = derivatives.parent.parent
    client = await Client.start(*(["--log-level", "DEBUG", "--log-file", log] if log else []))
    await client.initialize(root)
    sent = await client.notify(
        "textDocument/didOpen", {"textDocument": {"uri": uri, "languageId": "yaml", "version": 1, "text": text}}
    )
    received, params = await client.diagnostics_for(uri, None)
    results: dict[str, Any] = {"open_ms": (received - sent) * 1000, "open_diagnostics": len(params["diagnostics"])}
    # the server frees the load's garbage right after publishing (gcpolicy.freeze_heap): a request's
    # answer comes after that (one thread), then RSS is read
    await client.request("textDocument/hover", {"textDocument": {"uri": uri}, "position": {"line": 0, "character": 0}})
    results["rss_after_open_mb"] = client.rss()[0] / 1024

    positions = formula_positions(text)
    step = max(1, len(positions) // max(1, edits))
    version, times = 1, []
    for i in range(edits):
        line, column = positions[(i // 2 * step) % len(positions)]
        insert = i % 2 == 0
        end = column if insert else column + 1
        version += 1
        change = {
            "range": {"start": {"line": line, "character": column}, "end": {"line": line, "character": end}},
            "text": " " if insert else "",
        }
        since = client.published_count()
        sent = await client.notify(
            "textDocument/didChange", {"textDocument": {"uri": uri, "version": version}, "contentChanges": [change]}
        )
        received, _ = await client.diagnostics_for(uri, version, since)
        times.append(received - sent)
        await asyncio.sleep(0.03)
    results["edit"] = summary(times)

    lines = text.count("\n")
    doc = {"uri": uri}

    async def timed(method: str, params: Any, n: int) -> dict[str, float]:
        values = []
        for _ in range(n):
            seconds, _ = await client.request(method, params() if callable(params) else params)
            values.append(seconds)
        return summary(values)

    middle = lines // 2
    results["inlay_100"] = await timed(
        "textDocument/inlayHint",
        {
            "textDocument": doc,
            "range": {"start": {"line": middle, "character": 0}, "end": {"line": middle + 100, "character": 0}},
        },
        requests,
    )
    results["inlay_all"] = await timed(
        "textDocument/inlayHint",
        {
            "textDocument": doc,
            "range": {"start": {"line": 0, "character": 0}, "end": {"line": lines + 1, "character": 0}},
        },
        max(3, requests // 10),
    )
    name_line = name_positions(text)[len(name_positions(text)) // 2][0]
    results["completion_name"] = await timed(
        "textDocument/completion", {"textDocument": doc, "position": {"line": name_line, "character": 10}}, requests
    )
    results["symbols"] = await timed("textDocument/documentSymbol", {"textDocument": doc}, max(3, requests // 10))
    results["rss_end_mb"] = client.rss()[0] / 1024
    await client.close()
    return results


def report(rows: dict[int, dict[str, Any]]) -> None:
    def ms(value: float | None) -> str:
        return "n/a" if value is None else f"{value:.1f}"

    print(
        f"{'size':>4} {'lines':>7} {'check':>8} {'torchgen':>9} {'ratio':>6} {'open':>8} {'edit med':>8} "
        f"{'edit p99':>8} {'inlay100':>8} {'inlayAll':>8} {'complete':>8} {'symbols':>8} {'RSSopen':>8} {'RSSend':>7}"
    )
    for size, r in rows.items():
        print(
            f"{size:>3}x {r['lines']:>7} {ms(r.get('check_ms')):>8} {ms(r.get('torchgen_ms')):>9} "
            f"{(r.get('check_ratio') or 0):>6.3f} {ms(r['open_ms']):>8} {ms(r['edit']['median']):>8} "
            f"{ms(r['edit']['p99']):>8} {ms(r['inlay_100']['median']):>8} {ms(r['inlay_all']['median']):>8} "
            f"{ms(r['completion_name']['median']):>8} {ms(r['symbols']['median']):>8} "
            f"{r['rss_after_open_mb']:>7.1f}M {r['rss_end_mb']:>6.1f}M"
        )
    print("(milliseconds; medians unless named; ratio = check / torchgen, whole processes, same run)")


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--sizes", type=int, nargs="+", default=[1, 2, 5, 10])
    parser.add_argument("--runs", type=int, default=3, help="whole-process runs of check and torchgen per size")
    parser.add_argument("--edits", type=int, default=100)
    parser.add_argument("--requests", type=int, default=30)
    parser.add_argument("--json", action="store_true")
    parser.add_argument("--files", type=Path, help="keep the scaled files in this folder (reused when present)")
    parser.add_argument("--no-check", action="store_true", help="only the server (no whole-process runs)")
    parser.add_argument("--server-log", help="servers log at DEBUG level into this file (+ .x<size>)")
    parser.add_argument("--guard", action="store_true", help="only the ratios, with bounds (bench/scale_guard.py)")
    parser.add_argument("--guard-rounds", type=int, default=60, help="--guard: edits of each kind per size")
    parser.add_argument("--guard-checks", type=int, default=5, help="--guard: rounds of check and torchgen")
    args = parser.parse_args()
    if args.guard:
        import scale_guard

        return scale_guard.main(args)
    rows: dict[int, dict[str, Any]] = {}
    with tempfile.TemporaryDirectory(prefix="derivls-scale-") as tmp:
        for size in args.sizes:
            derivatives, native, tags = build(size, args.files or Path(tmp))
            row: dict[str, Any] = {"lines": derivatives.read_text(encoding="utf-8").count("\n")}
            if not args.no_check:
                row.update(whole_process(derivatives, native, tags, args.runs))
            log = f"{args.server_log}.x{size}" if args.server_log else None
            row.update(asyncio.run(server_side(derivatives, args.edits, args.requests, log)))
            rows[size] = row
            print(f"measured {size}x", file=sys.stderr)
    if args.json:
        print(json.dumps(rows, indent=1))
    else:
        report(rows)
    return 0


if __name__ == "__main__":
    sys.exit(main())
