"""One derivatives.yaml entry → DifferentiabilityInfos and located diagnostics.

This is torchgen's `create_differentiability_info` made position-aware and
non-stop: where torchgen raises, we record a diagnostic on the token at fault
and carry on with the rest of the entry. Op names are not assigned here (they
depend on every earlier entry); see `opnames`.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from functools import cached_property

from derivls.aten import cpp
from derivls.aten.cpp import Binding, NamedCType
from derivls.aten.native import NativeFunction, NativeIndex, Variant
from derivls.aten.schema import FunctionSchema, SchemaKind
from derivls.derivatives.document import Entry, FormulaItem, Scalar, Section, locate_in, offset_span
from derivls.derivatives.model import Derivative, DifferentiabilityInfo, ForwardDerivative, SavedAttribute
from derivls.derivatives.saved import (
    SavedVariableError,
    check_unsupported_calls,
    ident_pattern,
    saved_variables,
    uses_ident,
)
from derivls.diagnostics import Diagnostic, Edit, Fix, Related, Span, error
from derivls.frozen import frozen_dataclass

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from typing import Any

AUTOGRAD_KEYS = (
    "AutogradNestedTensor",
    "AutogradCPU",
    "AutogradCUDA",
    "AutogradHIP",
    "AutogradXLA",
    "AutogradMTIA",
    "AutogradMPS",
    "AutogradIPU",
    "AutogradXPU",
    "AutogradHPU",
    "AutogradVE",
    "AutogradLazy",
    "AutogradMeta",
    "AutogradPrivateUse1",
    "AutogradPrivateUse2",
    "AutogradPrivateUse3",
)
_VALID_DISPATCH_KEYS = frozenset(AUTOGRAD_KEYS) | {"Default"}

_SCHEMA_NAME = re.compile(r"(\w+)(\.\w+)?\((.*)\)")
_GRAD_INDEX = re.compile(r"(?:^|\W)grads\[(\d+)\]")
_RESULT_N = re.compile(r"^result(\d+)$")


@frozen_dataclass
class KeyResult:
    """What one `names: formula` item became (for hovers, inlay hints and completion)."""

    item: FormulaItem
    dispatch_key: str
    var_names: tuple[str, ...]
    kind: str  # "backward" | "forward" | "non_differentiable" | "invalid"
    derivative: Derivative | None = None
    forward: ForwardDerivative | None = None
    backward_intended: bool = False  # an invalid item that was meant as a backward formula


@frozen_dataclass
class SectionResult:
    dispatch_key: str
    key: Scalar
    info: DifferentiabilityInfo | None  # op is None here; the file pass names it
    keys: tuple[KeyResult, ...]

    @property
    def has_derivatives(self) -> bool:
        return self.info is not None and self.info.has_derivatives

    @property
    def intends_derivatives(self) -> bool:
        """Has a backward formula, or would have but for an error in one: node numbering stays put
        while a formula is being typed."""
        return self.has_derivatives or any(k.backward_intended for k in self.keys)


@frozen_dataclass
class EntryResult:
    entry: Entry
    defn_name: str | None
    schema_function: NativeFunction | None  # the function `name:` spells
    canonical: NativeFunction | None  # the function the infos are about
    sections: tuple[SectionResult, ...]
    diagnostics: tuple[Diagnostic, ...]
    guessed_has_derivatives: bool = False  # for op numbering when the schema is unknown

    @cached_property
    def op_plan(self) -> tuple[tuple[str, str | None], ...]:
        """(dispatch key, op-name prefix or None if the node is not generated), per section.

        Guessed when the schema did not resolve, so one broken entry does not renumber every node
        after it. Cached: the file pass numbers every entry on every keystroke.
        """
        if self.defn_name is None:
            return ()
        base = create_op_prefix(self.defn_name)
        if self.canonical is not None:
            counted = [(s.dispatch_key, s.intends_derivatives) for s in self.sections]
        else:
            counted = [
                (s.key.value, self.guessed_has_derivatives)
                for s in self.entry.sections
                if s.key.value in _VALID_DISPATCH_KEYS
            ]
        return tuple(
            (key, (base if key == "Default" else base + key) if has_derivatives else None)
            for key, has_derivatives in counted
        )

    @cached_property
    def dispatch_keys(self) -> tuple[str, ...]:
        return tuple(s.dispatch_key for s in self.sections)

    @property
    def schema_string(self) -> str | None:
        if self.entry.name is None or not isinstance(self.entry.name.value, str):
            return None
        return self.entry.name.value


def split_name_params(schema: str) -> str | None:
    m = _SCHEMA_NAME.match(schema)
    return m.group(1) if m else None


def create_op_prefix(name: str) -> str:
    camel_case = "".join(p.title() for p in name.split("_"))
    return (camel_case + "Backward").replace("ForwardBackward", "Backward")


def used_gradient_indices(formula: str) -> list[int]:
    if "grads[" not in formula:  # what every match contains: skip the regex
        return []
    return [int(i) for i in _GRAD_INDEX.findall(formula)]


@dataclass
class _FunctionFacts:
    """The C++ view of a native function that every formula of an entry needs."""

    bindings: list[Binding]
    arg_names: list[str]
    arg_nctypes: list[NamedCType]
    named_returns: list[NamedCType]


_facts_cache: dict[int, tuple[NativeFunction, _FunctionFacts]] = {}


def function_facts(f: NativeFunction) -> _FunctionFacts:
    hit = _facts_cache.get(id(f))
    if hit is not None and hit[0] is f:
        return hit[1]
    bindings = list(cpp.cpp_arguments(f))
    return_names = [n if n != "self" else "result" for n in cpp.return_names(f)]
    return_types = [cpp.return_type(r, symint=True).remove_const_ref() for r in f.func.returns]
    facts = _FunctionFacts(
        bindings=bindings,
        arg_names=[b.name for b in bindings],
        arg_nctypes=[b.nctype.remove_const_ref() for b in bindings],
        named_returns=[NamedCType(n, t) for n, t in zip(return_names, return_types)],
    )
    if len(_facts_cache) > 50_000:  # index reloads leave stale functions behind
        _facts_cache.clear()
    _facts_cache[id(f)] = (f, facts)
    return facts


def _ident_spans(scalar: Scalar, name: str) -> list[Span]:
    pattern = ident_pattern(name)
    spans = []
    for m in pattern.finditer(scalar.source):
        begin = m.start() + len(m.group(1))
        spans.append(offset_span(scalar.source, scalar.span, begin, begin + len(name)))
    return spans


def _first_ident(scalar: Scalar, name: str) -> Span:
    spans = _ident_spans(scalar, name)
    return spans[0] if spans else scalar.span


def _closest(word: str, candidates: Iterable[str], n: int = 3) -> list[str]:
    import difflib  # only when there is a mistake to suggest a fix for

    return difflib.get_close_matches(word, list(candidates), n=n, cutoff=0.6)


@dataclass
class _SectionContext:
    """Mutable scratch state while one dispatch section is analysed."""

    diagnostics: list[Diagnostic] = field(default_factory=list)

    def error(self, span: Span, code: str, message: str, **extra: Any) -> None:
        self.diagnostics.append(error(span, code, message, **extra))


class EntryAnalyser:
    """Analyses one parsed entry against a NativeIndex (torchgen 2.x rules)."""

    def __init__(self, index: NativeIndex, native_path: str | None = None) -> None:
        self.index = index
        self.native_path = native_path

    # -- the entry ---------------------------------------------------------------------------

    def analyse(self, entry: Entry) -> EntryResult:
        diagnostics: list[Diagnostic] = list(entry.diagnostics)
        name = entry.name
        guess = _guess_has_derivatives(entry)
        if name is None:
            diagnostics.append(
                error(
                    _first_line(entry.span),
                    "missing-name",
                    "This entry has no 'name:' key; write the ATen schema it is for, e.g. "
                    "'name: abs(Tensor self) -> Tensor'.",
                )
            )
            return EntryResult(entry, None, None, None, (), tuple(diagnostics), guess)
        if not isinstance(name.value, str):
            diagnostics.append(
                error(
                    name.span,
                    "name-not-string",
                    "'name:' must be an ATen schema string, e.g. 'abs(Tensor self) -> Tensor'.",
                )
            )
            return EntryResult(entry, None, None, None, (), tuple(diagnostics), guess)
        specification = name.value
        defn_name = split_name_params(specification)
        if defn_name is None:
            diagnostics.append(
                error(
                    name.span,
                    "unsupported-schema",
                    f"'{specification}' is not a function schema: expected 'name.overload(args) -> returns'.",
                )
            )
            return EntryResult(entry, None, None, None, (), tuple(diagnostics), guess)

        output_differentiability, conditions = self._output_differentiability(entry, specification, diagnostics)

        schema_function = self.index.by_schema.get(specification)
        if schema_function is None:
            diagnostics.append(self._schema_not_found(name, specification, defn_name))
            diagnostics.extend(_schema_free_checks(entry))
            return EntryResult(entry, defn_name, None, None, (), tuple(diagnostics), guess)

        signature = schema_function.func.signature()
        functions = self.index.by_signature.get(signature, [])
        if not functions:
            diagnostics.append(
                error(
                    name.span,
                    "legacy-signature-not-found",
                    f"No ATen function has the signature {signature} of '{specification}'.",
                )
            )
            return EntryResult(entry, defn_name, schema_function, None, (), tuple(diagnostics), guess)

        canonical = _canonical_function(functions, defn_name)
        if canonical is None:
            diagnostics.append(
                error(
                    name.span,
                    "no-canonical-function",
                    f"None of the variants of '{specification}' is named '{defn_name}' (or '{defn_name}_'): "
                    f"{', '.join(str(f.func.name) for f in functions)}.",
                )
            )
            return EntryResult(entry, defn_name, schema_function, None, (), tuple(diagnostics), guess)

        facts = function_facts(canonical)
        for reserved, why in (
            ("grad_input_mask", "this name would be shadowed by the generated code"),
            ("result", "'result' is reserved for outputs"),
        ):
            if reserved in facts.arg_names:
                diagnostics.append(
                    error(
                        name.locate(reserved),
                        f"reserved-argument-{reserved.replace('_', '-')}",
                        f"Schema for {defn_name} has an argument named {reserved}, but {why}. "
                        "Rename it in native_functions.yaml.",
                    )
                )
        if any(d.severity == 1 and d.code.startswith("reserved-argument") for d in diagnostics):
            return EntryResult(entry, defn_name, schema_function, canonical, (), tuple(diagnostics), guess)

        sections = []
        for section in entry.sections:
            key = section.key.value
            if not isinstance(key, str) or key not in _VALID_DISPATCH_KEYS:
                close = _closest(str(key), _VALID_DISPATCH_KEYS)
                diagnostics.append(
                    error(
                        section.key.span,
                        "invalid-dispatch-key",
                        f"Invalid dispatch key '{key}' for {specification}: expected 'Default' or one of "
                        f"{', '.join(AUTOGRAD_KEYS)}.",
                        fixes=tuple(
                            Fix(f"Replace with '{c}'", (Edit(section.key.span, c),), i == 0)
                            for i, c in enumerate(close)
                        ),
                    )
                )
                continue
            context = _SectionContext()
            sections.append(
                self._section(canonical, facts, defn_name, section, output_differentiability, conditions, context)
            )
            diagnostics.extend(context.diagnostics)
        result = EntryResult(entry, defn_name, schema_function, canonical, tuple(sections), tuple(diagnostics), guess)
        from derivls.formulas.hook import entry_diagnostics  # formula semantics + codegen-stage checks (issue 10)

        extra = entry_diagnostics(result, self.index, self.native_path)
        return replace(result, diagnostics=result.diagnostics + tuple(extra)) if extra else result

    def _output_differentiability(
        self, entry: Entry, specification: str, diagnostics: list[Diagnostic]
    ) -> tuple[tuple[bool, ...] | None, tuple[str, ...] | None]:
        node = entry.output_differentiability
        if node is None or node.value is None:
            return None, None
        value = node.value
        if not isinstance(value, list):
            diagnostics.append(
                error(
                    node.span,
                    "output-differentiability-not-list",
                    "output_differentiability must be a list: one True/False per output, or a single condition string.",
                )
            )
            return None, None
        if not value:
            return None, None  # torchgen treats an empty list like no list
        bad = [item for item in entry.output_differentiability_items if not isinstance(item.value, (bool, str))]
        for item in bad:
            diagnostics.append(
                error(
                    item.span,
                    "output-differentiability-item",
                    f"Expected True, False or a condition string, not {item.value!r}.",
                )
            )
        if bad:
            return None, None
        if any(isinstance(v, str) for v in value):
            if len(value) != 1:
                diagnostics.append(
                    error(
                        node.span,
                        "output-differentiability-conditions",
                        f"Not supported for {specification}: output_differentiability must be a list of bools, or a "
                        "list holding exactly one condition string (conditions only work for single-output functions).",
                    )
                )
                return None, None
            return (True,), tuple(value)
        return tuple(value), None

    def _schema_not_found(self, name: Scalar, specification: str, defn_name: str) -> Diagnostic:
        return schema_not_found(name, specification, defn_name, self.index, self.native_path, cpp.name)

    # -- one dispatch section (torchgen's set_up_derivatives) ----------------------------------

    def _section(
        self,
        f: NativeFunction,
        facts: _FunctionFacts,
        defn_name: str,
        section: Section,
        output_differentiability: tuple[bool, ...] | None,
        conditions: tuple[str, ...] | None,
        context: _SectionContext,
    ) -> SectionResult:
        returns = f.func.returns
        all_arg_names = facts.arg_names
        all_ret_names = [r.name for r in returns]
        differentiability = output_differentiability or (True,) * len(returns)
        available_named_gradients = tuple(
            f"grad_{ret.name}"
            for ret, differentiable in zip(returns, differentiability)
            if differentiable and ret.name is not None and ret.type.is_tensor_like()
        )

        keyed: list[tuple[str, FormulaItem]] = []
        results: list[KeyResult] = []
        for item in section.items:
            if isinstance(item.key.value, str):
                keyed.append((item.key.value, item))
            else:
                context.error(
                    item.key.span, "key-not-string", f"Expected argument or output names, not {item.key.value!r}."
                )
                results.append(KeyResult(item, section.key.value, (), "invalid"))

        derivatives: list[tuple[Derivative, FormulaItem]] = []
        forward: list[tuple[ForwardDerivative, FormulaItem]] = []
        non_differentiable: list[tuple[str, FormulaItem]] = []
        differentiable_names: dict[str, FormulaItem] = {}
        for raw_names, item in sorted(keyed, key=lambda pair: pair[0]):
            names = tuple(x.strip() for x in raw_names.split(","))
            result = self._item(
                f, facts, defn_name, item, names, all_arg_names, all_ret_names, available_named_gradients, context
            )
            results.append(result)
            if result.derivative is not None:
                derivatives.append((result.derivative, item))
                for n in names:
                    differentiable_names.setdefault(n, item)
            elif result.forward is not None:
                forward.append((result.forward, item))
            elif result.kind == "non_differentiable":
                non_differentiable.extend((n, item) for n in names)

        overlap = [(n, item) for n, item in non_differentiable if n in differentiable_names]
        for n, item in overlap:
            context.error(
                item.key.locate(n),
                "overlap",
                f"'{n}' is marked non_differentiable here but also has a derivative formula "
                f"(line {differentiable_names[n].key.span.line + 1} of this entry); keep one.",
            )

        args_with_derivatives = tuple(b for b in facts.bindings if b.name in differentiable_names)
        forward_derivatives = self._postprocess_forward(
            f, defn_name, all_arg_names, [d for d, _ in derivatives], forward, args_with_derivatives, context
        )
        self._check_grad_usage(defn_name, derivatives, context)

        backward = [d for d, _ in derivatives]
        info = DifferentiabilityInfo(
            name=defn_name,
            func=f,
            op=None,
            derivatives=tuple(backward),
            forward_derivatives=tuple(forward_derivatives),
            all_saved_inputs=_dedup(v for d in backward for v in d.saved_inputs),
            all_saved_outputs=_dedup(v for d in backward for v in d.saved_outputs),
            available_named_gradients=available_named_gradients,
            used_named_gradients=frozenset().union(*(d.named_gradients for d in backward)),
            args_with_derivatives=args_with_derivatives,
            non_differentiable_arg_names=tuple(n for n, _ in non_differentiable),
            output_differentiability=output_differentiability,
            output_differentiability_conditions=conditions,
        )
        # Forward results were rewritten by postprocessing; point the key results at the final ones.
        final_forward = {id(item): fw for (_, item), fw in zip(forward, forward_derivatives)}
        results = [
            KeyResult(
                r.item,
                section.key.value,
                r.var_names,
                r.kind,
                r.derivative,
                final_forward.get(id(r.item), r.forward),
                backward_intended=r.kind == "invalid" and _is_backward_key(r, all_arg_names),
            )
            for r in results
        ]
        return SectionResult(section.key.value, section.key, info, tuple(results))

    def _item(
        self,
        f: NativeFunction,
        facts: _FunctionFacts,
        defn_name: str,
        item: FormulaItem,
        names: tuple[str, ...],
        all_arg_names: list[str],
        all_ret_names: list[str | None],
        available_named_gradients: tuple[str, ...],
        context: _SectionContext,
    ) -> KeyResult:
        section_key = "Default"
        invalid = KeyResult(item, section_key, names, "invalid")
        for n in names:
            if n in all_arg_names and n in all_ret_names:
                context.error(
                    item.key.locate(n),
                    "arg-and-return",
                    f"'{n}' is both an input argument and a named return of {f.func.name}; rename the return "
                    "in native_functions.yaml.",
                )
                return invalid
        formula = item.value.value
        if not isinstance(formula, str):
            context.error(
                item.value.span,
                "formula-not-string",
                f"The formula for '{item.key.value}' must be a string (a C++ expression or 'non_differentiable'), "
                f"not {type(formula).__name__} {formula!r}; quote it.",
            )
            return invalid

        if names[0] not in all_arg_names:
            return self._forward_item(f, item, names, formula, all_arg_names, context)

        unknown = [n for n in names if n not in all_arg_names]
        for n in unknown:
            context.error(
                item.key.locate(n),
                "unknown-name",
                f"'{n}' is not an argument of {f.func.name}; arguments: {', '.join(all_arg_names)}.",
                fixes=_name_fixes(item.key, n, all_arg_names),
            )
        if unknown:
            return invalid

        if formula.lower().strip() == "non_differentiable":
            return KeyResult(item, section_key, names, "non_differentiable")

        try:
            formula_in, saved_inputs = saved_variables(formula, facts.arg_nctypes, names)
            formula_out, saved_outputs = saved_variables(formula_in, facts.named_returns, names)
        except SavedVariableError as e:
            context.diagnostics.append(_saved_variable_diagnostic(item, e))
            return invalid

        used_named_gradients = frozenset(name for name in available_named_gradients if uses_ident(formula_out, name))
        for i in used_gradient_indices(formula_out):
            if i >= len(f.func.returns):
                context.error(
                    item.value.locate(f"grads[{i}]"),
                    "grads-out-of-bounds",
                    f"Out of bounds grads access: the formula uses grads[{i}], but {cpp.name(f.func)} only returns "
                    f"{len(f.func.returns)} output{'s' if len(f.func.returns) != 1 else ''}.",
                )
                return invalid
        derivative = Derivative(
            formula=formula_out,
            original_formula=formula,
            var_names=names,
            saved_inputs=saved_inputs,
            saved_outputs=saved_outputs,
            named_gradients=used_named_gradients,
        )
        return KeyResult(item, section_key, names, "backward", derivative=derivative)

    def _forward_item(
        self,
        f: NativeFunction,
        item: FormulaItem,
        names: tuple[str, ...],
        formula: str,
        all_arg_names: list[str],
        context: _SectionContext,
    ) -> KeyResult:
        invalid = KeyResult(item, "Default", names, "invalid")
        returns = f.func.returns
        var_types = tuple(r.type for r in returns if r.name in names)
        matched = {r.name for r in returns if r.name in names}
        if not var_types:
            if names == ("result",):
                if len(returns) != 1:
                    context.error(
                        item.key.span,
                        "result-multi-output",
                        f"'result' names the only output, but {f.func.name} has {len(returns)} outputs; use "
                        + ", ".join(_output_names(f))
                        + ".",
                    )
                    return invalid
                var_types = (returns[0].type,)
                matched = {"result"}
            else:
                types = []
                for n in names:
                    m = _RESULT_N.match(n)
                    if m:
                        index = int(m.group(1))
                        if index >= len(returns):
                            context.error(
                                item.key.locate(n),
                                "result-index-out-of-bounds",
                                f"'{n}' is out of bounds: {f.func.name} has {len(returns)} output"
                                f"{'s' if len(returns) != 1 else ''}.",
                            )
                            return invalid
                        types.append(returns[index].type)
                        matched.add(n)
                var_types = tuple(types)
        unmatched = [n for n in names if n not in matched]
        if not var_types or unmatched:
            for n in unmatched or list(names):
                context.error(
                    item.key.locate(n),
                    "unknown-name",
                    f"'{n}' is neither an argument nor an output of {f.func.name}. "
                    f"Arguments: {', '.join(all_arg_names) or '(none)'}; outputs: {', '.join(_output_names(f))}.",
                    fixes=_name_fixes(item.key, n, [*all_arg_names, *_output_names(f)]),
                )
            return invalid
        forward = ForwardDerivative(
            formula=formula,
            var_names=names,
            var_types=var_types,
            required_inputs_fw_grad=None,
            required_inputs_primal=None,
            required_original_self_value=False,
            is_reusing_outplace_formula=False,
        )
        return KeyResult(item, "Default", names, "forward", forward=forward)

    # -- torchgen's postprocess_forward_derivatives ---------------------------------------------

    def _postprocess_forward(
        self,
        f: NativeFunction,
        defn_name: str,
        all_arg_names: list[str],
        derivatives: Sequence[Derivative],
        forward: Sequence[tuple[ForwardDerivative, FormulaItem]],
        args_with_derivatives: Sequence[Binding],
        context: _SectionContext,
    ) -> list[ForwardDerivative]:
        is_foreach = f.func.name.name.base.startswith("_foreach_")

        def required_inputs(formula: str, postfix: str, item: FormulaItem) -> tuple[str, ...]:
            required = set()
            for arg in args_with_derivatives:
                if arg.type in ("at::TensorList", "const at::ITensorListRef &") and not is_foreach:
                    continue  # TensorList functions handle their tangents internally
                if uses_ident(formula, arg.name):
                    context.error(
                        _first_ident(item.value, arg.name),
                        "forward-uses-base-name",
                        f"The forward formula for {defn_name} uses the base name of the argument '{arg.name}', "
                        f"which is ambiguous: write {arg.name}_p for the primal value or {arg.name}_t for the tangent.",
                    )
                    continue
                if uses_ident(formula, arg.name + postfix):
                    required.add(arg.name)
            return tuple(required)

        updated = []
        for defn, item in forward:
            formula = defn.formula
            required_tangents = required_inputs(formula, "_t", item)
            if formula == "auto_element_wise":
                if f.func.kind() == SchemaKind.inplace:
                    context.error(
                        item.value.span,
                        "auto-element-wise-inplace",
                        f"Cannot use auto_element_wise with {f.func.name} because it is an in-place variant.",
                    )
                    continue
                if len(args_with_derivatives) != 1 or len(forward) > 1 or len(forward[0][0].var_names) > 1:
                    context.error(
                        item.value.span,
                        "auto-element-wise-misuse",
                        f"{defn_name} defines its forward derivative as auto_element_wise, but that only works for "
                        "functions with a single differentiable input and a single differentiable output.",
                    )
                    continue
                if len(derivatives) != 1:
                    context.error(
                        item.value.span,
                        "auto-element-wise-misuse",
                        f"{defn_name} defines its forward derivative as auto_element_wise, but does not define the "
                        "backward formula of its input, which it is derived from.",
                    )
                    continue
                formula = expand_auto_element_wise(derivatives[0].original_formula, args_with_derivatives)
                required_tangents = tuple(all_arg_names)
            elif formula == "auto_linear":
                if len(forward) > 1 or len(forward[0][0].var_names) > 1:
                    context.error(
                        item.value.span,
                        "auto-linear-misuse",
                        f"{defn_name} defines its forward derivative as auto_linear, but that only works for "
                        "functions with a single differentiable output.",
                    )
                    continue
                diff_arg_names = [arg.name for arg in args_with_derivatives]
                if not diff_arg_names:
                    context.error(
                        item.value.span,
                        "auto-linear-misuse",
                        f"{defn_name} defines its forward derivative as auto_linear, but has no differentiable "
                        "argument: give at least one argument a backward formula.",
                    )
                    continue
                expanded = expand_auto_linear(f, defn_name, all_arg_names, diff_arg_names)
                if expanded is None:
                    context.error(
                        item.value.span,
                        "auto-linear-misuse",
                        f"auto_linear calls {defn_name} again, but it is neither a function nor a method variant.",
                    )
                    continue
                formula = expanded
                required_tangents = tuple(diff_arg_names)
            required_primals = required_inputs(formula, "_p", item)
            updated.append(
                ForwardDerivative(
                    formula=formula,
                    var_names=defn.var_names,
                    var_types=defn.var_types,
                    required_inputs_fw_grad=required_tangents,
                    required_inputs_primal=required_primals,
                    required_original_self_value=False,
                    is_reusing_outplace_formula=False,
                )
            )
        return updated

    # -- torchgen's check_grad_usage ------------------------------------------------------------

    def _check_grad_usage(
        self, defn_name: str, derivatives: Sequence[tuple[Derivative, FormulaItem]], context: _SectionContext
    ) -> None:
        grads = ident_pattern("grads")
        grad_items = [item for d, item in derivatives if uses_ident(d.formula, "grad")]
        # (every match of `grads` contains the word: most formulas skip its regex)
        grads_items = [item for d, item in derivatives if "grads" in d.formula and grads.search(d.formula)]
        num_grads_uses = sum(len(grads.findall(d.formula)) for d, _ in derivatives if "grads" in d.formula)
        indices = [i for d, _ in derivatives for i in used_gradient_indices(d.formula)]
        named_items = [item for d, item in derivatives if d.named_gradients]
        only_indexed = num_grads_uses == len(indices)

        if grad_items and num_grads_uses > 0:
            edits = tuple(Edit(s, "grads[0]") for item in grad_items for s in _ident_spans(item.value, "grad"))
            context.error(
                _first_ident(grads_items[0].value, "grads"),
                "grads-mixed",
                f"The derivatives of {defn_name} mix 'grad' and 'grads'; use one. 'grad' is 'grads[0]'.",
                fixes=(Fix("Replace 'grad' with 'grads[0]'", edits, True),) if edits else (),
            )
        elif only_indexed and indices and set(indices) == {0}:
            edits = tuple(Edit(s, "grad") for item in grads_items for s in _literal_spans(item.value, "grads[0]"))
            context.error(
                grads_items[0].value.locate("grads[0]"),
                "grads-solely-zero",
                f"The derivatives of {defn_name} only refer to 'grads[0]'. If the first output is the only "
                "differentiable one, write 'grad'; otherwise the declaration is likely wrong.",
                fixes=(Fix("Replace 'grads[0]' with 'grad'", edits, True),) if edits else (),
            )
        if named_items and (grad_items or num_grads_uses > 0):
            offender = (grad_items or grads_items)[0]
            word = "grad" if grad_items else "grads"
            context.error(
                _first_ident(offender.value, word),
                "named-grads-mixed",
                f"The derivatives of {defn_name} mix named gradients (grad_<output>) with 'grad' or 'grads[i]'; "
                "use only one way to refer to gradients.",
            )


def schema_not_found(
    name: Scalar,
    specification: str,
    defn_name: str,
    index: NativeIndex,
    native_path: str | None,
    cpp_name: Callable[[FunctionSchema], str],
) -> Diagnostic:
    """`name:` matches no schema: list the functions of that name, closest first, each a quick fix."""
    import difflib

    candidates = [schema for schema, f in index.by_schema.items() if cpp_name(f.func) == defn_name]
    ranked = sorted(candidates, key=lambda s: -difflib.SequenceMatcher(None, specification, s).ratio())
    if ranked:
        hint = "Available signatures:\n" + "\n".join(ranked)
    else:
        names = _closest(defn_name, {cpp_name(f.func) for f in index.by_schema.values()})
        hint = f"No ATen function is named '{defn_name}'." + (
            f" Did you mean {', '.join(repr(n) for n in names)}?" if names else ""
        )
    related = tuple(
        Related(native_path, line - 1, schema) for schema in ranked[:20] if (line := index.line_of(schema)) is not None
    )
    return error(
        name.span,
        "schema-not-found",
        f"Could not find ATen function for schema: {specification}. {hint}",
        related=related,
        fixes=tuple(Fix(f"Replace with '{s}'", (Edit(name.span, s),), i == 0) for i, s in enumerate(ranked[:10])),
    )


def _schema_free_checks(entry: Entry) -> list[Diagnostic]:
    """The checks that need no schema, so an entry whose name is wrong still shows its other mistakes."""
    found = []
    for section in entry.sections:
        for item in section.items:
            if not isinstance(item.value.value, str):
                continue
            try:
                check_unsupported_calls(item.value.value)
            except SavedVariableError as e:
                found.append(_saved_variable_diagnostic(item, e))
    return found


def _saved_variable_diagnostic(item: FormulaItem, e: SavedVariableError) -> Diagnostic:
    span = item.value.locate(e.token)
    fixes = ()
    if e.fix is not None and span != item.value.span:
        fixes = (Fix(f"Use '{e.fix}'", (Edit(span, e.fix),), True),)
    return error(span, e.code, f"{e} (in the formula for '{item.key.value}')", fixes=fixes)


def _is_backward_key(result: KeyResult, arg_names: Sequence[str]) -> bool:
    formula = result.item.value.value
    non_differentiable = isinstance(formula, str) and formula.lower().strip() == "non_differentiable"
    return bool(result.var_names) and result.var_names[0] in arg_names and not non_differentiable


def _literal_spans(scalar: Scalar, needle: str) -> list[Span]:
    spans = []
    start = 0
    while (span := locate_in(scalar.source, scalar.span, needle, start)) is not None:
        spans.append(span)
        start = scalar.source.find(needle, start) + len(needle)
    return spans


def _name_fixes(key: Scalar, wrong: str, candidates: Sequence[str]) -> tuple[Fix, ...]:
    span = key.locate(wrong)
    return tuple(
        Fix(f"Replace '{wrong}' with '{c}'", (Edit(span, c),), i == 0)
        for i, c in enumerate(_closest(wrong, candidates))
    )


def _output_names(f: NativeFunction) -> list[str]:
    if len(f.func.returns) == 1 and f.func.returns[0].name is None:
        return ["result"]
    return [r.name if r.name is not None else f"result{i}" for i, r in enumerate(f.func.returns)]


def expand_auto_element_wise(backward_formula: str, args_with_derivatives: Sequence[Binding]) -> str:
    """J·v for an element-wise function: the backward formula with grad → tangent, inputs → primals."""
    input_name = args_with_derivatives[0].name
    formula = ident_pattern("grad").sub(lambda m: f"{m.group(1)}{input_name}_t.conj(){m.group(2)}", backward_formula)
    for arg in args_with_derivatives:
        formula = ident_pattern(arg.name).sub(lambda m, n=arg.name: f"{m.group(1)}{n}_p{m.group(2)}", formula)
    return f"({formula}).conj()"


def expand_auto_linear(
    f: NativeFunction, defn_name: str, all_arg_names: Sequence[str], diff_arg_names: Sequence[str]
) -> str | None:
    """J·v for a linear function: the function itself applied to the tangents."""
    new_args = [name + "_t" if name in diff_arg_names else name for name in all_arg_names]
    if f.func.has_symint():
        defn_name += "_symint"
    if Variant.function in f.variants:
        return f"at::{defn_name}({', '.join(new_args)})"
    if Variant.method not in f.variants:
        return None
    return f"{new_args[0]}.{defn_name}({', '.join(new_args[1:])})"


def _canonical_function(functions: Sequence[NativeFunction], name: str) -> NativeFunction | None:
    for f in functions:
        if not f.func.is_functional_fn() and not f.func.is_out_fn() and name == str(f.func.name.name):
            return f
    # some functions only have in-place variants
    if name + "_" != cpp.name(functions[0].func):
        return None
    return functions[0]


def _dedup(saved: Iterable[SavedAttribute]) -> tuple[SavedAttribute, ...]:
    seen: set[str] = set()
    result = []
    for var in saved:
        name = var.nctype.name if isinstance(var.nctype.name, str) else var.nctype.name.name
        if name in seen:
            continue
        seen.add(name)
        result.append(var)
    return tuple(result)


def _first_line(span: Span) -> Span:
    return Span(span.line, span.column, span.line, span.column + 1)


def _guess_has_derivatives(entry: Entry) -> bool:
    """Without a schema we cannot tell arguments from outputs; assume a backward formula unless all say otherwise."""
    for section in entry.sections:
        for item in section.items:
            key, value = item.key.value, item.value.value
            if not isinstance(key, str) or not isinstance(value, str):
                continue
            first = key.split(",")[0].strip()
            if value.lower().strip() == "non_differentiable" or first.startswith("result"):
                continue
            return True
    return False


__all__ = [
    "AUTOGRAD_KEYS",
    "EntryAnalyser",
    "EntryResult",
    "KeyResult",
    "SectionResult",
    "create_op_prefix",
    "expand_auto_element_wise",
    "expand_auto_linear",
    "split_name_params",
]
