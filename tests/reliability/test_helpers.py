"""The helpers the hooks call: refusing aliases, short reprs, LSP line counting, compact lines, caps."""

from __future__ import annotations

import random
import time

import pytest
import yaml

from derivls.base.diagnostics import Span, warning
from derivls.base.limits import MAX_DIAGNOSTICS, bound_diagnostics
from derivls.base.linebreaks import CompactLines, count_line_breaks
from derivls.base.safeyaml import alias_refused_class, refuse_aliases, safe_load, short_repr, short_str
from derivls.codes import lookup
from derivls.server.documents.positions import split_lines
from tests.reliability import inputs


def test_refuse_aliases_points_at_the_first_anchor() -> None:
    text = "- name: a\n  self: grad\n- name: b\n  self: &x grad\n  other: *x\n"
    with pytest.raises(alias_refused_class()) as caught:
        refuse_aliases(text)
    assert (caught.value.problem_mark.line, caught.value.problem_mark.column) == (3, 8)
    assert isinstance(caught.value, yaml.MarkedYAMLError)


def test_text_with_stars_and_ampersands_but_no_alias_is_accepted() -> None:
    text = '- name: a\n  self: grad * other && "&x *y"\n'
    refuse_aliases(text)
    assert safe_load(text) == [{"name": "a", "self": 'grad * other && "&x *y"'}]


def test_short_repr_of_an_alias_expanded_value_is_short_and_quick() -> None:
    value = yaml.load(inputs.bomb_in_entry(), Loader=yaml.CSafeLoader)  # shared lists: cheap to build
    started = time.monotonic()
    text = short_repr(value[1])
    assert len(text) <= 200 and time.monotonic() - started < 1.0
    assert short_repr([1, 2]) == "[1, 2]" and short_repr("ab") == "'ab'"
    assert short_str("x" * 1000).endswith("…") and len(short_str("x" * 1000)) == 200
    assert short_repr(10**5000).startswith("<int")


def test_count_line_breaks_follows_lsp() -> None:
    for text in ["a\nb", "a\r\nb", "a\rb\r", "a\x85b\u2028c\x0cd", "\r\n\r\n\r", ""]:
        assert count_line_breaks(text) == len(split_lines(text)) - 1


def test_compact_lines_are_the_lsp_lines() -> None:
    rng = random.Random(7)
    alphabet = ["a", "b", " ", "\n", "\r", "\r\n", "\x85", "\u2028", "\x0c"]
    for _ in range(300):
        text = "".join(rng.choice(alphabet) for _ in range(rng.randrange(0, 40)))
        compact, lines = CompactLines(text), split_lines(text)
        assert list(compact) == lines and len(compact) == len(lines)
        assert compact[-1] == lines[-1] and compact[1:4] == lines[1:4]


def test_bound_diagnostics_keeps_refusals_and_says_how_many_were_cut() -> None:
    many = tuple(warning(Span(i, 0, i, 1), lookup("unknown-name"), "m") for i in range(MAX_DIAGNOSTICS + 5))
    refusal = warning(Span(10**6, 0, 10**6, 1), lookup("too-many-entries"), "r")
    bounded = bound_diagnostics(many, [refusal])
    assert len(bounded) == MAX_DIAGNOSTICS + 2
    assert bounded[-1] is refusal and bounded[-2].code == "diagnostics-truncated"
    assert "5 more" in bounded[-2].message
    few = many[:3]
    assert bound_diagnostics(few, []) is few
