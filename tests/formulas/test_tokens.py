"""The formula tokenizer: C++ tokens with offsets, and what it finds unbalanced."""

from __future__ import annotations

from derivls.derivatives.formulas.tokens import matching_brackets, tokenize


def texts(formula: str) -> list[tuple[str, str]]:
    return [(t.kind, t.text) for t in tokenize(formula)[0]]


def test_identifiers_scope_operators_arrows_and_literals_are_one_token_each():
    assert texts('at::sum(x->y, "a,b", \'c\', 1.5e-3, 0x1F)') == [
        ("ident", "at"), ("punct", "::"), ("ident", "sum"), ("punct", "("), ("ident", "x"), ("punct", "->"),
        ("ident", "y"), ("punct", ","), ("string", '"a,b"'), ("punct", ","), ("char", "'c'"), ("punct", ","),
        ("number", "1.5e-3"), ("punct", ","), ("number", "0x1F"), ("punct", ")"),
    ]  # fmt: skip


def test_offsets_point_into_the_formula():
    formula = "grad * self.sgn()"
    for t in tokenize(formula)[0]:
        assert formula[t.start : t.end] == t.text


def test_comments_are_skipped_and_escaped_quotes_stay_inside_strings():
    assert texts('f(/*is_hermitian=*/false, "a\\"b") // done') == [
        ("ident", "f"), ("punct", "("), ("ident", "false"), ("punct", ","), ("string", '"a\\"b"'), ("punct", ")"),
    ]  # fmt: skip


def test_lambdas_and_templates_tokenize():
    assert [t for _, t in texts("[](c10::SymInt i){return -i;}")] == [
        "[", "]", "(", "c10", "::", "SymInt", "i", ")", "{", "return", "-", "i", ";", "}",
    ]  # fmt: skip
    assert [t for _, t in texts("std::get<0>(t)")] == ["std", "::", "get", "<", "0", ">", "(", "t", ")"]


def test_an_unclosed_bracket_is_reported_at_the_bracket():
    _, problems = tokenize("f(a, g(b)")
    assert [(p.code, p.start) for p in problems] == [("unbalanced-bracket", 1)]


def test_a_stray_or_mismatched_closer_is_reported_at_the_closer():
    assert [(p.code, p.start) for p in tokenize("a) + b")[1]] == [("unbalanced-bracket", 1)]
    assert [(p.code, p.start) for p in tokenize("f(a]")[1]] == [("unbalanced-bracket", 3)]


def test_an_unclosed_string_is_one_problem_not_also_its_brackets():
    _, problems = tokenize('not_implemented("oops)')
    assert [(p.code, p.start) for p in problems] == [("unterminated-literal", 16)]


def test_matching_brackets_pairs_token_indices():
    tokens, _ = tokenize("f(a[0], {b})")
    pairs = matching_brackets(tokens)
    assert {tokens[o].text + tokens[c].text for o, c in pairs.items()} == {"()", "[]", "{}"}
