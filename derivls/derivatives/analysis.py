"""One derivatives.yaml entry → DifferentiabilityInfos and located diagnostics.

This is torchgen's `create_differentiability_info` made position-aware and
non-stop: where torchgen raises, we record a diagnostic on the token at fault
and carry on with the rest of the entry. Op names are not assigned here (they
depend on every earlier entry); see the Profile's `number_ops`.
"""

from __future__ import annotations

import re
from dataclasses import replace

from derivls.aten import cpp
from derivls.aten.native import NativeFunction, NativeIndex
from derivls.base.diagnostics import Diagnostic, Edit, Fix, Related, error, warning
from derivls.base.safeyaml import short_repr
from derivls.codes.loader import (
    INVALID_DISPATCH_KEY,
    LEGACY_SIGNATURE_NOT_FOUND,
    NATIVE_FUNCTION_LEFT_OUT,
    NO_CANONICAL_FUNCTION,
    OUTPUT_DIFFERENTIABILITY_CONDITIONS,
    OUTPUT_DIFFERENTIABILITY_ITEM,
    OUTPUT_DIFFERENTIABILITY_NOT_LIST,
    RESERVED_ARGUMENT_GRAD_INPUT_MASK,
    RESERVED_ARGUMENT_RESULT,
)
from derivls.derivatives.document import Entry, Scalar, Section
from derivls.derivatives.facts import FunctionFacts, canonical_function, function_facts
from derivls.derivatives.formulas.entry_formulas import entry_diagnostics
from derivls.derivatives.forward import expand_auto_element_wise, expand_auto_linear
from derivls.derivatives.loader_checks import (
    closest,
    entry_name,
    guess_has_derivatives,
    schema_free_checks,
    schema_not_found,
    unique,
)
from derivls.derivatives.results import (
    AUTOGRAD_KEYS,
    VALID_DISPATCH_KEYS,
    EntryResult,
    KeyResult,
    SectionResult,
    create_op_prefix,
    split_name_params,
)
from derivls.derivatives.sections import SectionContext, analyse_section

TYPE_CHECKING = False  # typing is not imported at run time (saves its import on the CLI's path)
if TYPE_CHECKING:
    from derivls.derivatives.profiles.base import Profile


_SCHEMA_NAME = re.compile(r"(\w+)(\.\w+)?\((.*)\)")


class EntryAnalyzer:
    """Analyses one parsed entry against a NativeIndex (torchgen 2.x rules)."""

    def __init__(self, index: NativeIndex, native_path: str | None = None, profile: Profile | None = None) -> None:
        from derivls.derivatives.releases import rules_of

        if profile is None:
            from derivls.derivatives.profiles import TORCHGEN

            profile = TORCHGEN
        self.index = index
        self.native_path = native_path
        self.profile = profile
        self.release = rules_of(index)  # the release whose loader the index was read for

    # -- the entry ---------------------------------------------------------------------------

    def analyse(self, entry: Entry) -> EntryResult:
        """The entry's infos per dispatch key and its diagnostics, each reported once."""
        result = self._analyse(entry)
        # formula semantics (names, scope) and the per-entry codegen-stage checks
        extra = entry_diagnostics(result, self.index, self.native_path)
        if extra:
            result = replace(result, diagnostics=result.diagnostics + tuple(extra))
        if len(set(result.diagnostics)) != len(result.diagnostics):
            result = replace(result, diagnostics=unique(result.diagnostics))
        return result

    def _analyse(self, entry: Entry) -> EntryResult:
        diagnostics: list[Diagnostic] = list(entry.diagnostics)
        guess = guess_has_derivatives(entry)

        def done(defn_name=None, schema_function=None, canonical=None, sections=()) -> EntryResult:
            return EntryResult(
                entry, defn_name, schema_function, canonical, tuple(sections), tuple(diagnostics), guess, self.profile
            )

        name, specification, defn_name = entry_name(entry, diagnostics)
        if name is None or specification is None or defn_name is None:
            return done()
        output_differentiability, conditions = self._output_differentiability(entry, specification, diagnostics)
        schema_function = self.index.by_schema.get(specification)
        if schema_function is None:
            diagnostics.append(
                self._left_out(name, specification) or self._schema_not_found(name, specification, defn_name)
            )
            diagnostics.extend(schema_free_checks(entry))
            return done(defn_name)
        canonical = self._canonical(name, specification, defn_name, schema_function, diagnostics)
        if canonical is None:
            return done(defn_name, schema_function)
        facts = function_facts(canonical)
        if self._reserved_arguments(name, defn_name, facts, diagnostics):
            return done(defn_name, schema_function, canonical)
        sections = []
        for section in entry.sections:
            if not self._valid_dispatch_key(section, specification, diagnostics):
                continue
            context = SectionContext(loader_rules=self.release.loader)
            sections.append(
                analyse_section(canonical, facts, defn_name, section, output_differentiability, conditions, context)
            )
            diagnostics.extend(context.diagnostics)
        return done(defn_name, schema_function, canonical, sections)

    def _canonical(
        self,
        name: Scalar,
        specification: str,
        defn_name: str,
        schema_function: NativeFunction,
        diagnostics: list[Diagnostic],
    ) -> NativeFunction | None:
        signature = schema_function.func.signature()
        functions = self.index.by_signature.get(signature, [])
        if not functions:
            diagnostics.append(
                error(
                    name.span,
                    LEGACY_SIGNATURE_NOT_FOUND,
                    f"No ATen function has the signature {signature} of '{specification}'.",
                )
            )
            return None
        canonical = canonical_function(functions, defn_name)
        if canonical is None:
            diagnostics.append(
                error(
                    name.span,
                    NO_CANONICAL_FUNCTION,
                    f"None of the variants of '{specification}' is named '{defn_name}' (or '{defn_name}_'): "
                    f"{', '.join(str(f.func.name) for f in functions)}.",
                )
            )
        return canonical

    @staticmethod
    def _reserved_arguments(name: Scalar, defn_name: str, facts: FunctionFacts, diagnostics: list[Diagnostic]) -> bool:
        """Reports arguments named like what the generated code defines; True if there is one."""
        found = False
        for reserved, code, why in (
            ("grad_input_mask", RESERVED_ARGUMENT_GRAD_INPUT_MASK, "this name would be shadowed by the generated code"),
            ("result", RESERVED_ARGUMENT_RESULT, "'result' is reserved for outputs"),
        ):
            if reserved in facts.arg_names:
                found = True
                diagnostics.append(
                    error(
                        name.locate(reserved),
                        code,
                        f"Schema for {defn_name} has an argument named {reserved}, but {why}. "
                        "Rename it in native_functions.yaml.",
                    )
                )
        return found

    @staticmethod
    def _valid_dispatch_key(section: Section, specification: str, diagnostics: list[Diagnostic]) -> bool:
        key = section.key.value
        if isinstance(key, str) and key in VALID_DISPATCH_KEYS:
            return True
        close = closest(str(key), VALID_DISPATCH_KEYS)
        diagnostics.append(
            error(
                section.key.span,
                INVALID_DISPATCH_KEY,
                f"Invalid dispatch key '{key}' for {specification}: expected 'Default' or one of "
                f"{', '.join(AUTOGRAD_KEYS)}.",
                fixes=tuple(
                    Fix(f"Replace with '{c}'", (Edit(section.key.span, c),), i == 0) for i, c in enumerate(close)
                ),
            )
        )
        return False

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
                    OUTPUT_DIFFERENTIABILITY_NOT_LIST,
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
                    OUTPUT_DIFFERENTIABILITY_ITEM,
                    f"Expected True, False or a condition string, not {short_repr(item.value)}.",
                )
            )
        if bad:
            return None, None
        if any(isinstance(v, str) for v in value):
            if len(value) != 1:
                diagnostics.append(
                    error(
                        node.span,
                        OUTPUT_DIFFERENTIABILITY_CONDITIONS,
                        f"Not supported for {specification}: output_differentiability must be a list of bools, or a "
                        "list holding exactly one condition string (conditions only work for single-output functions).",
                    )
                )
                return None, None
            return (True,), tuple(value)
        return tuple(value), None

    def _left_out(self, name: Scalar, specification: str) -> Diagnostic | None:
        """The function is in native_functions.yaml but uses something the release rules don't know."""
        problems = getattr(self.index, "problems", None)
        if not problems:
            return None
        problem = self.index.unknown_by_schema.get(specification)
        if problem is None:
            m = _SCHEMA_NAME.match(specification)
            problem = self.index.unknown_by_name.get(m.group(1) + (m.group(2) or "")) if m else None
        if problem is None:
            return None
        return warning(
            name.span,
            NATIVE_FUNCTION_LEFT_OUT,
            f"Not checked: this function (native_functions.yaml:{problem.line}) was left out of the index: "
            f"{problem.message}. "
            + (
                "Pick the matching release with --torch-version or the 'torchVersion' setting."
                if getattr(problem, "unknown", True)
                else "torchgen rejects it: fix it on that line of native_functions.yaml."
            ),
            related=(Related(problem.path, problem.line - 1, problem.message),),
        )

    def _schema_not_found(self, name: Scalar, specification: str, defn_name: str) -> Diagnostic:
        return schema_not_found(name, specification, defn_name, self.index, self.native_path, cpp.name)

    # -- one dispatch section (torchgen's set_up_derivatives) ----------------------------------


__all__ = [
    "AUTOGRAD_KEYS",
    "EntryAnalyzer",
    "EntryResult",
    "KeyResult",
    "SectionResult",
    "canonical_function",
    "create_op_prefix",
    "expand_auto_element_wise",
    "expand_auto_linear",
    "function_facts",
    "split_name_params",
]

# Transitional: derivatives/query.py (moved to ide/ in parallel) imports the old private name;
# the ide layer should ask the Profile (`profile.canonical_function`) instead.
