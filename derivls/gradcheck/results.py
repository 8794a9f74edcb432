"""The child's answers as derivls data: a diagnostic per failing formula on that formula's text, and a
summary (checked / passed / failed / not checkable, and why). Plain data: no torch, no LSP."""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from typing import Any

from derivls.base.diagnostics import Diagnostic, Severity, Span
from derivls.base.exits import ended
from derivls.codes.gradcheck import GRADCHECK_MISMATCH
from derivls.gradcheck.source import is_fact, reason_kind

CODE = GRADCHECK_MISMATCH
SOURCE = "derivls-gradcheck"  # the diagnostic source a client sees
NO_ANSWER = "harness: no answer"  # the reason of a unit the child never answered


@dataclass(frozen=True)
class FormulaRef:
    """Where a formula of a unit stands: (unit id, kind, name) -> its span."""

    unit: str  # the unit's id in the plan
    kind: str  # "backward" | "forward"
    name: str  # backward: the input the formula is for; forward: the output
    span: Span


@dataclass
class UnitOutcome:
    id: str
    name: str  # node or function name
    entry_line: int
    name_span: Span
    status: str  # "passed" | "failed" | "not-checkable"
    reason: str = ""
    inputs: str = "opinfo"  # "opinfo" | "schema" | "layout" (made by hand: layouts.py)
    samples: int = 0
    function: str = ""  # the entry's function (acos, mul.Tensor)
    checks: dict[str, int] = field(default_factory=dict)  # how many checks ran, by kind
    unstable: int = 0  # special points left out: finite differences are not reliable there


@dataclass
class Summary:
    outcomes: list[UnitOutcome] = field(default_factory=list)
    unreachable_helpers: list[str] = field(default_factory=list)

    def counts(self) -> dict[str, int]:
        c = Counter(o.status for o in self.outcomes)
        return {
            "checked": c["passed"] + c["failed"],
            "passed": c["passed"],
            "failed": c["failed"],
            "not-checkable": c["not-checkable"],
        }

    def checks(self) -> dict[str, int]:
        """How many checks ran, by kind (backward, forward, double-backward), over every unit."""
        total: Counter[str] = Counter()
        for o in self.outcomes:
            total.update(o.checks)
        return dict(sorted(total.items()))

    def unstable(self) -> int:
        """Special points left out over every unit (the op's output or its finite differences unreliable there)."""
        return sum(o.unstable for o in self.outcomes)

    def reasons(self) -> dict[str, int]:
        return dict(Counter(reason_kind(o.reason) for o in self.outcomes if o.status == "not-checkable"))

    def facts(self) -> int:
        """Not-checkable units whose reason is a fact about the op (no formula, no CPU kernel, not_implemented(),
        another backend's formula, a formula not the derivative by design): no harness checks them."""
        return sum(1 for o in self.outcomes if o.status == "not-checkable" and is_fact(o.reason))

    def checkable_at_most(self) -> int:
        """The units a harness could check: all but those the facts leave out (issue 35's ceiling)."""
        return len(self.outcomes) - self.facts()

    def text(self) -> str:
        c = self.counts()
        lines = [
            f"gradcheck: {c['checked']} checked, {c['passed']} passed, {c['failed']} failed, "
            f"{c['not-checkable']} not checkable"
        ]
        if c["not-checkable"]:
            lines.append(
                f"  not checkable: {self.facts()} for a fact about the op (no formula, no CPU kernel, not_implemented(),"
                f" another backend's formula, not a derivative by design), {c['not-checkable'] - self.facts()} for a"
                " limit of the harness;"
                f" at most {self.checkable_at_most()} checkable"
            )
        checks = self.checks()
        if checks:
            lines.append(
                "  checks run: " + ", ".join(f"{n} {_CHECK_NAMES.get(kind, kind)}" for kind, n in checks.items())
            )
        if self.unstable():
            lines.append(f"  special points left out (finite differences not reliable there): {self.unstable()}")
        for o in self.outcomes:
            if o.status == "not-checkable":
                lines.append(f"  not checkable: {o.name} (line {o.entry_line + 1}): {o.reason}")
            elif o.inputs == "schema":
                lines.append(
                    f"  {o.name}: {o.status} on inputs made from the schema (no OpInfo sample reaches it, or none it can be checked on)"
                )
        if self.unreachable_helpers:
            lines.append("  FunctionsManual helpers not reachable: " + ", ".join(self.unreachable_helpers))
        return "\n".join(lines)


_CHECK_NAMES = {
    "backward": "backward (gradcheck)",
    "forward": "forward (check_forward_ad)",
    "double-backward": "double backward (gradgradcheck)",
}


def _function(unit: Any) -> str:
    try:
        return str(unit.info.func.func.name)
    except AttributeError:
        return ""


def formula_refs(plan_units: Iterable[Any]) -> dict[tuple[str, str, str], FormulaRef]:
    """Every formula of the planned units by (unit id, kind, input/output name)."""
    refs: dict[tuple[str, str, str], FormulaRef] = {}
    for plan in plan_units:
        unit = plan.unit
        for derivative, origin in zip(unit.info.derivatives, unit.backward):
            if origin is None:
                continue
            for name in derivative.var_names:
                refs[(plan.id, "backward", name)] = FormulaRef(plan.id, "backward", name, origin.span)
        for derivative, origin in zip(unit.info.forward_derivatives, unit.forward):
            if origin is None:
                continue
            for name in derivative.var_names:
                refs[(plan.id, "forward", name)] = FormulaRef(plan.id, "forward", name, origin.span)
    return refs


def failure_message(failure: dict[str, Any], unit_name: str) -> str:
    kind = failure.get("kind", "backward")
    what = {
        "backward": f"the backward formula for {failure.get('input')}",
        "forward": f"the forward formula for {failure.get('output') or 'the output'}",
        "double-backward": f"the derivative of the backward formula for {failure.get('input')} (gradgradcheck)",
    }.get(kind, kind)
    # the child's message: the largest mismatch, then the first line of torch's, which goes on past a comma
    # ("Jacobian mismatch for output 0 with respect to input 0,"): each line is ended as a sentence
    detail = "\n".join(ended(line.rstrip().rstrip(",;:")) for line in failure.get("message", "").strip().splitlines())
    return (
        f"{unit_name}: gradcheck fails for {what} (varying {failure.get('input')}, {failure.get('dtype')}); "
        f"sample {failure.get('sample')}.\n{detail}"
    ).rstrip()


def interpret(
    events: Sequence[dict[str, Any]],
    plans: Sequence[Any],
    left_out: Sequence[tuple[Any, str]] = (),
) -> tuple[list[Diagnostic], Summary]:
    """Diagnostics (one per failing formula, on its text) and the summary, from the child's events."""
    refs = formula_refs(plans)
    by_id = {p.id: p for p in plans}
    diagnostics: list[Diagnostic] = []
    summary = Summary()
    seen: set[str] = set()
    for event in events:
        if event.get("event") != "unit" or event.get("id") not in by_id:
            continue
        plan = by_id[event["id"]]
        unit = plan.unit
        seen.add(plan.id)
        status = str(event.get("status", "not-checkable"))
        reason = str(event.get("reason", ""))
        placed = 0
        for failure in event.get("failures", ()):
            kind = failure.get("kind", "backward")
            if kind == "double-backward":  # the backward formula's own derivative: on that formula
                kind = "backward"
            name = failure.get("input") if kind == "backward" else failure.get("output")
            ref = refs.get((plan.id, kind, str(name)))
            if ref is None and kind == "forward":  # a forward failure on an output without its own formula
                ref = next((r for k, r in refs.items() if k[0] == plan.id and k[1] == "forward"), None)
            span = ref.span if ref is not None else unit.name_span
            diagnostics.append(Diagnostic(span, Severity.ERROR, CODE, failure_message(failure, unit.name)))
            placed += 1
        if "not reachable" in reason or any("not reachable" in e for e in event.get("errors", ())):
            status, reason = (
                "not-checkable",
                "a FunctionsManual helper is not reachable: "
                + (reason or next(e for e in event["errors"] if "not reachable" in e)),
            )
        summary.outcomes.append(
            UnitOutcome(
                plan.id,
                unit.name,
                unit.entry_line,
                unit.name_span,
                status,
                reason,
                str(event.get("inputs", "opinfo")),
                int(event.get("samples", 0)),
                _function(unit),
                {str(k): int(v) for k, v in dict(event.get("checks") or {}).items()},
                int(event.get("unstable", 0)),
            )
        )
    for plan in plans:
        if plan.id not in seen:
            unit = plan.unit
            summary.outcomes.append(
                UnitOutcome(
                    plan.id,
                    unit.name,
                    unit.entry_line,
                    unit.name_span,
                    "not-checkable",
                    NO_ANSWER,
                    function=_function(unit),
                )
            )
    for unit, why in left_out:
        summary.outcomes.append(
            UnitOutcome(
                "",
                unit.name,
                unit.entry_line,
                unit.name_span,
                "not-checkable",
                why if is_fact(why) else f"not built: {why}",
                function=_function(unit),
            )
        )
    summary.outcomes.sort(key=lambda o: (o.entry_line, o.name))
    diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
    return diagnostics, summary
