"""A synthetic "next release": what derivls's rules don't know costs only the functions that use it.

The installed release's packaged files, with three functions changed as a future native_functions.yaml
might: `sin` takes an argument of a type nobody knows yet, `abs` gains a kernel for an unknown
dispatch key, and `cos` carries a tag tags.yaml does not define. Only those three are left out (each
with a located problem), their derivatives.yaml entries get a warning on `name:` saying why, and
everything else — every other info of the dump, field by field — is exactly as before.
"""

from __future__ import annotations

import shutil

import pytest

from derivls.derivatives.dump import dump
from derivls.project.analyse import analyse_path_with_rules

pytestmark = pytest.mark.releases

CHANGES = {
    "sin": ("- func: sin(Tensor self) -> Tensor\n", "- func: sin(Tensor self, NewType? hint=None) -> Tensor\n"),
    "abs": (
        "    CompositeExplicitAutograd: abs\n",
        "    CompositeExplicitAutograd: abs\n    NewBackend: abs_new_backend\n",
    ),
    "cos": (
        "  structured_delegate: cos.out\n  dispatch:\n    NestedTensorCPU, NestedTensorHPU, NestedTensorCUDA: "
        "NestedTensor_cos\n  tags: [core, pointwise]\n",
        "  structured_delegate: cos.out\n  dispatch:\n    NestedTensorCPU, NestedTensorHPU, NestedTensorCUDA: "
        "NestedTensor_cos\n  tags: [core, pointwise, brand_new_tag]\n",
    ),
}
AFFECTED = {"sin(Tensor self) -> Tensor", "abs(Tensor self) -> Tensor", "cos(Tensor self) -> Tensor"}


def _layout(root, real_files, native_text):
    autograd = root / "torchgen" / "packaged" / "autograd"
    native = root / "torchgen" / "packaged" / "ATen" / "native"
    autograd.mkdir(parents=True)
    native.mkdir(parents=True)
    shutil.copy(real_files.derivatives, autograd / "derivatives.yaml")
    shutil.copy(real_files.tags, native / "tags.yaml")
    (native / "native_functions.yaml").write_text(native_text, encoding="utf-8")
    return autograd / "derivatives.yaml"


@pytest.fixture(scope="module")
def both(real_files, tmp_path_factory):
    text = real_files.native.read_text(encoding="utf-8")
    before = _layout(tmp_path_factory.mktemp("current"), real_files, text)
    for old, new in CHANGES.values():
        assert text.count(old) == 1, old
        text = text.replace(old, new)
    after = _layout(tmp_path_factory.mktemp("next"), real_files, text)
    return analyse_path_with_rules(before, None, None), analyse_path_with_rules(after, None, None)


def test_only_the_three_changed_functions_are_left_out_each_with_its_line(both):
    (current, _, _), (nxt, _, detected) = both
    assert "newest" in detected.reason
    assert current.index.problems == ()
    problems = {p.name: p for p in nxt.index.problems}
    assert set(problems) == {"sin", "abs", "cos"}
    assert "NewType" in problems["sin"].message
    assert "dispatch key 'NewBackend'" in problems["abs"].message
    assert "brand_new_tag" in problems["cos"].message
    with open(nxt.index.path, encoding="utf-8") as f:
        lines = f.read().splitlines()
    assert lines[problems["sin"].line - 1].startswith("- func: sin(")
    assert lines[problems["abs"].line - 1] == "    NewBackend: abs_new_backend"  # the key's own line
    assert lines[problems["cos"].line - 1].startswith("  tags: [core, pointwise, brand_new_tag]")
    assert len(nxt.index.functions) == len(current.index.functions) - 3


def test_their_entries_get_a_warning_on_the_name_and_nothing_is_an_error(both):
    (current, _, _), (nxt, extra, _) = both
    assert not [d for d in nxt.diagnostics if d.severity == 1]
    warned = [d for d in nxt.diagnostics if d.code == "native-function-left-out"]
    assert len(warned) == 3
    for d in warned:
        entry = next(e for e in nxt.entries if e.line == d.span.line)
        assert entry.result.schema_string in AFFECTED
        assert "was left out of the index" in d.message
    # the layout copies no C++ headers: the formula pass says so once, after the index's own warning
    assert [d.code for d in extra] == ["native-functions-left-out", "formula-sources-missing"]
    assert len(current.diagnostics) == 0


def test_every_other_info_is_unchanged_field_by_field(both):
    (current, _, _), (nxt, _, _) = both
    want = [i for i in dump(current)["infos"] if i["schema"] not in AFFECTED]
    got = dump(nxt)["infos"]
    assert len(got) == len(want) and len(want) > 700
    assert got == want
