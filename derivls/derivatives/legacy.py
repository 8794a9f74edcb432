"""The `legacy` profile: derivatives.yaml read by the rules of PyTorch's January 2021 loader.

That loader (``tools/autograd/load_derivatives.py`` at the start of 2021) differs from torchgen
2.x in what it accepts and what it computes:

* no dispatch sections and no forward derivatives: every key of an entry other than `name` and
  `output_differentiability` names inputs and maps them to a backward formula (or
  `non_differentiable`); names are not checked against the schema;
* C++ types are the strings of that era's codegen (``derivls.aten.legacy_cpp``), and the
  formula rewrites are the 2021 ones: ``self.sizes()`` → ``self_sizes``, ``self.size(n)`` →
  ``self_argsize_n``, ``.strides()`` → ``strides_or_error(...)`` (only in the formula of that
  very tensor), ``zeros_like(self)`` → ``self_info``, …;
* functions are grouped by the 2021 ``signature()`` (TensorOptions kept) and the canonical
  function is the first of the group whose C++ name is the entry's name;
* node names get a number only when they are used more than once (``create_op_names``).

Its checks, each a located error here with a stable code: schema not found
(``schema-not-found``), no function of the group with the entry's name
(``no-canonical-function``), an argument named ``grad_input_mask``
(``reserved-argument-grad-input-mask``), ``.strides()`` in another variable's formula
(``strides-multi``), ``grads[i]`` out of bounds (``grads-out-of-bounds``), a name both
differentiable and not (``overlap``), ``grad`` mixed with ``grads`` (``grads-mixed``) and only
``grads[0]`` used (``grads-solely-zero``). (Its "could not find ATen function for legacy
signature" cannot fire: the schema's own function is always in its signature group.) Inputs the 2021 loader crashed on (a missing `name`, a
formula that is not a string, a `dispatch:` section, …) are errors too. What it silently
accepted but is certainly a mistake (a key that names no argument) is a warning.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Sequence
from dataclasses import replace

from derivls.aten import legacy_cpp
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.base.diagnostics import Diagnostic, Severity, error, warning
from derivls.base.safeyaml import short_repr
from derivls.codes.loader import (
    DISPATCH_NOT_SUPPORTED,
    FORMULA_NOT_STRING,
    GRADS_OUT_OF_BOUNDS,
    KEY_NOT_STRING,
    NO_CANONICAL_FUNCTION,
    OUTPUT_DIFFERENTIABILITY_ITEM,
    OUTPUT_DIFFERENTIABILITY_NOT_LIST,
    OVERLAP,
    RESERVED_ARGUMENT_GRAD_INPUT_MASK,
    UNKNOWN_NAME,
    UNSUPPORTED_TYPE,
)
from derivls.codes.yamlfile import DUPLICATE_KEY
from derivls.derivatives.document import Entry, FormulaItem, Scalar, Section
from derivls.derivatives.legacy_saved import LEGACY_REPLACEMENTS, LegacyFacts, legacy_facts, legacy_saved_variables
from derivls.derivatives.loader_checks import (
    dedup_saved,
    entry_name,
    grad_usage_checks,
    guess_has_derivatives,
    name_fixes,
    schema_not_found,
    unique,
)
from derivls.derivatives.model import Derivative, DifferentiabilityInfo
from derivls.derivatives.results import (
    EntryResult,
    KeyResult,
    SectionResult,
    create_op_prefix,
    used_gradient_indices,
)
from derivls.derivatives.saved import (
    SavedVariableError,
)

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.profiles.base import Profile

__all__ = [
    "LEGACY_REPLACEMENTS",
    "LegacyEntryAnalyzer",
    "legacy_op_numbering",
    "legacy_saved_variables",
]


# -- the analyzer -------------------------------------------------------------------------------


class LegacyEntryAnalyzer:
    """Analyses one parsed entry against a NativeIndex by the 2021 rules."""

    def __init__(self, index: NativeIndex, native_path: str | None = None, profile: Profile | None = None) -> None:
        if profile is None:
            from derivls.derivatives.profiles import LEGACY

            profile = LEGACY
        self.index = index
        self.native_path = native_path
        self.profile = profile
        self._by_signature: dict[tuple, list[NativeFunction]] | None = None

    @property
    def by_signature(self) -> dict[tuple, list[NativeFunction]]:
        """The 2021 `functions_by_signature` (file order within a group)."""
        if self._by_signature is None:
            groups: dict[tuple, list[NativeFunction]] = {}
            for f in self.index.by_schema.values():
                groups.setdefault(legacy_cpp.signature_key(f.func), []).append(f)
            self._by_signature = groups
        return self._by_signature

    def group(self, f: NativeFunction) -> list[NativeFunction]:
        return self.by_signature.get(legacy_cpp.signature_key(f.func), [f])

    def canonical(self, f: NativeFunction, defn_name: str) -> NativeFunction | None:
        functions = self.group(f)
        for g in functions:
            if legacy_cpp.name(g.func) == defn_name:
                return g
        # some functions only have in-place variants
        if defn_name + "_" == legacy_cpp.name(functions[0].func):
            return functions[0]
        return None

    def analyse(self, entry: Entry) -> EntryResult:
        diagnostics = [_parse_diagnostic(d) for d in entry.diagnostics]
        guess = guess_has_derivatives(entry)

        def done(defn_name=None, schema_function=None, canonical=None, sections=()) -> EntryResult:
            return EntryResult(
                entry,
                defn_name,
                schema_function,
                canonical,
                tuple(sections),
                unique(diagnostics),
                guess,
                self.profile,
            )

        name, specification, defn_name = entry_name(entry, diagnostics)
        if name is None or specification is None or defn_name is None:
            return done()
        output_differentiability = self._output_differentiability(entry, diagnostics)

        schema_function = self.index.by_schema.get(specification)
        if schema_function is None:
            diagnostics.append(self._schema_not_found(name, specification, defn_name))
            return done(defn_name)

        canonical = self.canonical(schema_function, defn_name)
        if canonical is None:
            diagnostics.append(
                error(
                    name.span,
                    NO_CANONICAL_FUNCTION,
                    f"None of the functions sharing the signature of '{specification}' is named '{defn_name}' "
                    f"(or '{defn_name}_'): {', '.join(str(g.func.name) for g in self.group(schema_function))}. "
                    "The 2021 loader fails here (an assertion in canonical_function).",
                )
            )
            return done(defn_name, schema_function)

        try:
            facts = legacy_facts(canonical)
        except ValueError as e:
            diagnostics.append(
                error(name.span, UNSUPPORTED_TYPE, f"{canonical.func.name} cannot be read by the 2021 codegen: {e}.")
            )
            return done(defn_name, schema_function)

        if "grad_input_mask" in facts.arg_names:
            diagnostics.append(
                error(
                    name.locate("grad_input_mask"),
                    RESERVED_ARGUMENT_GRAD_INPUT_MASK,
                    f"Schema for {defn_name} has an argument named grad_input_mask, but this name would be "
                    "shadowed by the generated code. Rename it in native_functions.yaml.",
                )
            )
            return done(defn_name, schema_function, canonical)

        explicit = [s for s in entry.sections if s.explicit]
        if explicit or not entry.sections:
            if explicit:
                diagnostics.append(
                    error(
                        explicit[0].key.span,
                        DISPATCH_NOT_SUPPORTED,
                        "The 2021 loader has no dispatch sections: it reads 'dispatch' as an argument name and "
                        "fails on its mapping. Write the formulas directly under the entry.",
                    )
                )
            return done(defn_name, schema_function, canonical)

        section = self._section(canonical, facts, defn_name, entry.sections[0], output_differentiability, diagnostics)
        return done(defn_name, schema_function, canonical, (section,))

    # -- pieces ----------------------------------------------------------------------------------

    def _output_differentiability(self, entry: Entry, diagnostics: list[Diagnostic]) -> tuple | None:
        node = entry.output_differentiability
        if node is None or node.value is None:
            return None
        if not isinstance(node.value, list):
            diagnostics.append(
                warning(
                    node.span,
                    OUTPUT_DIFFERENTIABILITY_NOT_LIST,
                    "output_differentiability should be a list of True/False, one per output; the 2021 loader "
                    "keeps this value as is and the code generated from it fails.",
                )
            )
            return None
        for item in entry.output_differentiability_items:
            if not isinstance(item.value, bool):
                diagnostics.append(
                    warning(
                        item.span,
                        OUTPUT_DIFFERENTIABILITY_ITEM,
                        f"Expected True or False, not {short_repr(item.value)}.",
                    )
                )
        return tuple(node.value)

    def _schema_not_found(self, name: Scalar, specification: str, defn_name: str) -> Diagnostic:
        return schema_not_found(name, specification, defn_name, self.index, self.native_path, legacy_cpp.name)

    def _section(
        self,
        f: NativeFunction,
        facts: LegacyFacts,
        defn_name: str,
        section: Section,
        output_differentiability: tuple | None,
        diagnostics: list[Diagnostic],
    ) -> SectionResult:
        results: list[KeyResult] = []
        keyed: list[tuple[str, FormulaItem]] = []
        for item in section.items:
            if isinstance(item.key.value, str):
                keyed.append((item.key.value, item))
            else:
                diagnostics.append(
                    error(item.key.span, KEY_NOT_STRING, f"Expected argument names, not {short_repr(item.key.value)}.")
                )
                results.append(KeyResult(item, "Default", (), "invalid"))

        derivatives: list[tuple[Derivative, FormulaItem]] = []
        non_differentiable: list[tuple[str, FormulaItem]] = []
        differentiable: dict[str, FormulaItem] = {}
        for raw_names, item in sorted(keyed, key=lambda pair: pair[0]):
            names = tuple(x.strip() for x in raw_names.split(","))
            result = self._item(f, facts, item, names, diagnostics)
            results.append(result)
            if result.derivative is not None:
                derivatives.append((result.derivative, item))
                for n in names:
                    differentiable.setdefault(n, item)
            elif result.kind == "non_differentiable":
                non_differentiable.extend((n, item) for n in names)

        for n, item in non_differentiable:
            if n in differentiable:
                diagnostics.append(
                    error(
                        item.key.locate(n),
                        OVERLAP,
                        f"'{n}' is marked non_differentiable here but also has a derivative formula "
                        f"(line {differentiable[n].key.span.line + 1} of this entry); keep one.",
                    )
                )

        diagnostics.extend(grad_usage_checks(defn_name, derivatives))  # (2021: no named gradients)

        backward = [d for d, _ in derivatives]
        info = DifferentiabilityInfo(
            name=defn_name,
            func=f,
            op=None,
            derivatives=tuple(backward),
            forward_derivatives=(),
            all_saved_inputs=dedup_saved(v for d in backward for v in d.saved_inputs),
            all_saved_outputs=dedup_saved(v for d in backward for v in d.saved_outputs),
            available_named_gradients=(),
            used_named_gradients=frozenset(),
            args_with_derivatives=tuple(b for b in facts.bindings if b.name in differentiable),
            non_differentiable_arg_names=tuple(n for n, _ in non_differentiable),
            output_differentiability=output_differentiability,
            output_differentiability_conditions=None,
        )
        return SectionResult("Default", section.key, info, tuple(results))

    def _item(
        self,
        f: NativeFunction,
        facts: LegacyFacts,
        item: FormulaItem,
        names: tuple[str, ...],
        diagnostics: list[Diagnostic],
    ) -> KeyResult:
        invalid = KeyResult(item, "Default", names, "invalid")
        formula = item.value.value
        if not isinstance(formula, str):
            diagnostics.append(
                error(
                    item.value.span,
                    FORMULA_NOT_STRING,
                    f"The formula for '{item.key.value}' must be a string (a C++ expression or 'non_differentiable'), "
                    f"not {type(formula).__name__} {short_repr(formula)}; the 2021 loader fails on it. Quote it.",
                )
            )
            return invalid
        for n in names:
            if n not in facts.arg_names:
                diagnostics.append(
                    warning(
                        item.key.locate(n),
                        UNKNOWN_NAME,
                        f"'{n}' is not an argument of {f.func.name} (arguments: {', '.join(facts.arg_names) or 'none'}). "
                        "The 2021 loader accepts it but computes no gradient for it.",
                        fixes=name_fixes(item.key, n, facts.arg_names),
                    )
                )
        if formula.lower().strip() == "non_differentiable":
            return KeyResult(item, "Default", names, "non_differentiable")
        try:
            formula_in, saved_inputs = legacy_saved_variables(formula, facts.arguments, names)
            formula_out, saved_outputs = legacy_saved_variables(formula_in, facts.returns, names)
        except SavedVariableError as e:
            diagnostics.append(
                error(item.value.locate(e.token), e.code, f"{e} (in the formula for '{item.key.value}')")
            )
            return invalid
        n_returns = len(f.func.returns)
        for i in used_gradient_indices(formula_out):
            if i >= n_returns:
                diagnostics.append(
                    error(
                        item.value.locate(f"grads[{i}]"),
                        GRADS_OUT_OF_BOUNDS,
                        f"Out of bounds grads access: the formula uses grads[{i}], but {legacy_cpp.name(f.func)} "
                        f"only returns {n_returns} output{'s' if n_returns != 1 else ''}.",
                    )
                )
                return invalid
        derivative = Derivative(
            formula=formula_out,
            original_formula=formula,
            var_names=names,
            saved_inputs=saved_inputs,
            saved_outputs=saved_outputs,
            named_gradients=frozenset(),
        )
        return KeyResult(item, "Default", names, "backward", derivative=derivative)


def _parse_diagnostic(d: Diagnostic) -> Diagnostic:
    """The 2021 loader read the file with plain yaml.load, which keeps the last of duplicate keys."""
    if d.code == DUPLICATE_KEY and d.severity == Severity.ERROR:
        return replace(
            d,
            severity=Severity.WARNING,
            message=d.message.split(";")[0]
            + "; the 2021 loader silently used the later formula (derivls shows the first). Merge the two.",
        )
    return d


# -- node names ---------------------------------------------------------------------------------


def legacy_op_numbering(results: Sequence[EntryResult]) -> list[list[tuple[str, str | None]]]:
    """The 2021 create_op_names: a number is appended only to names used more than once."""
    names: list[str | None] = []
    for result in results:
        if result.defn_name is None:
            names.append(None)
            continue
        if result.canonical is not None:
            has = any(s.has_derivatives for s in result.sections)
        else:
            has = result.guessed_has_derivatives
        names.append(create_op_prefix(result.defn_name) if has else None)
    dups = {n for n, count in Counter(names).items() if n is not None and count > 1}
    counter: Counter[str] = Counter()
    numbered: list[list[tuple[str, str | None]]] = []
    for result, n in zip(results, names):
        if result.defn_name is None:
            numbered.append([])
            continue
        op = n
        if n is not None and n in dups:
            op = f"{n}{counter[n]}"
            counter[n] += 1
        numbered.append([("Default", op)])
    return numbered


# Transitional: derivatives/query.py (moved to ide/ in parallel) imports the old spelling;
# the ide layer should ask the Profile (`profile.overload_group` / `canonical_function`) instead.
