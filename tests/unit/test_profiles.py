"""Profiles own what differs between loader generations; results carry the one they were computed with."""

from __future__ import annotations

import pytest

from derivls.aten.native import NativeIndex
from derivls.derivatives.dump import dump
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.derivatives.profiles import LEGACY, TORCHGEN, TorchgenProfile, named

NATIVE = """
- func: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  variants: function, method

- func: add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)
  variants: method

- func: add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)
"""

ENTRY = """\
- name: add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor
  self: grad
  other: maybe_multiply(grad, alpha)
"""


@pytest.fixture(scope="module", params=[TORCHGEN, LEGACY], ids=lambda p: p.name)
def profile(request):
    return request.param


@pytest.fixture(scope="module")
def index(profile) -> NativeIndex:
    return NativeIndex.from_text(NATIVE, None, "native_functions.yaml", legacy=profile.native_2021_grammar)


def test_results_carry_their_profile(profile, index) -> None:
    analysis = DocumentAnalyzer(index, None, profile).analyse(ENTRY)
    assert analysis.profile is profile
    assert all(entry.profile is profile for entry in analysis.entries)


def test_each_generation_has_its_own_cpp_view(index, profile) -> None:
    f = index.by_name["add.Tensor"]
    expected = {
        "torchgen": ["const at::Tensor &", "const at::Tensor &", "const at::Scalar &"],
        "legacy": ["const Tensor &", "const Tensor &", "Scalar"],
    }[profile.name]
    assert [b.type for b in profile.bindings(f)] == expected
    assert "add" in profile.cpp_signature(f)


def test_canonical_function_and_overload_group(index, profile) -> None:
    inplace = index.by_name["add_.Tensor"]
    group = profile.overload_group(index, inplace)
    assert {str(g.func.name) for g in group} == {"add.Tensor", "add_.Tensor", "add.out"}
    assert str(profile.canonical_function(index, inplace, "add").func.name) == "add.Tensor"


def test_dump_has_the_shape_of_its_loader(index, profile) -> None:
    shape = dump(DocumentAnalyzer(index, None, profile).analyse(ENTRY))
    assert ("used_dispatch_keys" in shape) == (profile.name == "torchgen")  # the 2021 loader had none
    assert len(shape["infos"]) == 1


def test_what_completion_may_offer() -> None:
    assert TORCHGEN.forward_formulas and TORCHGEN.dispatch_sections and TORCHGEN.named_grads
    assert not (LEGACY.forward_formulas or LEGACY.dispatch_sections or LEGACY.named_grads)


def test_a_variant_is_a_parameter_and_says_which_rules() -> None:
    variant = TorchgenProfile("2.12", "version.txt says 2.12")
    assert variant.describe() == "torchgen 2.12 rules (version.txt says 2.12)"
    assert variant != TORCHGEN and variant == TorchgenProfile("2.12")
    assert named("legacy") is LEGACY
    with pytest.raises(ValueError, match="unknown profile"):
        named("2019")
