"""What gets compiled: one unit per autograd node and per function with forward formulas.

A unit carries the info the codegen renders and, for each of its formulas, where the formula's
text stands in the YAML (a `FormulaOrigin`), so compiler errors can be mapped back to it.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from dataclasses import dataclass
from typing import Any

from derivls.base.diagnostics import Span
from derivls.compile.sourcemap import FormulaOrigin
from derivls.jobs.entries import entry_key

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.model import DifferentiabilityInfo


@dataclass(frozen=True)
class Unit:
    info: DifferentiabilityInfo  # with its op name
    entry_line: int  # 0-based line of the entry's `- name:` (which entry this unit belongs to)
    entry_text: str  # the entry's text, to tell which entries changed since the last compile
    name_span: Span  # absolute span of the entry's `name:` value
    backward: tuple[FormulaOrigin | None, ...]  # one per info.derivatives
    forward: tuple[FormulaOrigin | None, ...]  # one per info.forward_derivatives
    # why none of its code may reach a compiler (compile/safety.py: a directive in a formula), None: it may
    refused: str | None = None

    @property
    def name(self) -> str:
        return self.info.op or self.info.name

    @property
    def has_backward(self) -> bool:
        return bool(self.info.args_with_derivatives)

    @property
    def has_forward(self) -> bool:
        return bool(self.info.forward_derivatives)

    @property
    def in_generated_kernel(self) -> bool:
        """Its forward formulas stand in a VariableType kernel torchgen writes: not one of VariableTypeManual.cpp's
        (gen_variable_type skips MANUAL_AUTOGRAD functions; their forward formulas reach no C++)."""
        from derivls.aten import cpp
        from derivls.derivatives.formulas.codegen_rules.context import MANUAL_AUTOGRAD

        return cpp.name(self.info.func.func) not in MANUAL_AUTOGRAD


def _origin(item: Any, formula: str, start_line: int) -> FormulaOrigin | None:
    value = item.value
    if not isinstance(value.value, str):
        return None
    return FormulaOrigin(formula, value.value, value.source, value.span.shifted(start_line))


def safe_info(info: DifferentiabilityInfo) -> tuple[DifferentiabilityInfo, str | None]:
    """The info with every text that reaches the generated C++ on one line (safety.flatten), and why it may not
    be compiled at all (safety.hazards: a directive in a formula), None when it may. The one gate compile and
    gradcheck pass: collect_units applies it to every unit."""
    from dataclasses import replace as copy

    from derivls.compile.safety import flatten, hazards
    from derivls.derivatives.formulas.tokens import tokenize

    texts = [
        *(d.formula for d in info.derivatives),
        *(d.formula for d in info.forward_derivatives),
        *(a.expr for a in (*info.all_saved_inputs, *info.all_saved_outputs)),
        *(info.output_differentiability_conditions or ()),
    ]
    for text in texts:
        found = hazards(text)
        if found:
            return info, f"{found[0].message} in '{text[:60]}' (formula-context): not compiled"
        if ('"' in text or "'" in text or "/*" in text) and any(
            p.code == "unterminated-literal" for p in tokenize(text)[1]
        ):  # (what it swallows would be read by the compiler as the template's text goes on)
            return info, f"an unterminated literal in '{text[:60]}' (formula-unterminated): not compiled"
    if not any("\n" in t or "\r" in t for t in texts):
        return info, None

    def saved(items: Any) -> Any:
        return tuple(copy(a, expr=flatten(a.expr)) for a in items)

    return (
        copy(
            info,
            derivatives=tuple(
                copy(
                    d,
                    formula=flatten(d.formula),
                    saved_inputs=saved(d.saved_inputs),
                    saved_outputs=saved(d.saved_outputs),
                )
                for d in info.derivatives
            ),
            forward_derivatives=tuple(copy(d, formula=flatten(d.formula)) for d in info.forward_derivatives),
            all_saved_inputs=saved(info.all_saved_inputs),
            all_saved_outputs=saved(info.all_saved_outputs),
            output_differentiability_conditions=(
                tuple(flatten(c) for c in info.output_differentiability_conditions)
                if info.output_differentiability_conditions is not None
                else None
            ),
        ),
        None,
    )


def _entry_units(placed: Any, infos: Iterable[tuple[str, Any]]) -> list[Unit]:
    sections = {s.dispatch_key: s for s in placed.result.sections}
    name = placed.entry.name
    name_span = name.span.shifted(placed.start_line) if name is not None else Span(placed.line, 0, placed.line, 0)
    entry_text = entry_key(placed)
    units = []
    for key, raw in infos:
        info, refused = safe_info(raw)
        section = sections.get(key)
        by_id: dict[int, Any] = {}
        if section is not None:
            for k in section.keys:
                if k.derivative is not None:
                    by_id[id(k.derivative)] = k.item
                if k.forward is not None:
                    by_id[id(k.forward)] = k.item
        backward = tuple(
            _origin(by_id[id(r)], d.formula, placed.start_line) if id(r) in by_id else None
            for r, d in zip(raw.derivatives, info.derivatives)
        )
        forward = tuple(
            _origin(by_id[id(r)], d.formula, placed.start_line) if id(r) in by_id else None
            for r, d in zip(raw.forward_derivatives, info.forward_derivatives)
        )
        units.append(Unit(info, placed.line, entry_text, name_span, backward, forward, refused))
    return units


def collect_units(analysis: Any, only: Sequence[str] | None = None, lines: Iterable[int] | None = None) -> list[Unit]:
    """The units of a DocumentAnalysis, in file order (view_copy nodes after their view's).

    `only`: node names (MulBackward0) or function names (mul.Tensor, mul) to keep; `lines`: keep
    the entries whose `- name:` is on one of these 0-based lines.
    """
    wanted_lines = set(lines) if lines is not None else None
    copies: dict[int, list[tuple[str, Any]]] = {}
    for copy in analysis.view_copies:
        copies.setdefault(id(copy.source), []).append((copy.dispatch_key, copy.info))
    units: list[Unit] = []
    for placed in analysis.entries:
        if wanted_lines is not None and placed.line not in wanted_lines:
            continue
        if placed.result.canonical is None:
            continue
        units.extend(_entry_units(placed, placed.infos()))
        units.extend(_entry_units(placed, copies.get(id(placed), ())))
    if only:
        names = set(only)
        units = [u for u in units if _matches(u.info, names)]
    return units


def _matches(info: DifferentiabilityInfo, names: set[str]) -> bool:
    return bool({info.op, info.name, str(info.func.func.name)} & names)


def unit_names(analysis: Any) -> list[str]:
    return [u.name for u in collect_units(analysis)]
