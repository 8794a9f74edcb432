"""Definition and references, asked of derivls.ide directly."""

from __future__ import annotations

from pathlib import Path

from derivls.base import discovery
from derivls.ide import navigation
from tests.unit.ide_support import analyse, at, real_analysis, real_files, real_index, real_text

ADD_INPLACE = "add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)"


def native_lines() -> list[str]:
    return real_files().native.read_text(encoding="utf-8").split("\n")


def test_definition_of_name_is_the_schema_on_its_func_line():
    line, column = at(real_text(), "- name: add.Tensor", offset=10)
    [location] = navigation.definition(real_analysis(), line, column)
    assert location.path == str(real_files().native)
    span = location.span
    assert native_lines()[span.line][span.column : span.end_column] == (
        "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    )


def test_definition_of_a_called_function_is_its_definition_in_functions_manual(tmp_path: Path):
    manual = tmp_path / "FunctionsManual.cpp"
    manual.write_text("namespace x {\nTensor my_backward(const Tensor& grad) {\n  return grad;\n}\n}\n")
    text = "- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor\n  self: my_backward(grad)\n"
    analysis = analyse(text)
    [location] = navigation.definition(analysis, 1, 10, [manual])
    assert (location.path, location.span.line, location.span.column, location.span.end_column) == (
        str(manual),
        1,
        7,
        18,
    )
    assert navigation.definition(analysis, 1, 21, [manual]) == []  # `grad` is not called


def test_the_cpp_definition_wins_over_the_header_declaration(tmp_path: Path):
    header = tmp_path / "FunctionsManual.h"
    header.write_text("TORCH_API Tensor my_backward(const Tensor& grad);\n")
    source = tmp_path / "FunctionsManual.cpp"
    source.write_text("\n\nTensor my_backward(const Tensor& grad) {\n}\n")
    [location] = navigation.manual_locations([header, source], "my_backward")
    assert location.path == str(source) and location.span.line == 2
    [declared] = navigation.manual_locations([header], "my_backward")
    assert declared.span.line == 0


def test_references_from_a_name_are_the_func_lines_of_its_overload_group():
    line, column = at(real_text(), "- name: add.Tensor", offset=10)
    found = navigation.group_locations(real_analysis(), real_index(), line, column)
    texts = [native_lines()[loc.span.line][loc.span.column : loc.span.end_column] for loc in found]
    assert texts[0].startswith("add.Tensor(") and ADD_INPLACE in texts and any(t.startswith("add.out(") for t in texts)


def test_references_from_a_native_func_are_the_entries_whose_formulas_apply_to_it():
    [span] = navigation.entries_applying(real_analysis(), real_index(), ADD_INPLACE)
    line, _ = at(real_text(), "- name: add.Tensor")
    assert (span.line, span.column) == (line, len("- name: "))
    assert navigation.entries_applying(real_analysis(), real_index(), "no_such(Tensor self) -> Tensor") == []


def test_func_at_finds_the_schema_of_the_native_entry_around_a_line():
    lines = [
        "- func: abs(Tensor self) -> Tensor",
        "  variants: function, method",
        "",
        "- func: 'x(Tensor a) -> Tensor'",
    ]
    assert navigation.func_at(lines, 1) == "abs(Tensor self) -> Tensor"
    assert navigation.func_at(lines, 3) == "x(Tensor a) -> Tensor"


def test_layout_pairs_a_packaged_native_functions_with_its_derivatives():
    assert discovery.derivatives_for_native(real_files().native) == [real_files().derivatives.resolve()]


def test_layout_finds_functions_manual_header_in_a_wheel():
    found = discovery.functions_manual_sources(real_files().derivatives, real_files().native, [])
    assert [p.name for p in found] == ["FunctionsManual.h"]
