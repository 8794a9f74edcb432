"""Where a `derivls check` after a one-entry edit spends its time: each stage's share.

The entry cache (a fresh folder) first holds the real file's entries; each round then checks a copy
in which one entry (a different one each round) has a comment no cache has seen, so the whole-result
cache misses and that entry is analysed again, as after an edit. The check runs in a child process
whose stages are timed by wrappers (derivls's own functions, not changed); the parent times the
whole process. Stages (milliseconds, medians of --runs rounds, and their share of the whole process):

  start + imports     the interpreter's start and the imports before `check` runs (whole - in-process)
  native index        project.index_native: native_functions.yaml's index (read from the disk cache)
  header index        formulas/headers.build_header_index: FunctionsManual.h, TensorBody.h, ...
  entry records       EntryCache.get: the cached entries' results read and unpickled
  edited entry        DocumentAnalyzer._analyse_entry: the entries the cache missed, analysed (--cold: all)
  file pass           DocumentAnalyzer._file_pass: op numbering, duplicates, codegen-stage lookups
  rest                everything else in the process (result-cache keys, the report, exit)

and, timed in the same rounds, the floor of any such process: `python -c pass`, and `python -c "import …"`
of the derivls modules the check imported (no work done): what is left when every stage above costs nothing.

    python bench/bench_edit_stages.py [--runs 5] [--cold]

--cold: an empty cache each round instead (a fresh folder): the cold check's stages (issue 37, item 4).
"""

from __future__ import annotations

import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

from bench_server import TORCHGEN, child_environment, packaged_dir

CHILD = r"""
import functools, json, sys, time
started = time.perf_counter()
import derivls.cli.commandline as cli
import derivls.project.opener as project
import derivls.derivatives.formulas.headers as headers
import derivls.derivatives.loader as loader
import derivls.derivatives.entrycache as entrycache
spent = {}
def timed(owner, name, label):
    original = getattr(owner, name)
    @functools.wraps(original)
    def wrapper(*args, **kwargs):
        t = time.perf_counter()
        try:
            return original(*args, **kwargs)
        finally:
            spent[label] = spent.get(label, 0.0) + time.perf_counter() - t
    setattr(owner, name, wrapper)
timed(project, "index_native", "native index")
timed(headers, "build_header_index", "header index")
timed(entrycache.EntryCache, "get", "entry records")
timed(loader.DocumentAnalyzer, "_analyse_entry", "edited entry")
timed(loader.DocumentAnalyzer, "_file_pass", "file pass")
imported = time.perf_counter()
try:
    cli.main(["check", *sys.argv[1:]])
except SystemExit:
    pass
spent["in process"] = time.perf_counter() - imported
spent["cli imports"] = imported - started
spent["modules"] = sorted(m for m in sys.modules if m.startswith("derivls"))
print(json.dumps(spent), file=sys.stderr)
"""

STAGES = ("native index", "header index", "entry records", "edited entry", "file pass")
_NAME = re.compile(r"^- name: .*\n", re.MULTILINE)


def _run(argv: list[str], env: dict[str, str]) -> tuple[float, str]:
    start = time.perf_counter()
    done = subprocess.run(argv, env=env, capture_output=True, text=True)
    if done.returncode not in (0, 1):
        sys.exit(f"child failed ({done.returncode}):\n{done.stderr}")
    return time.perf_counter() - start, done.stderr


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--runs", type=int, default=5)
    parser.add_argument("--cold", action="store_true", help="an empty cache each round")
    args = parser.parse_args()
    packaged = packaged_dir()
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    original = (packaged / "autograd" / "derivatives.yaml").read_text(encoding="utf-8")
    with tempfile.TemporaryDirectory(prefix="derivls-stages-") as tmp:
        work = Path(tmp) / "derivatives.yaml"
        env = child_environment(Path(tmp) / "cache")
        files = [str(work), "--native", str(native), "--tags", str(tags)]
        torchgen = [
            sys.executable,
            "-c",
            TORCHGEN,
            str(packaged / "autograd" / "derivatives.yaml"),
            str(native),
            str(tags),
        ]
        work.write_text(original, encoding="utf-8")
        _run([sys.executable, "-m", "derivls", "check", *files], env)  # the entry cache holds every entry
        time.sleep(1.0)
        rows: list[dict[str, float]] = []
        theirs: list[float] = []
        names = list(_NAME.finditer(original))
        for i in range(args.runs):
            m = names[(i * 97 + 13) % len(names)]
            work.write_text(
                f"{original[: m.end()]}  # stages {os.getpid()}.{i}\n{original[m.end() :]}", encoding="utf-8"
            )
            if args.cold:
                env = child_environment(Path(tmp) / f"cold-{i}")
            wall, err = _run([sys.executable, "-c", CHILD, *files], env)
            spent = json.loads(err.strip().splitlines()[-1])
            spent["whole"] = wall
            modules = spent.pop("modules")
            spent["python"] = _run([sys.executable, "-c", "pass"], env)[0]
            spent["imports only"] = _run([sys.executable, "-c", "import " + ", ".join(modules)], env)[0]
            rows.append(spent)
            theirs.append(_run(torchgen, env)[0])
            time.sleep(0.5)  # the check's detached cache writer
    whole = statistics.median(r["whole"] for r in rows)
    print(
        f"{'cold check' if args.cold else 'check after a new one-entry edit'}: {whole * 1000:.0f} ms (median of {args.runs}), torchgen "
        f"{statistics.median(theirs) * 1000:.0f} ms, ratio {statistics.median(r['whole'] / t for r, t in zip(rows, theirs)):.3f}"
    )
    shares = {"start + imports": [r["whole"] - r["in process"] for r in rows]}
    for stage in STAGES:
        shares[stage] = [r.get(stage, 0.0) for r in rows]
    shares["rest"] = [r["in process"] - sum(r.get(s, 0.0) for s in STAGES) for r in rows]
    for stage, values in shares.items():
        ms = statistics.median(values) * 1000
        print(f"  {stage:<16} {ms:6.1f} ms  {ms / (whole * 1000):5.1%}")
    floor = statistics.median(r["imports only"] for r in rows)
    print(
        f"floor: python -c pass {statistics.median(r['python'] for r in rows) * 1000:.0f} ms; importing the check's "
        f"derivls modules {floor * 1000:.0f} ms = {floor / statistics.median(theirs):.3f} x torchgen"
    )


if __name__ == "__main__":
    main()
