"""The rule in derivls/derivatives/formulas/rules/qualified.py, on the scope of real entries."""

from __future__ import annotations

from tests.formulas.rules.common import ABS, codes


def test_qualified_names_are_checked_in_at_std_and_c10(scope_of, headers):
    scope = scope_of(ABS, "self")
    assert codes("at::zeroz_like(grad)", scope, headers) == [
        ("formula-unknown-qualified", "zeroz_like", ("zeros_like",))
    ]
    assert codes("std::tupel<Tensor>()", scope, headers)[0][:2] == ("formula-unknown-qualified", "tupel")
    assert codes("at::native::anything(grad) + at::_ops::x::call(grad)", scope, headers) == []
