"""Issue 34: no formula text becomes a preprocessor directive in the code derivls compiles (compile/safety.py,
derivatives/formulas/directives.py) and formula-context says so on the token."""

from __future__ import annotations

import pytest

from derivls.compile.safety import flatten, foreign_directives, hazards
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


def test_generated_code_with_a_directive_derivls_never_writes_is_refused():
    ours = '#include "derivls-autograd.h"\n#include <ATen/Functions.h>\n#ifndef AT_PER_OPERATOR_HEADERS\n#endif\n'
    assert foreign_directives(ours) == []
    assert foreign_directives(ours + '#include "/etc/passwd"\n') == ['#include "/etc/passwd"']
    assert foreign_directives(ours + "  %:include <x.h>\n") == ["%:include <x.h>"]
    assert foreign_directives(ours + '#include "../../secret.h"\n') == ['#include "../../secret.h"']
    assert foreign_directives(ours + '#embed "/dev/zero"\n') == ['#embed "/dev/zero"']


@pytest.mark.parametrize(
    ("formula", "at"),
    [
        ('grad * [](){ %:include "/dev/zero"\n return 1; }()', 13),  # inside a lambda's body
        ('grad * [](){ asm(".include \\"x\\""); return 1; }()', 13),
        ('grad\n#include "/etc/passwd"\n', 5),
    ],
)
def test_formula_context_reports_a_directive_on_its_token_even_in_a_lambdas_body(formula: str, at: int):
    tokens, _ = tokenize(formula)
    slips = context_slips(formula, tokens, matching_brackets(tokens), ("auto grad_result = <formula>;",))
    assert [(s.severity, s.start) for s in slips if s.start == at] == [(1, at)]
