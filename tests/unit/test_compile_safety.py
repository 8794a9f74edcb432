"""Issue 34: no formula text becomes a preprocessor directive in the code derivls compiles (compile/safety.py,
derivatives/formulas/directives.py) and formula-context says so on the token."""

from __future__ import annotations

import pytest

from derivls.compile.safety import flatten, hazards, refusals
from derivls.derivatives.formulas.rules.context import context_slips
from derivls.derivatives.formulas.tokens import matching_brackets, tokenize


@pytest.mark.parametrize(
    ("formula", "found"),
    [
        ('grad\n#include "/etc/passwd"', "#"),
        ('grad * [](){\n%:include "/dev/zero"\nreturn 1; }()', "%:"),
        ("grad * [](){ %:%: }()", "%:"),
        ("x%::y", "%:"),  # C++ lexes `%:` first: the digraph, even before `::`
        ("grad ??= x", "??="),
        ("grad ??/\n", "??/"),
        ('grad * [](){ asm(".include \\"/etc/passwd\\""); return 1; }()', "asm"),
        ('grad * [](){ __asm__(".incbin \\"/dev/zero\\""); return 1; }()', "__asm__"),
        ('_Pragma("GCC dependency \\"/etc/passwd\\"") grad', "_Pragma"),
    ],
)
def test_a_directive_a_pragma_or_assembler_anywhere_outside_a_literal_is_a_hazard(formula: str, found: str):
    assert [h.text for h in hazards(formula)][:1] == [found]


@pytest.mark.parametrize(
    "formula",
    [
        'grad * self.sgn() + at::scalar_tensor(0).to("#cpu")',  # in a string
        "grad * (self == '#')",  # in a character literal
        "grad /* # %: ??= asm */ * 2",  # in a comment
        "grad % other",
        "cond ? a : b",
        "grad * self.assembled()",  # an identifier that merely starts with asm
    ],
)
def test_text_that_only_looks_like_one_is_no_hazard(formula: str):
    assert hazards(formula) == []


def test_a_formula_is_flattened_to_one_line_of_the_same_length_and_a_line_comment_cannot_swallow_the_rest():
    formula = "grad * self // the input\n  + other \r\n * 2"
    flat = flatten(formula)
    assert len(flat) == len(formula) and "\n" not in flat and "\r" not in flat
    assert flat.split() == ["grad", "*", "self", "+", "other", "*", "2"]
    assert flatten('"a // b"\n+ c') == '"a // b" + c'  # a `//` inside a string is no comment


def test_generated_code_with_a_directive_derivls_never_writes_is_refused(real_files):
    roots = [real_files.packaged.parent.parent / "torch" / "include"]
    ours = '#include "derivls-autograd.h"\n#include <ATen/Functions.h>\n#ifdef _WIN32\n#else\n#endif\n'
    assert refusals(ours, roots, ["derivls-autograd.h"]) == []
    for line in [
        '#include "/etc/passwd"',
        "  %:include <x.h>",
        '#include "../../secret.h"',
        '#embed "/dev/zero"',
        '#import "ATen/Functions.h"',
        "#include_next <ATen/Functions.h>",
        "#if __has_include(</etc/passwd>)",
        '#line 1 "backward-1.cpp"',
        "#define X _Pragma",
    ]:
        assert {r.split(":")[0] for r in refusals(ours + line + "\n", roots, ["derivls-autograd.h"])} == {"line 6"}, (
            line
        )


@pytest.mark.parametrize(
    ("formula", "found"),
    [
        ('R"x(")x" _Pragma("GCC error \\"x\\"") R"x(")x"', "_Pragma"),  # issue 54's repro
        ('R"x(")x" asm(".include \\"/etc/passwd\\"") R"x(")x"', "asm"),
        ('u8R"(")" __asm__("") uR"(")" UR"(")" LR"(")"', "__asm__"),
        ('_Pra\\\ngma("x")', "\\"),  # a line splice
        ("grad * \\u0061sm", "\\"),  # a universal character name
        ('grad * "??/" _Pragma("x")', "??/"),  # a trigraph in a literal (a compiler that reads them: `\`)
        ("1'\"' _Pragma(\"x\") '\"'", "_Pragma"),  # the `'` of `1'"` is no digit separator
    ],
)
def test_no_literal_hides_a_directive_from_the_gate(formula: str, found: str):
    assert found in [h.text for h in hazards(formula)]


def test_an_invalid_raw_string_swallows_the_rest_as_an_unterminated_literal():
    tokens, problems = tokenize('R"a b(x)a b" _Pragma("x")')
    assert [t.kind for t in tokens] == ["string"] and problems[0].code == "unterminated-literal"


def test_digraphs_are_one_token_each_and_brackets_to_the_bracket_matcher():
    tokens, problems = tokenize("a<:1:> + f<%x%> %:%: std::vector<::at::Tensor>")
    texts = [t.text for t in tokens]
    assert "<:" in texts and ":>" in texts and "<%" in texts and "%>" in texts and "%:%:" in texts
    assert texts[texts.index("vector") + 1 : texts.index("vector") + 3] == ["<", "::"]  # `<::` is `<` then `::`
    assert problems == []
    assert len(matching_brackets(tokens)) == 2


@pytest.mark.parametrize(
    ("formula", "at"),
    [
        ('grad * [](){ %:include "/dev/zero"\n return 1; }()', 13),  # inside a lambda's body
        ('grad * [](){ asm(".include \\"x\\""); return 1; }()', 13),
        ('grad\n#include "/etc/passwd"\n', 5),
        ('grad * R"x(")x" _Pragma("GCC error \\"m\\"") R"x(")x"', 16),  # issue 54: `check` said nothing
    ],
)
def test_formula_context_reports_a_directive_on_its_token_even_in_a_lambdas_body(formula: str, at: int):
    tokens, _ = tokenize(formula)
    slips = context_slips(formula, tokens, matching_brackets(tokens), ("auto grad_result = <formula>;",))
    assert [(s.severity, s.start) for s in slips if s.start == at] == [(1, at)]


def test_a_formula_with_an_unterminated_literal_is_never_compiled(real_files):
    # what the literal swallows would be read by the compiler with the generated text after it
    from derivls.compile.units import collect_units
    from derivls.project.opener import open_project

    acos = "  self: grad * -((-self * self + 1).rsqrt()).conj()\n"
    text = real_files.derivatives.read_text(encoding="utf-8")
    edited = text.replace(acos, '  self: grad * R"x( _Pragma("GCC error \\"m\\"")\n', 1)
    analysis = open_project(real_files.derivatives, real_files.native, real_files.tags, "auto").analyzer.analyse(edited)
    (unit,) = [u for u in collect_units(analysis, ["acos"]) if u.has_backward]
    assert unit.refused is not None and "unterminated" in unit.refused
