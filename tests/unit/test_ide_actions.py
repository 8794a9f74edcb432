"""Quick fixes, asked of derivls.ide directly: each a text edit of the same document."""

from __future__ import annotations

from derivls.ide.actions import quick_fixes
from tests.unit.ide_support import analyse

MUL = "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n"


def apply(text: str, fix) -> str:
    lines = text.split("\n")
    for edit in sorted(fix.edits, key=lambda e: (e.span.line, e.span.column), reverse=True):
        span = edit.span
        assert span.line == span.end_line
        line = lines[span.line]
        lines[span.line] = line[: span.column] + edit.new_text + line[span.end_column :]
    return "\n".join(lines)


def fixes_on(text: str, line: int) -> list:
    return quick_fixes(analyse(text), (line, 0), (line, 200))


def test_a_lone_grads_0_is_replaced_by_grad():
    text = MUL + "  self: grads[0] * other\n"
    [fix] = fixes_on(text, 1)
    assert fix.title == "Replace 'grads[0]' with 'grad'" and fix.preferred
    assert fix.diagnostic.code == "grads-solely-zero"
    assert not analyse(apply(text, fix)).diagnostics


def test_sizes_is_replaced_by_sym_sizes():
    text = MUL + "  self: grad * other.sizes()[0]\n  other: grad * self\n"
    [fix] = fixes_on(text, 1)
    assert apply(text, fix).split("\n")[1] == "  self: grad * other.sym_sizes()[0]"


def test_a_misspelled_key_is_replaced_by_the_closest_argument():
    text = MUL + "  self: grad * other\n  otherr: grad * self\n"
    [fix] = fixes_on(text, 2)
    assert fix.title == "Replace 'otherr' with 'other'"
    assert not analyse(apply(text, fix)).diagnostics


def test_a_schema_not_found_offers_the_available_signatures_closest_first():
    text = "- name: mul.Tensor(Tensor self, Tensor othr) -> Tensor\n  self: grad\n"
    fixes = fixes_on(text, 0)
    assert fixes and fixes[0].preferred
    assert apply(text, fixes[0]).startswith("- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n")


def test_only_diagnostics_in_the_range_give_fixes():
    text = MUL + "  self: grads[0] * other\n  otherr: grad * self\n"
    assert [f.diagnostic.code for f in fixes_on(text, 1)] == ["grads-solely-zero"]
    assert quick_fixes(analyse(text), (0, 0), (0, 5)) == []
