"""native_functions.yaml / tags.yaml diagnostics: every code on its token, all at once, errors where the
release is known (a warning `native-left-out` where it is not), quick fixes one edit away, and one bad entry
costs only itself. (tests/parity/test_native_campaign.py judges the same against torchgen itself.)"""

from __future__ import annotations

import pytest

from derivls.aten.native import NativeIndex
from derivls.aten.native_report import problem_diagnostic, problems_by_file
from derivls.codes.model import Severity
from derivls.derivatives.releases import NEWEST

TAGS = """\
- tag: core
  desc: core
- tag: pt2_compliant_tag
  desc: pt2
- tag: inplace_view
  desc: inplace view
- tag: view_copy
  desc: view copy
- tag: pointwise
  desc: pointwise
- tag: nondeterministic_seeded
  desc: random
"""

ABS = """\
- func: abs(Tensor self) -> Tensor
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: abs

- func: abs_(Tensor(a!) self) -> Tensor(a!)
  variants: function, method
  dispatch:
    CompositeExplicitAutograd: abs_

- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  dispatch:
    CPU, CUDA: abs_out

- func: sin.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)
  structured: True
  dispatch:
    CPU, CUDA: sin_out

- func: sin(Tensor self) -> Tensor
  structured_delegate: sin.out
"""


def _index(text: str, tags: str = TAGS) -> NativeIndex:
    return NativeIndex.from_text(text, tags, "native_functions.yaml", tags_path="tags.yaml", rules=NEWEST.native)


def _found(text: str, tags: str = TAGS) -> list[tuple[str, int, str]]:
    """(file, 1-based line, code) of every error, the release known."""
    return [(p.path, p.line, p.code) for p in _index(text, tags).rejected]


def _with(old: str, new: str) -> str:
    assert old in ABS
    return ABS.replace(old, new, 1)


CASES = [
    # (id, text, line, code)
    (
        "native-schema",
        _with("abs_(Tensor(a!) self) -> Tensor(a!)", "abs_(Tensor(a!) self) -> Tensor"),
        6,
        "native-schema",
    ),
    ("native-unknown-type", _with("abs(Tensor self)", "abs(Tensr self)"), 1, "native-unknown-type"),
    (
        "native-unknown-key",
        _with("  variants: function, method\n", "  variants: function, method\n  devce_guard: False\n"),
        3,
        "native-unknown-key",
    ),
    (
        "native-value-type",
        _with("  variants: function, method\n", "  variants: function, method\n  device_guard: Flase\n"),
        3,
        "native-value-type",
    ),
    (
        "native-unknown-variant",
        _with("  variants: function, method\n", "  variants: function, methd\n"),
        2,
        "native-unknown-variant",
    ),
    (
        "native-device-check",
        _with("  variants: function, method\n", "  variants: function, method\n  device_check: NoChek\n"),
        3,
        "native-device-check",
    ),
    (
        "native-unknown-tag",
        _with("  variants: function, method\n", "  variants: function, method\n  tags: [core, pointwize]\n"),
        3,
        "native-unknown-tag",
    ),
    ("native-dispatch-key", _with("    CPU, CUDA: abs_out", "    CPU, CUDAA: abs_out"), 13, "native-dispatch-key"),
    (
        "native-dispatch-table",
        _with(
            "    CompositeExplicitAutograd: abs\n",
            "    CompositeExplicitAutograd: abs\n    CompositeImplicitAutograd: abs2\n",
        ),
        3,
        "native-dispatch-table",
    ),
    (
        "native-structured",
        _with("structured_delegate: sin.out", "structured_delegate: sin.outt"),
        21,
        "native-structured",
    ),
    (
        "native-variants",
        _with(
            "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n",
            "- func: abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  variants: method\n",
        ),
        12,
        "native-variants",
    ),
    (
        "native-duplicate",
        ABS
        + "\n- func: abs(Tensor self) -> Tensor\n  variants: function\n  dispatch:\n    CompositeExplicitAutograd: abs\n",
        23,
        "native-duplicate",
    ),
    ("native-python-keyword", ABS + "\n- func: f(Tensor self, int from) -> Tensor\n", 23, "native-python-keyword"),
    ("native-tag-rule", ABS + "\n- func: rand_thing(Tensor self) -> Tensor\n", 23, "native-tag-rule"),
    (
        "native-entry-rule",
        ABS + "\n- func: f(Tensor self, int a=1) -> Tensor\n  cpp_no_default_args: ['b']\n",
        24,
        "native-entry-rule",
    ),
    (
        "native-generated",
        ABS + "\n- func: lonely.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: lonely_out\n",
        23,
        "native-generated",
    ),
    (
        "native-view-group",
        ABS + "\n- func: v(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: v\n",
        23,
        "native-view-group",
    ),
    (
        "native-yaml",
        _with(
            "  variants: function, method\n",
            "  variants: function, method\n  variants: method\n",
        ),
        3,
        "native-yaml",
    ),
]


@pytest.mark.parametrize(("text", "line", "code"), [c[1:] for c in CASES], ids=[c[0] for c in CASES])
def test_each_mistake_is_its_code_on_its_line_and_nothing_else(text: str, line: int, code: str):
    assert _found(text) == [("native_functions.yaml", line, code)]


def test_the_correct_file_gets_nothing():
    assert _found(ABS) == []


def test_a_tags_yaml_mistake_is_on_its_tags_line():
    tags = TAGS.replace("- tag: view_copy\n  desc: view copy\n", "- tag: view_copy\n  desc: ''\n")
    assert _found(ABS, tags) == [("tags.yaml", 8, "native-tags-yaml")]


def test_an_empty_desc_key_is_accepted_as_torchgen_does():
    tags = TAGS.replace("- tag: view_copy\n  desc: view copy\n", "- tag: view_copy\n  desc:\n")
    assert _found(ABS, tags) == []


def test_every_bad_entry_is_reported_at_once_and_the_others_are_indexed():
    text = _with("abs(Tensor self)", "abs(Tensr self)").replace("    CPU, CUDA: abs_out", "    CPU, CUDAA: abs_out")
    text = text.replace("structured_delegate: sin.out", "structured_delegate: sin.outt")
    assert [(ln, code) for _, ln, code in _found(text)] == [
        (1, "native-unknown-type"),
        (13, "native-dispatch-key"),
        (21, "native-structured"),
    ]
    index = _index(text)
    assert {str(f.func.name) for f in index.functions if f.line} == {"abs_", "sin.out", "sin"}


def test_the_diagnostic_is_on_the_token_with_a_quick_fix_one_edit_away():
    (p,) = _index(_with("abs(Tensor self)", "abs(Tensr self)")).rejected
    d = problem_diagnostic(p, known=True)
    assert d.severity == Severity.ERROR and d.code == "native-unknown-type"
    assert (d.span.line, d.span.column, d.span.end_column) == (0, 12, 17)
    assert d.fixes and d.fixes[0].edits[0].new_text == "Tensor"
    for old, new, fixed in (
        ("variants: function, method\n", "variants: function, methd\n", "method"),
        ("    CPU, CUDA: abs_out", "    CPU, CUDAA: abs_out", "CUDA"),
    ):
        (p,) = _index(_with(old, new)).rejected
        assert problem_diagnostic(p, known=True).fixes[0].edits[0].new_text == fixed


def test_an_unknown_release_makes_what_the_rules_do_not_know_a_warning_on_its_line():
    text = _with("abs(Tensor self)", "abs(Tensr self)") + "\n- func: f(Tensor self, int from) -> Tensor\n"
    by_file = problems_by_file(_index(text).rejected, known=False)
    found = [(d.span.line, d.severity, d.code) for d in by_file["native_functions.yaml"]]
    # the type may be a newer release's: a warning; a Python keyword is refused by every release: an error
    assert found == [(0, Severity.WARNING, "native-left-out"), (22, Severity.ERROR, "native-python-keyword")]
    known = problems_by_file(_index(text).rejected, known=True)["native_functions.yaml"]
    assert [d.severity for d in known] == [Severity.ERROR, Severity.ERROR]


def _found_by(version: tuple[int, int], text: str) -> list[str]:
    from derivls.derivatives.releases import rules_for_version

    rules = rules_for_version(version)[0].native
    return [p.code for p in NativeIndex.from_text(text, TAGS, "native_functions.yaml", rules=rules).rejected]


def test_each_release_family_judges_with_its_own_torchgen_rules():
    keyword = ABS + "\n- func: f(Tensor self, int from) -> Tensor\n"
    assert _found_by((2, 5), keyword) == [] and _found_by((2, 6), keyword) == ["native-python-keyword"]
    xpu = ABS.replace("    CPU, CUDA: abs_out", "    CPU, CUDA, XPU: abs_out")
    assert _found_by((2, 4), xpu) == ["native-dispatch-key"] and _found_by((2, 5), xpu) == []
    # a structured delegate may keep an XPU kernel until 2.4 (STRUCTURED_DISPATCH_KEYS grew in 2.5)
    delegate_xpu = ABS.replace(
        "  structured_delegate: sin.out\n", "  structured_delegate: sin.out\n  dispatch:\n    XPU: sin_xpu\n"
    )
    assert _found_by((2, 5), delegate_xpu) == ["native-structured"]
    # the stateless _philox_ ops need no nondeterministic_seeded tag (2.15)
    assert _found_by((2, 13), ABS + "\n- func: _philox_randint(Tensor self) -> Tensor\n") == []


def test_an_entry_whose_function_torchgen_rejects_points_at_native_functions_yaml_not_at_a_release() -> None:
    """A typo no release accepts (an unknown variant) leaves abs out of the index: the derivatives.yaml entry
    says where to fix it, not 'pick another release'; what a newer release may know still says that."""
    from derivls.derivatives.loader import DocumentAnalyzer

    entry = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
    typo = _index(
        ABS.replace(
            "variants: function, method\n  dispatch:\n    CompositeExplicitAutograd: abs\n",
            "variants: function, methd\n  dispatch:\n    CompositeExplicitAutograd: abs\n",
            1,
        )
    )
    (left_out,) = [d for d in DocumentAnalyzer(typo).analyse(entry).diagnostics if d.code == "native-function-left-out"]
    assert "fix it on that line of native_functions.yaml" in left_out.message
    assert "--torch-version" not in left_out.message

    newer = _index(ABS.replace("abs(Tensor self) -> Tensor", "abs(Tensor self, NewType x) -> Tensor", 1))
    entry = "- name: abs(Tensor self, NewType x) -> Tensor\n  self: grad * self.sgn()\n"
    (left_out,) = [
        d for d in DocumentAnalyzer(newer).analyse(entry).diagnostics if d.code == "native-function-left-out"
    ]
    assert "--torch-version" in left_out.message
