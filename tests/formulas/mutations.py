"""Random formula mutations of the real derivatives.yaml, judged by derivls and by the compiler.

One mutation per entry (so an entry's verdicts are its mutation's), chosen by a seeded random generator
among the kinds of mistake a contributor makes in a formula:

    typo-function   a misspelled helper or ATen function          handle_r_to_c(   -> handle_r_toc(
    typo-method     a misspelled method                           self.sgn()       -> self.sng()
    typo-variable   a misspelled local                            grad * other     -> grad * oter
    drop-last-arg   a call's last argument left out               pow(2, self)     -> pow(2)
    extra-arg       one argument too many                         exp(self)        -> exp(self, 1)
    swap-argument   another argument of the signature             mul(grad, other) -> mul(grad, dim)
    wrong-scope     `grad` in a forward formula, `self_t` in a backward one

and, drawn only when asked for (`--more`: the default draws stay what they were):

    drop-namespace  an `at::` call written unqualified                at::zeros_like(  -> zeros_like(
    add-namespace   a helper or operator called as `at::`             handle_r_to_c(   -> at::handle_r_to_c(
    drop-symint     a SymInt call or method taken for its int twin    narrow_symint(   -> narrow(
                                                                      x.sym_size(0)    -> x.size(0)

and, with `--conversions`, a value used without the conversion it needs (a c10::Scalar as if it were a
number, a std::optional as if it held its value):

    drop-conversion                                               other.toDouble() > 0. -> other > 0.
                                                                  eps.value()           -> eps

and, with `--python`, Python written for C++:

    python-attribute    a method called like a property               self.numel()     -> self.numel
    python-namespace    a namespace's member named with `.`           at::zeros_like(  -> torch.zeros_like(
    python-floor        `/` written as Python's floor division        a / b            -> a // b
    python-power        `x.pow(e)` written as Python's power          self.pow(2)      -> self ** 2
    python-conditional  `c ? a : b` written as Python's conditional   c ? a : b        -> a if c else b
    python-list         a braced list written as Python's list        f(x, {0, 1})     -> f(x, [0, 1])
    python-truthiness   a Tensor tested like Python's truthiness      grad.defined() ? -> grad ?

and, with `--saved-calls`, the calls load_derivatives evaluates in VariableType.cpp and saves
(`to_args_sizes(x)`, `to_args_scalartypes(x)`, `TensorGeometry(x)`, `zeros_like(x)` of an argument):

    saved-call-argument  another argument of the signature      to_args_sizes(tensors) -> to_args_sizes(dim)
    saved-call-count     the argument left out, or one more     TensorGeometry(self)   -> TensorGeometry(self, 1)

`judge()` asks derivls (its diagnostics, as `derivls check` reports them) and the compiler (`derivls
check --compile`: torchgen's generated code for the mutated entries, compiled against the torch wheel's
headers) about each mutation. The compiler is the truth: derivls must never report an error on a
mutation the compiler accepts (tests/compile/test_mutations.py), and the share of the compiler's
rejections derivls reports is its recall.

and, with `--context`, the shapes of text a formula's place in the generated C++ may not hold (a statement's
`;`, `return`, a top-level comma, Python's trailing `,` or `\\`: tests/formulas/context_mutations.py).

and, with `--result-types`, a whole formula replaced by a value of another C++ type (formula-result-type):

    result-list          the list of output gradients               grad * self.sgn() -> grads
    result-number        a number a Tensor member gives             grad * self.sgn() -> grad.dim()
    result-symint-list   a SymInt list                              self_t.conj() -> self_t.sym_sizes()

    python -m tests.formulas.mutations [--more | --conversions | --python | --saved-calls | --context | --result-types] [SEED ...]   # the table of verdicts per kind
"""

from __future__ import annotations

import random
import re
import shutil
import sys
import tempfile
from collections import Counter, defaultdict
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from derivls.derivatives.formulas import savedcalls
from derivls.derivatives.formulas.exprtypes import _arguments
from derivls.derivatives.formulas.tokens import Token, matching_brackets, tokenize, top_level
from tests.formulas.context_mutations import CONTEXT_KINDS, context_sites

KINDS = (
    "typo-function",
    "typo-method",
    "typo-variable",
    "drop-last-arg",
    "extra-arg",
    "swap-argument",
    "wrong-scope",
)
MORE_KINDS = ("drop-namespace", "add-namespace", "drop-symint")
CONVERSION_KINDS = ("drop-conversion",)
# load_derivatives' calls of an argument it evaluates in VariableType.cpp and saves (saved.py's `f\({}\)` rules):
# `to_args_sizes(tensors)` of another argument, or with an argument too few or too many
SAVED_CALL_KINDS = ("saved-call-argument", "saved-call-count")
_SAVED_CALLS = frozenset(savedcalls.CALLS)
PYTHON_KINDS = (
    "python-attribute",
    "python-namespace",
    "python-floor",
    "python-power",
    "python-conditional",
    "python-list",
    "python-truthiness",
)
# a whole formula replaced by a value of another C++ type (issue 49): a list of Tensors (`grads`), a number of a
# Tensor member (`grad.dim()`, `self_t.sym_numel()`…), a SymInt list (`grad.sym_sizes()`)
RESULT_KINDS = ("result-list", "result-number", "result-symint-list")
_NUMBER_MEMBERS = ("dim()", "numel()", "is_complex()", "sym_numel()", "sym_size(0)")
_RARE_KINDS = (CONVERSION_KINDS, PYTHON_KINDS, SAVED_CALL_KINDS, CONTEXT_KINDS)  # drawn where a formula has the site
# members that convert a c10::Scalar, a std::optional or a SymInt to what it holds (and `x.to<double>()`)
_CONVERSIONS = frozenset(
    "toDouble toComplexDouble toLong toBool toSymInt toSymFloat value expect_int guard_int".split()
)
# a SymInt method's int twin (`sym_sizes` and `sym_strides` have theirs refused by load_derivatives)
_INT_TWINS = {"sym_size": "size", "sym_numel": "numel", "sym_stride": "stride", "sym_storage_offset": "storage_offset"}
# values of a formula key that are not C++
_NOT_CPP = ("non_differentiable", "auto_linear", "auto_element_wise")
_KEY = re.compile(r"^  ([A-Za-z_][\w, ]*): (.+)$")
_ARGUMENT_NAME = re.compile(r"(\w+)(?:=[^,]*)?\s*(?:,|$)")
_SKIPPED_IDENTS = frozenset({"true", "false", "nullptr", "static_cast", "std", "at", "c10", "int64_t", "double"})


@dataclass(frozen=True)
class Mutation:
    kind: str
    entry_line: int  # 0-based line of the entry's `- name:`
    end_line: int  # 0-based line after the entry
    line: int  # 0-based line of the mutated formula
    old: str
    new: str


@dataclass
class Verdict:
    mutation: Mutation
    derivls: list[str] = field(default_factory=list)  # codes of derivls's errors in the entry
    compiler: list[str] = field(default_factory=list)  # the compiler's messages on the entry
    compiled: bool = False  # `check --compile` compiled the entry's generated code
    # torchgen's loader or codegen stops on the entry before C++ (derivls reports an error that is not a formula's,
    # `x.size(1)`: size-not-supported): the loader and codegen parity tests judge those, not the compiler
    stopped: bool = False
    # derivls's gate refused the entry before any compiler (a backslash, a '#'... outside a literal: compile/safety.py)
    refused: bool = False

    @property
    def gated(self) -> bool:
        """Refused by the gate, and said so on the entry (formula-context): derivls's verdict, the compiler's none."""
        return self.refused and not self.stopped and "formula-context" in self.derivls

    @property
    def judged(self) -> bool:
        """The compiler's verdict is the build's: compiled, and torchgen would have got that far."""
        return self.compiled and not self.stopped

    @property
    def derivls_rejects(self) -> bool:
        return bool(self.derivls)

    @property
    def compiler_rejects(self) -> bool:
        return bool(self.compiler)


@dataclass(frozen=True)
class _Formula:
    line: int
    column: int  # where the value starts
    key: str
    value: str


def _entries(lines: list[str]) -> list[tuple[int, int, str, list[_Formula]]]:
    """(first line, end line, schema, one-line formulas) of each entry without a `dispatch:` block."""
    starts = [i for i, text in enumerate(lines) if text.startswith("- name:")]
    out = []
    for k, start in enumerate(starts):
        end = starts[k + 1] if k + 1 < len(starts) else len(lines)
        if any(text.strip().startswith("dispatch:") for text in lines[start:end]):
            continue
        formulas = []
        for i in range(start + 1, end):
            m = _KEY.match(lines[i])
            if m is None or m.group(1) in ("output_differentiability", "name", "dispatch"):
                continue
            value, column = m.group(2), m.start(2)
            if len(value) > 2 and value[0] == value[-1] == '"' and "\\" not in value and '"' not in value[1:-1]:
                value, column = value[1:-1], column + 1  # a quoted formula (a ternary, a `:`): its text
            if value.startswith(("'", '"', "|", ">", "[")) or value.strip() in _NOT_CPP:
                continue
            formulas.append(_Formula(i, column, m.group(1), value))
        if formulas:
            out.append((start, end, lines[start][len("- name:") :].strip(), formulas))
    return out


def _typo(word: str, rng: random.Random) -> str:
    if len(word) < 3:
        return word + "x"
    i = rng.randrange(1, len(word) - 1)
    how = rng.randrange(3)
    if how == 0:
        return word[:i] + word[i + 1 :]  # a letter left out
    if how == 1:
        return word[:i] + word[i] + word[i:]  # a letter doubled
    if word[i] != word[i + 1]:
        return word[:i] + word[i + 1] + word[i] + word[i + 2 :]  # two letters swapped
    return word + "s"


_Edit = tuple[int, int, Callable[[str, random.Random], str]]  # replace value[start:end] by f(old, rng)


def _calls(tokens: list[Token]) -> list[tuple[int, int, list[tuple[int, int]]]]:
    """(offset of `(`, offset of its `)`, argument offset ranges) of each call `name(…)` whose arguments
    derivls can tell apart (exprtypes._arguments)."""
    pairs = matching_brackets(tokens)
    out = []
    for i, t in enumerate(tokens[:-1]):
        if t.kind != "ident" or tokens[i + 1].text != "(" or i + 1 not in pairs:
            continue
        close = pairs[i + 1]
        ranges = _arguments(tokens, i + 1, close)
        if ranges is not None:
            arguments = [(tokens[start].start, tokens[end - 1].end) for start, end in ranges]
            out.append((tokens[i + 1].start, tokens[close].start, arguments))
    return out


def _sites(formula: _Formula, schema: str) -> dict[str, list[_Edit]]:
    tokens = tokenize(formula.value)[0]
    pairs = matching_brackets(tokens)
    sites: dict[str, list[_Edit]] = defaultdict(list)
    forward = formula.key.startswith("result")
    parameters = schema.split("(", 1)[1].rsplit(") ->", 1)[0]
    arguments = [m.group(1) for m in _ARGUMENT_NAME.finditer(parameters.replace("*,", ""))]
    for i, t in enumerate(tokens):
        if t.kind != "ident" or t.text in _SKIPPED_IDENTS:
            continue
        before = tokens[i - 1].text if i else ""
        after = tokens[i + 1].text if i + 1 < len(tokens) else ""
        member = before in (".", "->")
        if after == "(":
            sites["typo-method" if member else "typo-function"].append((t.start, t.end, _typo))
            if before == "::" and i >= 2 and tokens[i - 2].text == "at" and (i < 3 or tokens[i - 3].text != "::"):
                sites["drop-namespace"].append((tokens[i - 2].start, t.start, lambda _w, _r: ""))
            elif not member and before != "::":
                sites["add-namespace"].append((t.start, t.start, lambda _w, _r: "at::"))
            if t.text.endswith("_symint"):
                sites["drop-symint"].append((t.start, t.end, lambda w, _r: w.removesuffix("_symint")))
            elif member and t.text in _INT_TWINS:
                sites["drop-symint"].append((t.start, t.end, lambda w, _r: _INT_TWINS[w]))
            if t.text in _SAVED_CALLS and not member and before != "::" and pairs.get(i + 1) == i + 3:
                argument = tokens[i + 2]  # `f(x)`: another argument, none, or one more
                others = [a for a in arguments if a != argument.text]
                if argument.kind == "ident" and others:
                    sites["saved-call-argument"].append(
                        (argument.start, argument.end, lambda _w, r, o=others: r.choice(o))
                    )
                sites["saved-call-count"].append((argument.start, argument.end, lambda w, r: r.choice(("", w + ", 1"))))
            if member and t.text in _CONVERSIONS and i + 1 in pairs and before == ".":
                sites["drop-conversion"].append((tokens[i - 1].start, tokens[pairs[i + 1]].end, lambda _w, _r: ""))
            if t.text == "defined" and before == "." and pairs.get(i + 1) == i + 2:  # x.defined() -> x
                sites["python-truthiness"].append((tokens[i - 1].start, tokens[i + 2].end, lambda _w, _r: ""))
            if before == "." and pairs.get(i + 1) == i + 2:  # x.f() -> x.f
                sites["python-attribute"].append((tokens[i + 1].start, tokens[i + 2].end, lambda _w, _r: ""))
            if before == "::" and i >= 2 and tokens[i - 2].text == "at" and (i < 3 or tokens[i - 3].text != "::"):
                sites["python-namespace"].append((tokens[i - 2].start, t.start, lambda _w, _r: "torch."))
            if (
                t.text == "pow"
                and before == "."
                and i >= 2
                and tokens[i - 2].kind == "ident"
                and pairs.get(i + 1) == i + 3
            ):
                power = f"{tokens[i - 2].text} ** {tokens[i + 2].text}"  # x.pow(e) -> x ** e, (x ** e).f()
                power = f"({power})" if i + 4 < len(tokens) and tokens[i + 4].text in (".", "->") else power
                sites["python-power"].append((tokens[i - 2].start, tokens[i + 3].end, lambda _w, _r, p=power: p))
            continue
        if member and t.text == "to" and after == "<" and before == ".":  # x.to<double>()
            close = next((j for j in range(i + 2, len(tokens)) if tokens[j].text == ">"), None)
            if close is not None and close + 1 in pairs:
                sites["drop-conversion"].append((tokens[i - 1].start, tokens[pairs[close + 1]].end, lambda _w, _r: ""))
        if member or before == "::" or after in ("::", "<"):
            continue
        sites["typo-variable"].append((t.start, t.end, _typo))
        if t.text == ("self_t" if forward else "grad"):
            wrong = "grad" if forward else "self_t"
            sites["wrong-scope"].append((t.start, t.end, lambda _w, _r, wrong=wrong: wrong))
        others = [a for a in arguments if a != t.text]
        if t.text in arguments and others:
            sites["swap-argument"].append((t.start, t.end, lambda _w, r, o=others: r.choice(o)))
    for j, t in enumerate(tokens):
        if (
            t.kind == "punct"
            and t.text == "/"
            and j
            and (tokens[j - 1].kind in ("ident", "number") or tokens[j - 1].text == ")")
        ):
            sites["python-floor"].append((t.start, t.end, lambda _w, _r: "//"))
    for j, t in enumerate(tokens):  # `(` or `,` then `{a, b}`: an argument that is a braced list
        if t.text == "{" and j and tokens[j - 1].text in ("(", ",") and pairs.get(j, j + 1) > j + 1:
            close = pairs[j]
            sites["python-list"].append((t.start, tokens[close].end, lambda w, _r: "[" + w[1:-1] + "]"))
    top = top_level(tokens)
    marks = [j for j in top if tokens[j].text in ("?", ":")]
    if [tokens[j].text for j in marks] == ["?", ":"] and 0 < marks[0] < marks[1] - 1 < len(tokens) - 2:
        q, colon, v = marks[0], marks[1], formula.value
        condition = v[tokens[0].start : tokens[q - 1].end]
        a, b = v[tokens[q + 1].start : tokens[colon - 1].end], v[tokens[colon + 1].start : tokens[-1].end]
        text = f"{a} if {condition} else {b}"
        sites["python-conditional"].append((tokens[0].start, tokens[-1].end, lambda _w, _r, x=text: x))
    for open_, close, args in _calls(tokens):
        if args:
            start = args[-2][1] if len(args) >= 2 else open_ + 1
            sites["drop-last-arg"].append((start, close, lambda _w, _r: ""))
            sites["extra-arg"].append((close, close, lambda _w, _r: ", 1"))
    sites.update(context_sites(formula.value, tokens, arguments))  # (--context: tests/formulas/context_mutations.py)
    # --result-types: the whole formula; a Tensor it may name: `grad` (backward), a tangent it reads (forward)
    tangent = next((t.text for t in tokens if t.kind == "ident" and t.text.endswith("_t")), None)
    tensor = tangent if forward else "grad"
    whole = len(formula.value)
    if tensor is not None:
        sites["result-number"].append((0, whole, lambda _w, r, x=tensor: f"{x}.{r.choice(_NUMBER_MEMBERS)}"))
        sites["result-symint-list"].append((0, whole, lambda _w, _r, x=tensor: f"{x}.sym_sizes()"))
    if not forward:
        sites["result-list"].append((0, whole, lambda _w, _r: "grads"))
    return sites


def mutate(text: str, seed: int, count: int, kinds: tuple[str, ...] = KINDS) -> tuple[str, list[Mutation]]:
    """`text` with one mutation of one of `kinds` in each of (at most) `count` entries, chosen by `seed`."""
    rng = random.Random(seed)
    lines = text.split("\n")
    entries = _entries(lines)
    rng.shuffle(entries)
    mutations: list[Mutation] = []
    for start, end, schema, formulas in entries:
        if len(mutations) >= count:
            break
        if kinds in _RARE_KINDS:  # a formula that has such a site, where the entry has any
            formulas = [f for f in formulas if any(_sites(f, schema).get(k) for k in kinds)] or formulas
        formula = rng.choice(formulas)
        sites = _sites(formula, schema)
        drawable = sorted(k for k in sites if sites[k] and k in kinds)
        if not drawable:
            continue
        kind = rng.choice(drawable)
        a, b, replace = rng.choice(sites[kind])
        value = formula.value
        new = value[:a] + replace(value[a:b], rng) + value[b:]
        if new == value:
            continue
        line = lines[formula.line]
        lines[formula.line] = line[: formula.column] + new + line[formula.column + len(value) :]  # (a closing quote)
        mutations.append(Mutation(kind, start, end, formula.line, value, new))
    mutations.sort(key=lambda m: m.line)
    return "\n".join(lines), mutations


def judge(
    real: Path, native: Path, tags: Path, torch_include: str, seed: int, count: int, kinds: tuple[str, ...] = KINDS
) -> list[Verdict]:
    """Mutate the derivatives.yaml `real` (its templates beside it are copied along) and have derivls and
    the compiler judge each mutation."""
    from derivls.compile.document import compile_file
    from derivls.project.analyse import analyse_path

    text, mutations = mutate(real.read_text(encoding="utf-8"), seed, count, kinds)
    with tempfile.TemporaryDirectory(prefix="derivls-mutations-") as folder:
        autograd = Path(folder) / "autograd"
        autograd.mkdir()
        shutil.copytree(real.parent / "templates", autograd / "templates")
        path = autograd / "derivatives.yaml"
        path.write_text(text, encoding="utf-8")
        analysis, _ = analyse_path(path, native, tags, "torchgen")
        assert analysis is not None
        result = compile_file(path, analysis, torch_include=torch_include, lines=[m.entry_line for m in mutations])
    from derivls.compile.units import safe_info

    refused = {placed.line for placed in analysis.entries for _, info in placed.infos() if safe_info(info)[1]}
    verdicts = []
    for m in mutations:
        verdict = Verdict(m)
        verdict.derivls = [
            d.code for d in analysis.diagnostics if d.severity == 1 and m.entry_line <= d.span.line < m.end_line
        ]
        verdict.stopped = any(not code.startswith("formula-") for code in verdict.derivls)
        # an entry the gate refuses (compile/safety.py: a directive-like text, formula-context) never reaches the
        # compiler: no verdict of the compiler's, as for one not compiled
        verdict.refused = m.entry_line in refused
        verdict.compiled = m.entry_line in result.by_entry and not verdict.refused
        verdict.compiler = [d.message for d in result.by_entry.get(m.entry_line, ())]
        verdicts.append(verdict)
    return verdicts


def table(verdicts: list[Verdict]) -> str:
    counts: dict[str, Counter[str]] = defaultdict(Counter)
    for v in verdicts:
        c = counts[v.mutation.kind]
        c["n"] += 1
        if not v.judged:
            c["not compiled"] += 1
        elif v.compiler_rejects:
            c["compiler rejects"] += 1
            c["both" if v.derivls_rejects else "compiler only"] += 1
        else:
            c["derivls only" if v.derivls_rejects else "neither"] += 1
    columns = ("n", "not compiled", "compiler rejects", "both", "compiler only", "derivls only", "neither")
    rows = [f"{'kind':15} " + " ".join(f"{c:>16}" for c in columns)]
    for kind in KINDS + MORE_KINDS + CONVERSION_KINDS + PYTHON_KINDS + SAVED_CALL_KINDS + CONTEXT_KINDS + RESULT_KINDS:
        if kind in counts:
            rows.append(f"{kind:15} " + " ".join(f"{counts[kind][c]:>16}" for c in columns))
    return "\n".join(rows)


def main(argv: list[str]) -> None:
    import importlib.util

    torch = importlib.util.find_spec("torch")
    torchgen = importlib.util.find_spec("torchgen")
    assert torch and torch.submodule_search_locations and torchgen and torchgen.submodule_search_locations
    packaged = Path(list(torchgen.submodule_search_locations)[0]) / "packaged"
    include = str(Path(list(torch.submodule_search_locations)[0]) / "include")
    kinds = {
        "--more": MORE_KINDS,
        "--conversions": CONVERSION_KINDS,
        "--python": PYTHON_KINDS,
        "--saved-calls": SAVED_CALL_KINDS,
        "--context": CONTEXT_KINDS,
        "--result-types": RESULT_KINDS,
    }.get(next((a for a in argv if a.startswith("--")), ""), KINDS)
    verdicts = []
    for seed in [int(a) for a in argv if not a.startswith("--")] or [1]:
        verdicts += judge(
            packaged / "autograd" / "derivatives.yaml",
            packaged / "ATen" / "native" / "native_functions.yaml",
            packaged / "ATen" / "native" / "tags.yaml",
            include,
            seed,
            250,
            kinds,
        )
    print(table(verdicts))
    for v in verdicts:
        if v.judged and v.compiler_rejects != v.derivls_rejects:
            who = "compiler only" if v.compiler_rejects else "derivls only"
            print(f"\n{who}: {v.mutation.kind} line {v.mutation.line + 1}\n  - {v.mutation.old}\n  + {v.mutation.new}")
            print(f"  derivls: {v.derivls}\n  compiler: {[m.splitlines()[0] for m in v.compiler[:2]]}")


if __name__ == "__main__":
    main(sys.argv[1:])
