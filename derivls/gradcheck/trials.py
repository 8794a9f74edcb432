"""The repair phase of a gradcheck run: the usual repairs (derivls.gradcheck.repair) of each failing formula,
each made a unit of its own exactly as the build would make it, checked in one more extension.

A candidate is the entry's text with the formula's YAML scalar replaced (the same replacement the quick fix
offers), analysed again as a document of that one entry (so a `result` it now uses is saved, an
`auto_element_wise` forward formula is derived from it again), its node renamed (`AcosBackward0_repair3`) so
every candidate of a run compiles in one translation unit. `offers()` keeps a repair for a failed unit only
when exactly one of its candidates (after canonical dedup) passed every check the child ran on every sample
of every dtype. Plain data and text: no torch, no compiler, no LSP.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field, replace
from typing import Any

from derivls.base.diagnostics import Diagnostic, Edit, Fix, Span
from derivls.compile.units import Unit, collect_units
from derivls.gradcheck.repair import Candidate, Outcome, candidates, choose

# at most this many candidates are checked for one failed unit (the rest are not tried: no offer is then made
# from a partial set, which could hide a second passing candidate)
MAX_PER_UNIT = 40
MARK = "_repair"  # candidate node names: AcosBackward0_repair3


@dataclass(frozen=True)
class Trial:
    """One candidate of one failed unit: the unit to check and the edit that makes it."""

    failed: str  # the failed unit's plan id
    candidate: Candidate
    unit: Unit
    edit: Edit  # the formula's YAML scalar (absolute span) and its new source text


@dataclass(frozen=True)
class Suggestion:
    """The repair offered for a failed unit: the one candidate that passed."""

    unit: str  # the failed unit's plan id
    formula: str
    how: str
    edit: Edit
    samples: int

    @property
    def title(self) -> str:
        return f"Replace with `{self.formula}` (passes gradcheck on {self.samples} samples)"

    def fix(self) -> Fix:
        return Fix(self.title, (self.edit,), preferred=False)

    def to_json(self) -> dict[str, Any]:
        span = self.edit.span
        return {
            "line": span.line + 1,
            "column": span.column + 1,
            "end_line": span.end_line + 1,
            "end_column": span.end_column + 1,
            "formula": self.formula,
            "replacement": self.edit.new_text,
            "how": self.how,
            "samples": self.samples,
        }


@dataclass
class Trials:
    """Every candidate of a run's failed units, and the candidates of units that have too many to try."""

    trials: list[Trial] = field(default_factory=list)
    too_many: list[str] = field(default_factory=list)  # failed plan ids whose candidates were not all tried


# --- YAML: a formula as a scalar's source text


_PLAIN_START = set("!&*[]{}|>'\"%@`#,?:")


def scalar_text(formula: str, like: str) -> str:
    """`formula` as a YAML scalar's source, quoted as `like` (the scalar it replaces) is, else plain when YAML
    reads it back unchanged, else double-quoted (a JSON string is a YAML double-quoted scalar)."""
    if like.startswith('"'):
        return json.dumps(formula)
    if like.startswith("'"):
        return "'" + formula.replace("'", "''") + "'"
    plain = (
        formula == formula.strip()
        and formula
        and formula[0] not in _PLAIN_START
        and not formula.startswith(("- ", "-\t"))
        and ": " not in formula
        and " #" not in formula
        and not formula.endswith(":")
        and "\n" not in formula
    )
    return formula if plain else json.dumps(formula)


# --- candidates as units


def _names(unit: Unit) -> tuple[list[str], list[str], list[str], str | None]:
    """(tensor inputs, names that may take `.conj()`, the op's value computed again, the output's name)."""
    from derivls.aten import cpp

    f = unit.info.func
    arguments = list(f.func.arguments.flat_all)
    tensors = [a.name for a in arguments if a.type.is_tensor_like() and a.type.is_list_like() is None]
    scalars = [a.name for a in arguments if str(a.type).rstrip("?") == "Scalar"]
    returns = list(cpp.return_names(f))
    result = "result" if returns == ["result"] else None
    base = f.func.name.name.base
    recompute = []
    if tensors and result and not f.func.name.name.inplace:
        names = [a.name for a in arguments]
        recompute = [
            f"{names[0]}.{base}({', '.join(names[1:])})",
            f"at::{base}({', '.join(names)})",
            f"{base}({', '.join(names)})",
        ]
    return tensors, tensors + scalars, recompute, result


def _formula_candidates(unit: Unit, kind: str, original: str) -> list[Candidate]:
    tensors, conjugable, recompute, result = _names(unit)
    inplace = bool(unit.info.func.func.name.name.inplace)
    if kind == "forward":
        primal = [f"{t}_p" for t in tensors]
        tangents = [f"{t}_t" for t in tensors]
        if inplace:  # (the value before the write)
            primal, tangents = [*primal, "original_self_p"], [*tangents, "original_self_t"]
        return candidates(original, primal, [*primal, *tangents, *conjugable, "result"], (), result)
    if inplace:  # an in-place op's backward reads its input as `self` and its output as `result`: both inputs
        return candidates(original, [*tensors, "result"], conjugable, recompute, "result")
    return candidates(original, tensors, conjugable, recompute, result)


def _failing_origins(unit: Unit, failures: Iterable[dict[str, Any]]) -> list[tuple[str, Any]]:
    """The origins (kind, FormulaOrigin) of the unit's formulas the child's failures name, each once."""
    wanted = set()
    for failure in failures:
        kind = "backward" if failure.get("kind") in ("backward", "double-backward") else "forward"
        wanted.add((kind, str(failure.get("input") if kind == "backward" else failure.get("output"))))
    out: list[tuple[str, Any]] = []
    seen: set[Span] = set()
    formulas: list[tuple[str, Any, Any]] = [
        *(("backward", d, o) for d, o in zip(unit.info.derivatives, unit.backward)),
        *(("forward", d, o) for d, o in zip(unit.info.forward_derivatives, unit.forward)),
    ]
    named = {(kind, n) for kind, d, o in formulas if o is not None for n in d.var_names}
    first_forward = next((o for kind, _, o in formulas if kind == "forward" and o is not None), None)
    for kind, derivative, origin in formulas:
        if origin is None or origin.span in seen:
            continue
        hit = any((kind, n) in wanted for n in derivative.var_names)
        # a forward failure on an output without its own formula is the entry's first forward formula's
        # (results.interpret places its diagnostic there)
        if kind == "forward" and origin is first_forward:
            hit = hit or any(k == "forward" and (k, n) not in named for k, n in wanted)
        if hit:
            seen.add(origin.span)
            out.append((kind, origin))
    return out


def make_trials(
    text: str,
    analysis: Any,
    failed: Sequence[tuple[str, Unit, list[dict[str, Any]]]],
    limit: int = MAX_PER_UNIT,
) -> Trials:
    """The candidates of each failed unit (plan id, unit, the child's failures), as units to render."""
    from derivls.derivatives.loader import DocumentAnalyzer

    out = Trials()
    analyzer = DocumentAnalyzer(analysis.index, profile=analysis.profile)
    lines = text.splitlines(keepends=True)
    entry_lines = list(analysis.entry_lines)
    number = 0
    for plan_id, unit, failures in failed:
        start = unit.entry_line
        later = [line for line in entry_lines if line > start]
        end = later[0] if later else len(lines)
        chunk = lines[start:end]
        position = next(
            (
                i
                for i, u in enumerate(collect_units(analysis, lines=[start]))
                if u.name == unit.name and u.info == unit.info
            ),
            None,
        )
        if position is None:
            continue
        made: list[Trial] = []
        keys: set[str] = set()
        for kind, origin in _failing_origins(unit, failures):
            for candidate in _formula_candidates(unit, kind, origin.original):
                if candidate.formula in keys:
                    continue
                keys.add(candidate.formula)
                new_text = scalar_text(candidate.formula, origin.source)
                span = origin.span
                mini = _splice(chunk, span.shifted(-start), new_text)
                if mini is None:
                    continue
                units = collect_units(analyzer.analyse(mini))
                if len(units) <= position:
                    continue
                made_unit = units[position]
                if not _reads_back(made_unit, candidate.formula):
                    continue
                number += 1
                info = made_unit.info
                if info.op:
                    info = replace(info, op=f"{unit.name}{MARK}{number}")
                made.append(
                    Trial(plan_id, candidate, replace(made_unit, info=info, entry_line=start), Edit(span, new_text))
                )
        if len(made) > limit:
            out.too_many.append(plan_id)
            continue
        out.trials.extend(made)
    return out


def _splice(chunk: list[str], span: Span, new_text: str) -> str | None:
    if not (0 <= span.line <= span.end_line < len(chunk)):
        return None
    first, last = chunk[span.line], chunk[span.end_line]
    return "".join(
        [*chunk[: span.line], first[: span.column] + new_text + last[span.end_column :], *chunk[span.end_line + 1 :]]
    )


def _reads_back(unit: Unit, formula: str) -> bool:
    """Did the edited entry's analysis read the candidate's formula (the YAML scalar held what was meant)?"""
    return any(o is not None and o.original == formula for o in (*unit.backward, *unit.forward))


# --- what the child found


def outcome(event: dict[str, Any], trial: Trial) -> Outcome:
    """A candidate passed when its unit passed: every check it ran (and it ran some) on every sample."""
    return Outcome(trial.candidate, event.get("status") == "passed", int(event.get("samples", 0)))


def offers(trials: Trials, plans: Sequence[Any], events: Sequence[dict[str, Any]]) -> list[Suggestion]:
    """The suggestion of each failed unit whose candidates were all checked and exactly one of them passed.

    plans: the rendered candidates' plans (plan.unit is a trial's unit); events: the child's answers."""
    by_unit = {id(t.unit): t for t in trials.trials}
    trial_of = {p.id: by_unit[id(p.unit)] for p in plans if id(p.unit) in by_unit}
    answered = {e.get("id"): e for e in events if e.get("event") == "unit"}
    per_failed: dict[str, list[tuple[Outcome, Trial]]] = {}
    complete: dict[str, bool] = {}
    for t in trials.trials:
        complete.setdefault(t.failed, True)
    rendered = {id(t) for t in trial_of.values()}
    for t in trials.trials:
        if id(t) not in rendered:  # (not rendered: refused, or its code did not compile)
            continue
        pid = next(k for k, v in trial_of.items() if v is t)
        event = answered.get(pid)
        if event is None:
            complete[t.failed] = False  # the child stopped before answering: no choice from a partial set
            continue
        per_failed.setdefault(t.failed, []).append((outcome(event, t), t))
    out = []
    for failed, pairs in per_failed.items():
        if not complete.get(failed):
            continue
        chosen = choose([o for o, _ in pairs])
        if chosen is None:
            continue
        trial = next(t for o, t in pairs if o is chosen)
        out.append(Suggestion(failed, trial.candidate.formula, trial.candidate.how, trial.edit, chosen.samples))
    return out


def with_fixes(diagnostics: Sequence[Diagnostic], suggestions: Sequence[Suggestion]) -> list[Diagnostic]:
    """The diagnostics, each on a replaced formula's text carrying that suggestion as its quick fix."""
    by_span = {s.edit.span: s for s in suggestions}
    out = []
    for d in diagnostics:
        s = by_span.get(d.span)
        out.append(replace(d, fixes=(*d.fixes, s.fix())) if s is not None else d)
    return out


_COMPILER_LINE = re.compile(r"^unit\.cpp:(\d+):")


def culprits(source: str, errors: str, trials_by_plan: dict[str, Any]) -> set[str] | None:
    """The plan ids whose code holds the lines the compiler's `errors` name (None: a line outside every
    candidate's code, so no candidate can be blamed). Each candidate's code runs from a line naming it (its node
    `X_repairN`, its functions `<id>_bw` / `<id>_fw`) to the next line naming another."""
    owner: list[str | None] = []
    current: str | None = None
    names = {pid: re.compile(rf"\b{re.escape(pid)}_(?:bw|fw|gc)\b") for pid in trials_by_plan}
    nodes = {
        pid: re.compile(rf"\b{re.escape(t.unit.info.op)}\b") for pid, t in trials_by_plan.items() if t.unit.info.op
    }
    for line in source.splitlines():
        for pid in trials_by_plan:
            if names[pid].search(line) or (pid in nodes and nodes[pid].search(line)):
                current = pid
                break
        owner.append(current)
    blamed: set[str] = set()
    for line in errors.splitlines():
        m = _COMPILER_LINE.match(line)
        if m is None:
            continue
        n = int(m.group(1)) - 1
        who = owner[n] if 0 <= n < len(owner) else None
        if who is None:
            return None
        blamed.add(who)
    return blamed or None
