"""Every argument kind, both directions (tests/formulas/argkinds.py runs the chain: torchgen's loader and codegen,
g++ on the node and the VariableType kernel). The chain's verdicts are argkind_verdicts.py's; derivls must report
an error on the entry's formula keys exactly where a gate rejects. These tests need derivls alone (the compile
test re-derives a part of the table: tests/compile/test_argument_kinds.py)."""

from __future__ import annotations

import pytest

from derivls.report import analyse_path
from tests.formulas.argkind_verdicts import FUNCTIONS, NO_2_13_FUNCTION, VERDICTS
from tests.formulas.argkinds import PLACES, Case, _autograd, _with_entries, all_kinds


@pytest.fixture(scope="module")
def derivls_cases(real_files, tmp_path_factory) -> list[Case]:
    """Every case of the table, judged by derivls (a few files of many entries, none twice for one function)."""
    cases = []
    for (kind, place), gate in VERDICTS.items():
        schema, argument, other = FUNCTIONS[kind]
        cases.append(Case(kind, place, schema, argument, other, gate))
    batches: list[list[Case]] = []
    for case in cases:
        batch = next((b for b in batches if all(c.schema != case.schema for c in b)), None)
        if batch is None:
            batches.append(batch := [])
        batch.append(case)
    folder = tmp_path_factory.mktemp("argkinds")
    for n, batch in enumerate(batches):
        body, at = _with_entries("", [(c.schema, c.entry) for c in batch])
        path = _autograd(folder / f"batch{n}", real_files.derivatives, body) / "derivatives.yaml"
        analysis, _ = analyse_path(path, real_files.native, real_files.tags, "torchgen")
        assert analysis is not None
        for case, line in zip(batch, at):
            end = line + case.entry.count("\n")
            case.derivls = [
                (d.span.line - line, d.code)
                for d in analysis.diagnostics
                if d.severity == 1 and line <= d.span.line < end
            ]
    return cases


def test_the_table_has_every_argument_kind_of_the_releases_in_every_place():
    kinds = {kind for kind, _ in VERDICTS}
    assert kinds | set(NO_2_13_FUNCTION) == set(all_kinds())
    assert {place for _, place in VERDICTS} == set(PLACES)


# where the chain rejects and derivls does not see it yet (not argument kinds derivls judges):
KNOWN_MISSES = {
    # a forward formula for a Tensor[] output (unbind.int) given a Tensor: formula-result-type judges no list output
    ("Tensor(a -> *)", "forward"),
    ("Tensor(a -> *)", "element_wise"),
    # a foreach in-place function's Tensor argument beside its Tensor(a!)[] self: gen_autograd_functions asserts
    # foreach_arg_type == ref_arg.type
    ("Tensor(a!)[]", "backward"),
}


def test_derivls_reports_an_error_on_a_formula_key_exactly_where_the_chain_rejects(derivls_cases):
    wrong = {(c.kind, c.place) for c in derivls_cases if bool(c.gate) != bool(c.derivls)}
    assert wrong == KNOWN_MISSES
    assert all(by.gate for by in derivls_cases if (by.kind, by.place) in KNOWN_MISSES)
    # (in the entry: on a formula's key, or on its `- name:` where the loader's check is about the function, as
    # for an out= function)


def test_a_tensor_optional_list_with_a_derivative_breaks_only_the_forward_mode_code(derivls_cases):
    by = {(c.kind, c.place): c for c in derivls_cases}
    assert by[("Tensor?[]", "backward")].gate == "" and by[("Tensor?[]", "backward")].derivls == []
    for place in ("forward", "auto_linear", "element_wise"):  # each reads the argument's tangent
        case = by[("Tensor?[]", place)]
        assert case.gate == "g++"
        assert case.derivls == [(1, "codegen-forward-optional-tensor-list")]
    # a forward formula that reads another argument's tangent only: the forward-mode code compiles
    assert by[("Tensor?[]", "other_forward")].gate == "" and by[("Tensor?[]", "other_forward")].derivls == []
