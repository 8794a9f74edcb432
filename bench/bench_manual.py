"""Issue 51 in the editor: a FunctionsManual.cpp helper edited and saved, its caller gradchecked in the warm session.

    python bench/bench_manual.py [--edits 5] [--wrong 2]

A copy of the torch 2.13 wheel's files (every entry of its derivatives.yaml) and a FunctionsManual.cpp outside it (the
`functionsManual` setting's file) that defines `deg2rad_backward`, the helper of one entry (deg2rad), as torch does.
Each edit changes the helper's text (the same value written another way: `* (N.0 / N.0)` with an N never used
before, so no extension or JIT definition of an earlier edit is reused) and is timed from the save to the verdict,
as the server does it: the helpers the save changed (derivls.gradcheck.manual_saves), the entries calling them, then
the gradcheck worker's code (derivls.gradcheck.worker.run, in-process, the session warm) with the file named.
`--wrong N`: N more edits with the helper's sign dropped (failed, reported on the helper too). `--formula-edits N`: for
comparison, in the same session, N edits of deg2rad's formula in derivatives.yaml instead (`deg2rad_backward(grad) *
(N.0 / N.0)`, libtorch's helper: no FunctionsManual.cpp named), as a derivatives.yaml save runs. Prints each time,
the medians, the session's start and the load (/proc/loadavg) before and after each edit. Uses the user's cache
folder.
"""

from __future__ import annotations

import argparse
import io
import json
import statistics
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

HELPER = "deg2rad_backward"


def manual_text(n: int, wrong: bool = False) -> str:
    sign = "-" if wrong else ""
    return (
        "#include <torch/csrc/autograd/FunctionsManual.h>\n"
        "\n"
        "namespace torch::autograd::generated::details {\n"
        "\n"
        "Tensor deg2rad_backward(const Tensor& grad) {\n"
        "  constexpr double M_PI_180 = 0.017453292519943295769236907684886127134428718885417;\n"
        f"  return at::mul(grad, {sign}M_PI_180 * ({n}.0 / {n}.0));\n"
        "}\n"
        "\n"
        "} // namespace torch::autograd::generated::details\n"
    )


def load() -> str:
    try:
        return Path("/proc/loadavg").read_text().split()[0]
    except OSError:
        return "?"


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--edits", type=int, default=5, help="edits of the helper timed with the session warm")
    parser.add_argument("--wrong", type=int, default=2, help="edits with the helper's sign dropped")
    parser.add_argument("--formula-edits", type=int, default=0, help="edits of deg2rad's formula, for comparison")
    args = parser.parse_args()

    from bench.bench_gradcheck import wheel_copy
    from derivls.gradcheck import session as sessions
    from derivls.gradcheck.manual_saves import ManualSaves, entries_calling
    from derivls.gradcheck.worker import run
    from derivls.project.opener import open_project

    folder = Path(tempfile.mkdtemp(prefix="bench-manual-"))
    path = wheel_copy(folder / "site-packages")
    native = path.parent.parent / "ATen" / "native" / "native_functions.yaml"
    tags = native.parent / "tags.yaml"
    manual = folder / "manual" / "FunctionsManual.cpp"
    manual.parent.mkdir()
    text = path.read_text()
    analyzer = open_project(path, native, tags, "auto").analyzer
    analysis = analyzer.analyse(text)
    saves = ManualSaves()
    edit = [int(time.time() * 1000)]  # an edit no earlier run of the bench built
    manual.write_text(manual_text(edit[0]))
    saves.read(str(manual), manual.read_text())
    setup: dict = {}

    def formula_once(session) -> tuple[float, str]:
        edit[0] += 1
        formula = "  self: deg2rad_backward(grad)\n"
        assert formula in text
        changed = text.replace(formula, f"  self: deg2rad_backward(grad) * ({edit[0]}.0 / {edit[0]}.0)\n", 1)
        line = changed.splitlines().index("- name: deg2rad(Tensor self) -> Tensor")
        before = load()
        edited = analyzer.analyse(changed)  # (the server's analysis, made on the edit, before the save)
        started = time.monotonic()  # the save
        request = {"path": str(path), "text": changed, "native": str(native), "tags": str(tags), "lines": [line]}
        out = io.StringIO()
        run(request, out, analysis=edited, session=session, setup=setup)
        took = time.monotonic() - started
        last = json.loads(out.getvalue().splitlines()[-1])
        verdicts = [e["verdict"] for e in last.get("entries", [])] or [last.get("error", "?")]
        how = f"JIT, Cling {last.get('jit_define', 0):.2f} s" if last.get("jit") else "g++"
        return took, f"{'/'.join(verdicts)} ({how}; load {before}->{load()})"

    def once(session, wrong: bool = False) -> tuple[float, str]:
        edit[0] += 1
        manual.write_text(manual_text(edit[0], wrong))
        before = load()
        started = time.monotonic()  # the save
        changed = saves.saved(str(manual), manual.read_text())
        lines = entries_calling(analysis, saves.manual(str(manual)), changed)
        request = {
            "path": str(path),
            "text": text,
            "native": str(native),
            "tags": str(tags),
            "lines": lines,
            "manual": str(manual),
        }
        out = io.StringIO()
        run(request, out, analysis=analysis, session=session, setup=setup)
        took = time.monotonic() - started
        last = json.loads(out.getvalue().splitlines()[-1])
        verdicts = [e["verdict"] for e in last.get("entries", [])] or [last.get("error", "?")]
        on_helper = len(last.get("manual", {}).get("diagnostics", []))
        how = f"JIT, Cling {last.get('jit_define', 0):.2f} s" if last.get("jit") else "g++"
        picked = ", ".join(str(line + 1) for line in lines)
        return (
            took,
            f"{'/'.join(verdicts)} (entries at line {picked}; {on_helper} on the helper; {how}; load {before}->{load()})",
        )

    print(f"load {load()} at the start", flush=True)
    session = sessions.Session(sys.executable)
    started = time.monotonic()
    session.start()
    session.ready.wait(300)
    print(f"session start: {time.monotonic() - started:.1f} s ({session.state}; JIT {session.jit}), load {load()}")
    took, verdict = once(session)  # the session's first run of deg2rad: its samples found then
    print(f"  first edit of {HELPER} (deg2rad's samples found): {took:.2f} s {verdict}", flush=True)
    right = []
    for _ in range(args.edits):
        took, verdict = once(session)
        right.append(took)
        print(f"  {HELPER} edited: {took:.2f} s {verdict}", flush=True)
    wrong = []
    for _ in range(args.wrong):
        took, verdict = once(session, wrong=True)
        wrong.append(took)
        print(f"  {HELPER} with its sign dropped: {took:.2f} s {verdict}", flush=True)
    formula = []
    for _ in range(args.formula_edits):
        took, verdict = formula_once(session)
        formula.append(took)
        print(f"  deg2rad's formula edited (libtorch's helper): {took:.2f} s {verdict}", flush=True)
    print(
        f"edit -> save -> verdict, {HELPER} (one entry), session warm: median {statistics.median(right):.2f} s of "
        f"{len(right)}"
        + (f"; sign dropped: median {statistics.median(wrong):.2f} s of {len(wrong)}" if wrong else "")
        + (
            f"; deg2rad's formula edited: median {statistics.median(formula):.2f} s of {len(formula)}"
            if formula
            else ""
        )
        + f"; load {load()} at the end",
        flush=True,
    )
    session.close()
    import shutil

    shutil.rmtree(folder, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
