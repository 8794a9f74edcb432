"""The fixture of the rule tests: the scope of a real entry's formula."""

from __future__ import annotations

import pytest

from derivls.derivatives.formulas.scope import build_scope


@pytest.fixture
def scope_of(key_of):
    def make(schema: str, names: str):
        result, section, key = key_of(schema, names)
        return build_scope(result.canonical, section.info, key.kind == "backward", key.var_names)

    return make
