"""Every argument kind, both directions: a formula for an argument of each type a native function has in any
of the 15 releases, judged by the whole chain and by derivls.

For each kind (the argument's type as native_functions.yaml writes it: `Tensor?[]`, `Tensor(a!)`, `SymInt[1]`…)
one 2.13 function with such an argument (one with a kernel: torchgen generates VariableType for it) gets an
entry of its own in the real 2.13 derivatives.yaml (its existing entry, if any, removed), in each PLACE:

    backward      `<arg>: grad`
    forward       `<arg>: grad` and `result: <arg>_t`            (the argument's tangent in a forward formula)
    other_forward `<arg>: grad`, `<t>: grad` and `result: <t>_t` (a forward formula that reads another Tensor
                                                                  argument's tangent, not this one's)
    auto_linear   `<arg>: grad` and `result: auto_linear`
    element_wise  `<arg>: grad` and `result: auto_element_wise`

The chain: torchgen's load_derivatives and codegen (the installed 2.13 wheel's, per entry:
tests/formulas/torchgen_codegen.py), then g++ on the Functions.cpp node and the VariableType kernel the entry
gives (`derivls check --compile`, whose codegen the parity tests hold byte-equal to torchgen's). A case's
gate is the first that rejects it ("loader", "codegen", "g++") or "" where all accept; derivls must report an
error on the entry's formula keys exactly where a gate rejects.

    python -m tests.formulas.argkinds            # the verdict table, as tests/formulas/argkind_verdicts.py holds it
    python -m tests.formulas.argkinds --seed 3   # per kind, a function drawn at random (pick_functions)
"""

from __future__ import annotations

import glob
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

PLACES = ("backward", "forward", "other_forward", "auto_linear", "element_wise")
_FUNC = re.compile(r"^- func: (.*)$", re.M)


def split_arguments(schema: str) -> list[tuple[str, str]]:
    """(type, name) of each argument of a native function schema (`*` left out, defaults dropped)."""
    args = schema.split("(", 1)[1].rsplit(") ->", 1)[0]
    parts, depth, cur = [], 0, ""
    for c in args:
        depth += c in "(["
        depth -= c in ")]"
        if c == "," and depth == 0:
            parts.append(cur)
            cur = ""
        else:
            cur += c
    parts.append(cur)
    out = []
    for p in parts:
        p = p.split("=")[0].strip()
        if p and p != "*":
            kind, _, name = p.rpartition(" ")
            out.append((kind, name))
    return out


def all_kinds() -> list[str]:
    """Every argument type of a native function in any fetched release (sorted)."""
    from tests.releases.fetch import cache_dir

    kinds: set[str] = set()
    pattern = cache_dir() / "*" / "torchgen" / "packaged" / "ATen" / "native" / "native_functions.yaml"
    for path in glob.glob(str(pattern)):
        for m in _FUNC.finditer(Path(path).read_text(encoding="utf-8")):
            kinds.update(kind for kind, _ in split_arguments(m.group(1)))
    return sorted(kinds)


@dataclass
class Case:
    kind: str
    place: str
    schema: str = ""  # the 2.13 function given the entry ("" where 2.13 has no function with such an argument)
    argument: str = ""
    other: str = ""  # another Tensor argument of the function (other_forward: its tangent, not the argument's)
    gate: str = ""  # "loader" | "codegen" | "g++" | "" (accepted)
    derivls: list[tuple[int, str]] = field(default_factory=list)  # (0-based line in the entry, code) of errors
    message: str = ""

    @property
    def entry(self) -> str:
        lines = [f"- name: {self.schema}", f"  {self.argument}: grad"]
        if self.place == "other_forward":
            lines += [f"  {self.other}: grad", f"  result: {self.other}_t"]
        elif self.place != "backward":
            formula = {"forward": f"{self.argument}_t", "auto_linear": "auto_linear"}.get(
                self.place, "auto_element_wise"
            )
            lines.append(f"  result: {formula}")
        return "\n".join(lines) + "\n"


def pick_functions(
    native: Path, tags: Path, kinds: list[str], derivatives_text: str, seed: int = 0
) -> dict[str, tuple[str, str, str]]:
    """kind -> (schema, argument name, another Tensor argument or "") of a 2.13 function with such an argument; a
    kind no 2.13 function has is left out.

    Every candidate has a kernel (torchgen generates VariableType for it: not CompositeImplicitAutograd, a
    dispatch section) and an argument of the kind not named `grad` or `result` (the formulas' own names). Seed 0:
    the preferred one (one Tensor output, another Tensor argument, functional, no entry in derivatives.yaml, the
    shortest schema), the checked-in verdict table's. Seed N: one drawn at random (seeded per kind: a subset of
    kinds draws the same functions) among the fairest candidates: at most one output (the forward places' key is
    `result`) and not an out= function (an entry for one is rejected by the loader whatever its formula); where
    a kind has none, the out= ones of at most one output; then any."""
    import random

    from derivls.aten.native import NativeIndex
    from derivls.aten.schema import SchemaKind

    index = NativeIndex.load(str(native), str(tags))
    has_entry = set(re.findall(r"^- name: (.*)$", derivatives_text, re.M))
    best: dict[str, tuple[tuple[int, ...], str, str, str]] = {}
    candidates: dict[str, list[tuple[int, str, str, str]]] = {}
    for f in sorted(index, key=lambda f: str(f.func)):
        schema = str(f.func)
        if f.has_composite_implicit_autograd_kernel or not f.dispatch:
            continue
        returns = schema.rsplit(") -> ", 1)[1]
        several = returns.startswith("(") and returns != "()"  # several outputs: no `result`
        arguments = split_arguments(schema)
        name_ = schema.split("(")[0]
        for kind, name in arguments:
            if kind not in kinds or name in ("grad", "result"):
                continue
            other = next((n for k, n in arguments if k == "Tensor" and n != name), "")
            rank = (
                returns not in ("Tensor", "Tensor(a)", "Tensor(a!)"),
                not other,
                name_.split(".")[0].endswith("_") or "out" in name_.split(".")[-1],
                schema in has_entry,
                len(schema),
            )
            if kind not in best or rank < best[kind][0]:
                best[kind] = (rank, schema, name, other)
            fairness = 2 * several + (f.func.kind() == SchemaKind.out)
            candidates.setdefault(kind, []).append((fairness, schema, name, other))
    if not seed:
        return {kind: (schema, name, other) for kind, (_rank, schema, name, other) in best.items()}
    picked = {}
    for kind, found in candidates.items():
        pool = [c for c in found if c[0] == min(c[0] for c in found)]
        _fairness, schema, name, other = random.Random(f"{seed}/{kind}").choice(pool)
        picked[kind] = (schema, name, other)
    return picked


def _with_entries(text: str, entries: list[tuple[str, str]]) -> tuple[str, list[int]]:
    """A derivatives.yaml of the (schema, entry) pairs alone, and the 0-based line each entry starts on."""
    del text  # (the other entries change no verdict on these: each is judged alone, and fast)
    body = "# the argument-kind campaign's entries (tests/formulas/argkinds.py)\n"
    at = []
    for _schema, entry in entries:
        body += "\n"
        at.append(body.count("\n"))
        body += entry
    return body, at


def _autograd(folder: Path, real: Path, text: str) -> Path:
    autograd = folder / "autograd"
    autograd.mkdir(parents=True)
    for name in ("templates", "deprecated.yaml"):
        source = real.parent / name
        if source.is_dir():
            shutil.copytree(source, autograd / name)
        elif source.exists():
            shutil.copy(source, autograd / name)
    (autograd / "derivatives.yaml").write_text(text, encoding="utf-8")
    return autograd


def judge(
    packaged: Path, torch_include: str, kinds: list[str] | None = None, places=PLACES, seed: int = 0
) -> list[Case]:
    """Every (kind, place) case, judged by the chain and by derivls (see the module's doc). torchgen runs per
    case (its loader stops at the first error); derivls and g++ run on a few files that hold many cases each
    (no two for one function)."""
    from derivls.compile.document import compile_file
    from derivls.project.analyse import analyse_path

    real = packaged / "autograd" / "derivatives.yaml"
    native = packaged / "ATen" / "native" / "native_functions.yaml"
    tags = packaged / "ATen" / "native" / "tags.yaml"
    text = real.read_text(encoding="utf-8")
    kinds = kinds if kinds is not None else all_kinds()
    picked = pick_functions(native, tags, kinds, text, seed)
    cases = [Case(kind, place) for kind in kinds for place in places]
    for case in cases:
        if case.kind in picked and (case.place != "other_forward" or picked[case.kind][2]):
            case.schema, case.argument, case.other = picked[case.kind]
    judged = [c for c in cases if c.schema]
    with tempfile.TemporaryDirectory(prefix="derivls-argkinds-") as folder:
        dirs = []
        for n, case in enumerate(judged):
            body, _ = _with_entries(text, [(case.schema, case.entry)])
            dirs.append((_autograd(Path(folder) / f"case{n}", real, body), case.schema))
        verdicts = _torchgen(native, tags, folder, dirs)
        for case, (autograd, _) in zip(judged, dirs):
            ok, error = verdicts[str(autograd)]
            if not ok:
                case.gate = "codegen" if error.startswith("codegen: ") else "loader"
                case.message = error.splitlines()[0][:300]
        batches: list[list[Case]] = []
        for case in judged:
            batch = next((b for b in batches if all(c.schema != case.schema for c in b)), None)
            if batch is None:
                batches.append(batch := [])
            batch.append(case)
        for n, batch in enumerate(batches):
            body, at = _with_entries(text, [(c.schema, c.entry) for c in batch])
            path = _autograd(Path(folder) / f"batch{n}", real, body) / "derivatives.yaml"
            analysis, _ = analyse_path(path, native, tags, "torchgen")
            assert analysis is not None
            for case, line in zip(batch, at):
                end = line + case.entry.count("\n")
                case.derivls = [
                    (d.span.line - line, d.code)
                    for d in analysis.diagnostics
                    if d.severity == 1 and line <= d.span.line < end
                ]
            compiled = [line for case, line in zip(batch, at) if not case.gate]
            if not compiled:
                continue
            result = compile_file(path, analysis, torch_include=torch_include, lines=compiled)
            for case, line in zip(batch, at):
                messages = [d.message for d in result.by_entry.get(line, ())] if not case.gate else []
                if messages:
                    case.gate, case.message = "g++", messages[0].splitlines()[0][:300]
    return cases


def _torchgen(native: Path, tags: Path, folder: str, dirs: list[tuple[Path, str]]) -> dict[str, tuple[bool, str]]:
    """torchgen's verdict per folder: load_derivatives, then the codegen for the entry's functions (a child
    Python, outside the workspace)."""
    runner = Path(folder) / "argkinds_runner.py"
    runner.write_text(_RUNNER, encoding="utf-8")
    args = [sys.executable, str(runner), str(native), str(tags)] + [f"{d}={schema}" for d, schema in dirs]
    run = subprocess.run(args, capture_output=True, text=True, cwd=folder, timeout=3600, env=dict(os.environ))
    out = {}
    for line in run.stdout.splitlines():
        if line.startswith("{"):
            row = json.loads(line)
            out[row["dir"]] = (row["ok"], row["error"])
    missing = [str(d) for d, _ in dirs if str(d) not in out]
    assert not missing, run.stderr[-3000:]
    return out


# torchgen_codegen's restricted run, told apart: a loader error, or one of the codegen after it ("codegen: …")
_RUNNER = r"""
import json, re, sys
re._MAXCACHE = 1_000_000
sys.path = [p for p in sys.path if p not in ("", ".")]
from torchgen.api import cpp
from torchgen.api.autograd import match_differentiability_info
from torchgen.gen import parse_native_yaml
from torchgen.packaged.autograd import gen_autograd_functions as gaf
from torchgen.packaged.autograd import gen_inplace_or_view_type as giv
from torchgen.packaged.autograd import gen_variable_type as gvt
from torchgen.packaged.autograd.load_derivatives import load_derivatives

native, tags, *rest = sys.argv[1:]
fns_all = sorted(parse_native_yaml(native, tags).native_functions, key=lambda f: cpp.name(f.func))
for arg in rest:
    directory, _, schema = arg.partition("=")
    ok, error = True, ""
    try:
        infos, _ = load_derivatives(directory + "/derivatives.yaml", native, tags)
    except Exception as e:
        ok, error = False, f"load_derivatives: {type(e).__name__}: {e}"
    if ok:
        try:
            # (only a function of the entry's base name can take its infos: the others are not asked; the base
            # name as torchgen parses it: `normal` for normal_functional, `add` for add_)
            base = next(
                (f.func.name.name.base for f in fns_all if str(f.func) == schema),
                schema.split("(")[0].split(".")[0].rstrip("_"),
            )
            # (and the functions torchgen gives its infos besides: its view_copy variant, the in-place foreach
            # functions it is a reference of)
            bases = (base, base + "_copy", "_foreach_" + base)
            group = [f for f in fns_all if f.func.name.name.base in bases]
            with_infos = match_differentiability_info(group, infos)
            # (the file holds this entry alone: every info is its, keyed by its canonical function's schema,
            # the functional one for an out= or in-place entry)
            touched = [i for by_key in infos.values() for i in by_key.values()]
            for fn in with_infos:
                if str(fn.func.func) == schema or (fn.info is not None and any(i in touched for i in fn.info.values())):
                    if giv.use_derived(fn):
                        gvt.gen_variable_type_func(fn)
                        giv.gen_inplace_or_view_type_env(fn)
            for info in touched:
                if info.args_with_derivatives:
                    for template in (gaf.FUNCTION_DECLARATION, gaf.FUNCTION_DEFINITION):
                        gaf.process_function(info, template)
        except Exception as e:
            ok, error = False, f"codegen: {type(e).__name__}: {e}"
    print(json.dumps({"dir": directory, "ok": ok, "error": error[:2000]}), flush=True)
"""


def table(cases: list[Case]) -> str:
    rows = [f"{'kind':16} " + " ".join(f"{p:>14}" for p in PLACES) + "  function, argument"]
    by = {(c.kind, c.place): c for c in cases}
    for kind in sorted({c.kind for c in cases}):
        cells = []
        for p in PLACES:  # (a `!` where derivls disagrees with the chain)
            c = by.get((kind, p))
            cells.append(
                "-"
                if c is None or not c.schema
                else (c.gate or "ok") + ("" if bool(c.derivls) == bool(c.gate) else "!")
            )
        first = next((c for c in cases if c.kind == kind and c.schema), None)
        where = f"  {first.schema.split('(')[0]}, {first.argument}" if first else ""
        rows.append(f"{kind:16} " + " ".join(f"{x:>14}" for x in cells) + where)
    return "\n".join(rows)


def verdicts_module(cases: list[Case]) -> str:
    """argkind_verdicts.py's text: the function each kind was given, the gate of each case, the kinds 2.13 has no
    function for."""
    lines = [
        '"""The whole chain\'s verdict on a formula for each argument kind of the 15 releases, in each place',
        "(tests/formulas/argkinds.py; written by `python -m tests.formulas.argkinds --write`): (kind, place) -> the",
        'first gate that rejects it ("loader", "codegen", "g++"), or "" where torchgen and g++ accept it."""',
        "",
        '# kind -> (2.13 function, the argument of that kind, another Tensor argument or "")',
        "FUNCTIONS = {",
    ]
    seen = set()
    for c in cases:
        if c.schema and c.kind not in seen:
            seen.add(c.kind)
            lines.append(f"    {c.kind!r}: ({c.schema!r}, {c.argument!r}, {c.other!r}),")
    lines += ["}", "", "VERDICTS = {"]
    for c in cases:
        if c.schema:
            lines.append(
                f"    ({c.kind!r}, {c.place!r}): {c.gate!r},  # {c.message[:80]!r}"
                if c.gate
                else f"    ({c.kind!r}, {c.place!r}): '',"
            )
    lines += ["}", "", "# kinds of the releases no 2.13 function has an argument of (no chain of 2.13 to judge them)"]
    missing = sorted({c.kind for c in cases} - seen)
    lines.append("NO_2_13_FUNCTION = (" + "".join(f"{k!r}, " for k in missing).rstrip(" ") + ")")
    return "\n".join(lines) + "\n"


def summary(cases: list[Case]) -> str:
    """The campaign's numbers: cases judged, rejected (by gate), located by derivls, derivls's errors where the
    chain accepts."""
    judged = [c for c in cases if c.schema]
    rejected = [c for c in judged if c.gate]
    by_gate = ", ".join(f"{g} {sum(c.gate == g for c in rejected)}" for g in ("loader", "codegen", "g++"))
    located = sum(bool(c.derivls) for c in rejected)
    extra = sum(bool(c.derivls) for c in judged if not c.gate)
    return (
        f"{len(judged)} cases ({len({c.kind for c in judged})} kinds), chain rejected {len(rejected)} ({by_gate}), "
        f"derivls reported {located}/{len(rejected)}, derivls errors where the chain accepts: "
        f"{extra}/{len(judged) - len(rejected)}"
    )


def main(argv: list[str]) -> None:
    """`python -m tests.formulas.argkinds [--seed N] [--write] [kind…]` (--write: seed 0 only)."""
    import importlib.util
    import time

    torch = importlib.util.find_spec("torch")
    torchgen = importlib.util.find_spec("torchgen")
    assert torch and torch.submodule_search_locations and torchgen and torchgen.submodule_search_locations
    packaged = Path(list(torchgen.submodule_search_locations)[0]) / "packaged"
    include = str(Path(list(torch.submodule_search_locations)[0]) / "include")
    seed = int(argv[argv.index("--seed") + 1]) if "--seed" in argv else 0
    words = [a for n, a in enumerate(argv) if not a.startswith("--") and (n == 0 or argv[n - 1] != "--seed")]
    kinds = words or None
    started = time.monotonic()
    cases = judge(packaged, include, kinds, seed=seed)
    print(table(cases))
    if "--write" in argv:
        assert seed == 0, "the checked-in verdict table is seed 0's"
        Path(__file__).with_name("argkind_verdicts.py").write_text(verdicts_module(cases), encoding="utf-8")
    for c in cases:
        if c.schema and bool(c.derivls) != bool(c.gate):
            print(f"\n{'missed' if c.gate else 'extra'}: {c.kind} {c.place} {c.schema} {c.argument}")
            print(f"  gate {c.gate}: {c.message}\n  derivls: {c.derivls}")
    print(f"\nseed {seed}: {summary(cases)}; {time.monotonic() - started:.0f} s")


if __name__ == "__main__":
    main(sys.argv[1:])
