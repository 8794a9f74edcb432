"""Saved-variable substitution: what a formula makes the node save, with torchgen's names and types."""

from __future__ import annotations

import pytest

from derivls.aten.cpp_types import BaseCType, NamedCType, OptionalCType, stringT, tensorT
from derivls.derivatives.saved import SavedVariableError, saved_variables

SELF = NamedCType("self", BaseCType(tensorT))
OTHER = NamedCType("other", BaseCType(tensorT))


def saved(formula, nctypes=(SELF, OTHER), var_names=("self",)):
    new, attrs = saved_variables(formula, list(nctypes), var_names)
    return new, [(a.nctype.name, a.nctype.cpp_type(), a.expr) for a in attrs]


def test_sym_sizes_is_saved_as_a_symint_array():
    assert saved("grad.expand_symint(self.sym_sizes())") == (
        "grad.expand_symint(self_sym_sizes)",
        [("self_sym_sizes", "c10::SymIntArrayRef", "self.sym_sizes()")],
    )


def test_sym_size_with_negative_dim():
    assert saved("grad.unsqueeze(self.sym_size(-1))")[1] == [
        ("self_sym_argsize_minus_1", "c10::SymInt", "self.sym_size(-1)")
    ]


def test_zeros_like_saves_type_and_size_and_rewrites_the_call():
    new, attrs = saved("zeros_like(other)", var_names=("other",))
    assert new == "other_info.zeros()"
    assert attrs == [("other_info", "torch::autograd::generated::TypeAndSize", "other")]


def test_a_name_still_used_is_saved_whole_after_its_properties():
    assert saved("grad * other.scalar_type() * other")[1] == [
        ("other_scalar_type", "at::ScalarType", "other.scalar_type()"),
        ("other", "at::Tensor", "other"),
    ]


def test_a_name_that_only_prefixes_another_is_not_saved():
    assert saved("grad * selfish")[1] == []


def test_optional_string_is_passed_as_string_view():
    mode = NamedCType("mode", OptionalCType(BaseCType(stringT)))
    new, attrs = saved("f(grad, mode)", [mode])
    assert new == "f(grad, mode.has_value() ? std::optional<std::string_view>(mode.value()) : std::nullopt)"
    assert attrs == [("mode", "::std::optional<c10::string_view>", "mode")]


def test_sym_strides_only_in_its_own_formula():
    assert saved("f(self.sym_strides())")[1] == [
        ("self_sym_strides", "c10::SymIntArrayRef", 'strides_or_error(self, "self")')
    ]
    with pytest.raises(SavedVariableError) as e:
        saved("f(self.sym_strides())", var_names=("other",))
    assert e.value.code == "strides-multi"


@pytest.mark.parametrize(
    ("formula", "code", "fix"),
    [
        ("grad.expand(self.sizes())", "sizes-not-supported", ".sym_sizes()"),
        ("grad.expand(self->sizes())", "sizes-not-supported", "->sym_sizes()"),
        ("grad.unsqueeze(self.size(-1))", "size-not-supported", ".sym_size(-1)"),
        ("f(self.strides())", "strides-not-supported", ".sym_strides()"),
    ],
)
def test_non_symint_accessors_are_refused_with_the_symint_form(formula, code, fix):
    with pytest.raises(SavedVariableError) as e:
        saved(formula)
    assert e.value.code == code
    assert e.value.fix == fix
    assert e.value.token in formula


@pytest.mark.parametrize(
    "formula",
    [
        "self",
        "grad*self",
        "self_t",
        "myself",
        "self.x",
        "(self)",
        "selfself self",
        "f(other_self)",
        "x.self_",
        "é self",
        "selfé",
    ],
)
def test_uses_ident_agrees_with_torchgens_regex(formula):
    import re

    from derivls.derivatives.saved import IDENT_REGEX, uses_ident

    assert uses_ident(formula, "self") == bool(re.search(IDENT_REGEX.format("self"), formula))


def test_rules_substitute_exactly_as_their_regex_would_for_any_name():
    import re

    from derivls.derivatives import saved as saved_module
    from derivls.derivatives.legacy_saved import LEGACY_REPLACEMENTS

    def show(m) -> str:
        groups = m.groups()
        return f"<{m.group(0)}|{groups}|{m.group(1) if groups else ''}>"

    formulas = [
        "grad * self.sym_sizes()[0] + myself.sym_sizes() + self->sym_sizes() + selfsym_sizes()",
        "self.sym_size(-1) * self.sym_size(dim) + self.sym_size(\n0) + self\n.sym_size(1)",
        "zeros_like(self) + zeros_like(self_) + zeros_like( self) + zeros_like(self)",
        "to_args_sizes(tensors) + to_args_sizes_symint(tensors) + TensorGeometry(self)",
        "self.size(0) + self.sizes() + self.strides() + self.options().dtype() + self.numel()",
        "",
        "self",
        "self.self.sym_sizes()",
    ]
    templates = {r.pattern for r in (*saved_module.TORCHGEN_REPLACEMENTS, *LEGACY_REPLACEMENTS)}
    for template in templates:
        for name in ("self", "tensors", "s", "elf", "a.b", "x+"):  # the last two: not plain names
            for formula in formulas:
                expected = re.compile(template.format(name)).sub(show, formula)
                assert saved_module._substitute(template, name, show, formula) == expected, (template, name, formula)
