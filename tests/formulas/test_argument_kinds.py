"""Every argument kind, both directions (tests/formulas/argkinds.py runs the chain: torchgen's loader and codegen,
g++ on the node and the VariableType kernel). The chain's verdicts are argkind_verdicts.py's; derivls must report
an error on the entry's formula keys exactly where a gate rejects. These tests need derivls alone (the compile
test re-derives a part of the table: tests/compile/test_argument_kinds.py), but for the one that reads every
release's native_functions.yaml: it is marked `releases` and fetches them as the release matrix does."""

from __future__ import annotations

import pytest

from derivls.project.analyse import analyse_path
from tests.formulas.argkind_verdicts import FUNCTIONS, NO_2_13_FUNCTION, VERDICTS
from tests.formulas.argkinds import PLACES, Case, _autograd, _with_entries, all_kinds
from tests.releases import fetch


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


@pytest.mark.releases  # reads every release's native_functions.yaml (fetched once, as the release matrix does)
def test_the_table_has_every_argument_kind_of_the_releases_in_every_place():
    for version in fetch.RELEASES:
        fetch.ensure(version)
    kinds = {kind for kind, _ in VERDICTS}
    assert kinds | set(NO_2_13_FUNCTION) == set(all_kinds())
    assert {place for _, place in VERDICTS} == set(PLACES)


def test_derivls_reports_an_error_on_a_formula_key_exactly_where_the_chain_rejects(derivls_cases):
    wrong = {(c.kind, c.place): (c.gate, c.derivls) for c in derivls_cases if bool(c.gate) != bool(c.derivls)}
    assert wrong == {}
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


def test_a_forward_formula_for_a_list_output_that_gives_a_tensor_is_a_result_type_error(derivls_cases):
    # unbind.int -> Tensor(a)[]: the VariableType kernel assigns the formula to a std::optional<std::vector<Tensor>>
    by = {(c.kind, c.place): c for c in derivls_cases}
    for place in ("forward", "element_wise"):  # `result: self_t`; auto_element_wise's `(…).conj()`
        assert by[("Tensor(a -> *)", place)].gate == "g++"
        assert by[("Tensor(a -> *)", place)].derivls == [(2, "formula-result-type")]
    # auto_linear gives at::unbind(self_t, dim), a std::vector<Tensor>: it compiles
    assert by[("Tensor(a -> *)", "auto_linear")].gate == "" and by[("Tensor(a -> *)", "auto_linear")].derivls == []


def test_an_entry_of_an_in_place_foreach_function_itself_is_a_foreach_argument_type_error(derivls_cases):
    # gen_variable_type pairs _foreach_div_.Tensor's arguments with its info's function's (its own) by element
    case = {(c.kind, c.place): c for c in derivls_cases}[("Tensor(a!)[]", "backward")]
    assert case.gate == "codegen"  # ("foreach_arg_type (Tensor) != ref_arg.type (Tensor[])")
    assert case.derivls == [(1, "codegen-foreach-argument-type")]


@pytest.fixture(scope="module")
def analyse(real_files):
    from derivls.aten.native import NativeIndex
    from derivls.derivatives.loader import DocumentAnalyzer

    analyzer = DocumentAnalyzer(NativeIndex.load(str(real_files.native), str(real_files.tags)), str(real_files.native))
    return lambda text: [(d.span.line, d.code) for d in analyzer.analyse(text).diagnostics if d.severity == 1]


def test_a_forward_formula_keyed_result_for_a_named_output_is_reported_on_its_key(analyse):
    # (seed 1: _flash_attention_forward_no_dropout_inplace(…) -> Tensor softmax_logsumexp; g++: 'result' was not
    # declared in this scope)
    entry = "- name: cudnn_grid_sampler(Tensor self, Tensor grid) -> Tensor output\n  self: grad\n"
    assert analyse(entry + "  result: self_t\n") == [(2, "codegen-forward-result-named-output")]
    assert analyse(entry + "  result: auto_linear\n") == [(2, "codegen-forward-result-named-output")]
    assert analyse(entry + "  output: self_t\n") == []


def test_auto_linear_of_an_out_of_place_foreach_function_is_a_result_type_error(analyse):
    # (seed 1: `at::_foreach_add(self_t, scalars)`, a std::vector<Tensor>, where one element's std::optional<Tensor>
    # goes; g++: no match for 'operator=')
    entry = "- name: _foreach_add.ScalarList(Tensor[] self, Scalar[] scalars) -> Tensor[]\n  self: grads[i]\n"
    assert analyse(entry + "  result: auto_linear\n") == [(2, "formula-result-type")]
    assert analyse(entry + "  result: self_t\n") == []


def test_the_codegen_checks_skip_a_function_whose_variable_type_kernel_is_written_by_hand(analyse):
    # gen_variable_type skips MANUAL_AUTOGRAD functions (VariableTypeManual.cpp: copy_, detach, _make_dual…) and
    # asserts nothing on `non_blocking: grad` (copy_ has no view_copy or generated variant to take it)
    manual = "- name: copy_(Tensor(a!) self, Tensor src, bool non_blocking=False) -> Tensor(a!)\n  non_blocking: grad\n"
    assert analyse(manual) == []
    generated = "- name: _logcumsumexp(Tensor self, int dim) -> Tensor\n  dim: grad\n"
    assert analyse(generated) == [(1, "codegen-derivative-for-non-tensor")]


def test_a_view_entry_is_judged_on_its_view_copy_variant(analyse):
    # (seed 2: _fw_primal's kernel is manual, but load_derivatives gives its formulas to _fw_primal_copy, whose
    # kernel gen_variable_type writes and asserts on `level: grad`)
    found = analyse("- name: _fw_primal(Tensor(a) self, int level) -> Tensor(a)\n  level: grad\n")
    assert found == [(1, "codegen-derivative-for-non-tensor")]


def test_a_mutable_entry_is_judged_on_the_functional_variant_generated_from_it(analyse):
    # (seed 3: resize_as_ has a manual kernel, but its autogen functional variant resize_as takes its info —
    # match_differentiability_info's third case — and gen_variable_type asserts on `memory_format: grad`)
    entry = (
        "- name: resize_as_(Tensor(a!) self, Tensor the_template, *, MemoryFormat? memory_format=None) -> Tensor(a!)\n"
    )
    assert analyse(entry + "  memory_format: grad\n") == [(1, "codegen-derivative-for-non-tensor")]
