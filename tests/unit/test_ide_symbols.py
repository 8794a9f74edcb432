"""Document and workspace symbols, asked of derivls.ide directly."""

from __future__ import annotations

from derivls.base.diagnostics import Span
from derivls.ide import symbols
from tests.unit.ide_support import analyse, real_analysis, real_text


def contains(outer: Span, inner: Span) -> bool:
    return (outer.line, outer.column) <= (inner.line, inner.column) and (inner.end_line, inner.end_column) <= (
        outer.end_line,
        outer.end_column,
    )


def test_one_document_symbol_per_entry_named_by_its_schema_with_its_nodes_as_detail():
    found = symbols.document_symbols(real_text().split("\n"), real_analysis())
    assert len(found) == len(real_analysis().entries)
    add = next(s for s in found if s.name.startswith("add.Tensor("))
    assert add.detail == "AddBackward0" and add.kind == symbols.FUNCTION
    assert [c.name for c in add.children] == ["self", "other", "result"]
    assert add.children[0].detail == "handle_r_to_c(self.scalar_type(), grad)"


def test_dispatch_sections_are_namespaces_holding_their_keys():
    found = symbols.document_symbols(real_text().split("\n"), real_analysis())
    total = next(s for s in found if s.name.startswith("sum(Tensor self, *, ScalarType? dtype=None)"))
    assert [(c.name, c.kind, c.detail) for c in total.children] == [
        ("Default", symbols.NAMESPACE, "SumBackward0"),
        ("AutogradNestedTensor", symbols.NAMESPACE, "SumBackwardAutogradNestedTensor0"),
    ]
    assert [k.name for k in total.children[1].children] == ["self", "result"]


def test_every_selection_is_inside_its_symbol_and_every_child_inside_its_parent():
    def check(symbol: symbols.DocumentSymbol) -> None:
        assert contains(symbol.span, symbol.selection), symbol.name
        for child in symbol.children:
            assert contains(symbol.span, child.span), (symbol.name, child.name)
            check(child)

    for symbol in symbols.document_symbols(real_text().split("\n"), real_analysis()):
        check(symbol)


def test_an_entry_without_a_name_is_still_a_symbol():
    text = "- self: grad\n"
    [symbol] = symbols.document_symbols(text.split("\n"), analyse(text))
    assert symbol.name == "(entry)"


def test_workspace_symbols_are_node_classes_and_functions():
    found = symbols.rank(symbols.workspace_symbols(real_analysis(), "AddBackward0"), "AddBackward0")
    assert (found[0].name, found[0].kind, found[0].container) == ("AddBackward0", symbols.CLASS, "add.Tensor")
    functions = symbols.rank(symbols.workspace_symbols(real_analysis(), "add.Tensor"), "add.Tensor")
    assert (functions[0].name, functions[0].kind, functions[0].container) == (
        "add.Tensor",
        symbols.FUNCTION,
        "AddBackward0",
    )


def test_workspace_symbol_queries_match_in_order_ignoring_case():
    assert symbols.matches("addbw", "AddBackward0")
    assert not symbols.matches("wba", "AddBackward0")
    assert symbols.matches("", "anything")
