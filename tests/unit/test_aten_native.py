"""derivls.aten.native: the function list, view groups and lookups torchgen's loader builds."""

from __future__ import annotations

from collections import defaultdict

import pytest
import yaml

from derivls.aten import native
from derivls.aten.native import (
    NativeFunction,
    NativeFunctionsViewGroup,
    NativeIndex,
    NativeIndexError,
    Variant,
)
from derivls.aten.schema import SchemaKind
from derivls.yamlsubset import Unsupported, scan_native_entries

TAGS = """\
- tag: core
  desc: core
- tag: pt2_compliant_tag
  desc: pt2
- tag: inplace_view
  desc: inplace view
- tag: view_copy
  desc: view copy
- tag: out
  desc: out
- tag: inplace
  desc: inplace
- tag: pointwise
  desc: pointwise
- tag: nondeterministic_seeded
  desc: random
"""


@pytest.fixture(scope="module")
def index(real_files) -> NativeIndex:
    return NativeIndex.load(real_files.native, real_files.tags)


@pytest.fixture(scope="module")
def torchgen_functions(real_files):
    from torchgen.gen import parse_native_yaml

    return parse_native_yaml(str(real_files.native), str(real_files.tags)).native_functions


@pytest.fixture(scope="module")
def torchgen_grouped(torchgen_functions):
    from torchgen.gen import get_grouped_by_view_native_functions

    return get_grouped_by_view_native_functions(torchgen_functions)


# --------------------------------------------------------------------------------------
# parity with torchgen on the real file
# --------------------------------------------------------------------------------------


def test_function_list_matches_torchgen(index, torchgen_functions):
    assert len(torchgen_functions) == len(index.functions) == 3101
    assert sum(1 for f in index.functions if f.line is not None) == 2584
    for t, d in zip(torchgen_functions, index.functions):
        assert str(t.func) == str(d.func)
        assert {v.name for v in t.variants} == {v.name for v in d.variants}, str(d.func)
        assert set(t.tags) == set(d.tags), str(d.func)
        assert t.namespace == d.namespace
        assert t.loc.line == d.loc.line and t.loc.line == d.source_line
        assert ("generated" in t.tags) == (d.line is None) == (d.generated_from is not None)
        assert str(t.func.signature()) == str(d.func.signature())
        assert str(t.func.view_signature()) == str(d.func.view_signature())
        assert t.func.kind().name == d.func.kind().name
        assert t.func.is_functional_fn() == d.func.is_functional_fn()
        assert t.func.is_out_fn() == d.func.is_out_fn()
        assert t.func.has_symint() == d.func.has_symint()
        assert t.is_view_op == d.is_view_op
        assert t.view_schema_kind.name == d.view_schema_kind.name
        assert t.manual_cpp_binding == d.manual_cpp_binding
        assert [str(x) for x in t.autogen] == [str(x) for x in d.autogen]
        assert t.cpp_no_default_args == set(d.cpp_no_default_args)
        assert str(t.structured_delegate) == str(d.structured_delegate)
        for attr in (
            "structured",
            "use_const_ref_for_mutable_tensors",
            "device_guard",
            "python_module",
            "category_override",
            "manual_kernel_registration",
            "is_abstract",
            "has_composite_implicit_autograd_kernel",
            "has_composite_implicit_autograd_nested_tensor_kernel",
            "has_composite_explicit_autograd_kernel",
            "has_composite_explicit_autograd_non_functional_kernel",
            "has_composite_kernel",
            "part_of_structured_group",
            "root_name",
        ):
            assert getattr(t, attr) == getattr(d, attr), (attr, str(d.func))
        assert t.device_check.name == d.device_check


def test_view_groups_and_loader_order_match_torchgen(index, torchgen_grouped):
    from torchgen.model import NativeFunction as TNativeFunction
    from torchgen.model import NativeFunctionsViewGroup as TViewGroup

    def s(f):
        return None if f is None else str(f.func)

    def shape(gs, nf, vg):
        return [
            ("f", s(g)) if isinstance(g, nf) else ("g", s(g.view), s(g.view_copy), s(g.view_inplace))
            for g in gs
            if isinstance(g, (nf, vg))
        ]

    assert shape(index.grouped, NativeFunction, NativeFunctionsViewGroup) == shape(
        torchgen_grouped, TNativeFunction, TViewGroup
    )
    theirs = [
        str(f.func)
        for g in torchgen_grouped
        for f in ([g] if isinstance(g, TNativeFunction) else g.functions(include_copy=True))
    ]
    assert [str(f.func) for f in index.loader_functions] == theirs
    assert len(index.view_groups) == sum(isinstance(g, TViewGroup) for g in torchgen_grouped)
    vg = index.view_groups[0]
    assert list(vg.functions(include_copy=False)) == [f for f in vg.functions() if f is not vg.view_copy]


def test_lookups_match_load_derivatives(index, torchgen_grouped):
    from torchgen.model import NativeFunction as TNativeFunction

    by_sig: dict[str, list[str]] = defaultdict(list)
    for g in torchgen_grouped:
        for f in [g] if isinstance(g, TNativeFunction) else g.functions(include_copy=True):
            by_sig[str(f.func.signature())].append(str(f.func))
    assert {str(k): [str(f.func) for f in v] for k, v in index.by_signature.items()} == dict(by_sig)
    assert set(index.by_schema) == {s for v in by_sig.values() for s in v}
    for schema, f in index.by_schema.items():
        assert str(f.func) == schema
        assert f in index.by_signature[f.func.signature()]


def test_lines_and_columns(index, real_files):
    lines = real_files.native.read_text().splitlines()
    for f in index.functions:
        if f.line is None:
            assert index.line_of(str(f.func)) is None
            continue
        text = lines[f.line - 1]
        assert text[f.column : f.column + 5] == "func:"
        assert text[f.func_column :].startswith(str(f.func))
        assert index.line_of(str(f.func)) == f.line
    assert index.line_of("no_such_op(Tensor self) -> Tensor") is None


def test_generated_functions(index):
    f = index.by_schema[
        "_fused_moving_avg_obs_fq_helper.out(Tensor self, Tensor observer_on, Tensor fake_quant_on, Tensor(a!) running_min, Tensor(b!) running_max, Tensor(c!) scale, Tensor(d!) zero_point, float averaging_const, int quant_min, int quant_max, int ch_axis, bool per_row_fake_quant=False, bool symmetric_quant=False, *, Tensor(e!) out0, Tensor(f!) out1) -> (Tensor(e!), Tensor(f!))"
    ]  # noqa: E501
    assert f.line is None and f.is_generated and "out" in f.tags
    assert f.generated_from is not None and f.generated_from.line is not None
    assert f.loc.line == f.generated_from.line
    assert f.variants == frozenset({Variant.function})
    functional = [
        g
        for g in index.functions
        if g.func.name.name.functional_overload and g.func.name.name.base == "_fused_moving_avg_obs_fq_helper"
    ]
    assert len(functional) == 1 and functional[0].func.kind() == SchemaKind.functional


def test_scanner_agrees_with_pyyaml(real_files, legacy_dir):
    for p in (real_files.native, legacy_dir / "native_functions.yaml"):
        text = p.read_text()
        fast = scan_native_entries(text)
        slow = native._yaml_entries(text, str(p))
        assert len(fast) == len(slow)
        for a, b in zip(fast, slow):
            assert (a.data, a.line, a.key_lines, a.func_key_col, a.func_col) == (
                b.data,
                b.line,
                b.key_lines,
                b.func_key_col,
                b.func_col,
            )


@pytest.mark.parametrize(
    "text",
    [
        "- func: a(Tensor self) -> Tensor\n  variants: 'function, method'\n",
        '- func: a(Tensor self) -> Tensor\n  python_module: "nn"\n',
        "- func: a(Tensor self) -> Tensor\n  structured: yes\n",
        "- func: a(Tensor self) -> Tensor\n  dispatch: {CPU: a_cpu}\n",
        "- func: a(Tensor self)\n    -> Tensor\n",  # multi-line plain scalar
        "- func: a(Tensor self) -> Tensor\n  tags: [core, 'pointwise']\n",
        "- func: a(Tensor self) -> Tensor\n  autogen: a.out # comment\n  precomputed:\n  - x -> int y\n",
        "- func: a(Tensor self) -> Tensor  # trailing comment\n  dispatch:\n    CPU, CUDA: k\n\n    Meta: m\n",
        "-   func: a(Tensor self) -> Tensor\n    variants: method\n",
        "- func: &x a(Tensor self) -> Tensor\n",
        "- func: a(Tensor self) -> Tensor\n  device_check: NoCheck\n  cpp_no_default_args: ['dim']\n",
    ],
)
def test_scanner_falls_back_or_agrees(text):
    try:
        fast = scan_native_entries(text)
    except Unsupported:
        return  # PyYAML reads it
    slow = native._yaml_entries(text, "t.yaml")
    assert [(e.data, e.line, e.key_lines, e.func_col) for e in fast] == [
        (e.data, e.line, e.key_lines, e.func_col) for e in slow
    ]


# --------------------------------------------------------------------------------------
# hand-written files
# --------------------------------------------------------------------------------------

SMALL = """\
# a comment
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

- func: _foo_(Tensor(a!) self) -> Tensor(a!)
  autogen: _foo.out
  dispatch:
    CPU: foo_

- func: view(Tensor(a) self, SymInt[] size) -> Tensor(a)
  variants: method
  dispatch:
    CPU: view

- func: view_copy(Tensor self, SymInt[] size) -> Tensor
  tags: view_copy
  dispatch:
    CompositeExplicitAutograd: view_copy

- func: implicit(Tensor self) -> Tensor
"""


def test_small_file_generation_and_groups():
    idx = NativeIndex.from_text(SMALL, TAGS, path="mem.yaml")
    assert [str(f.func) for f in idx.functions] == [
        "abs(Tensor self) -> Tensor",
        "abs_(Tensor(a!) self) -> Tensor(a!)",
        "abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        "_foo_(Tensor(a!) self) -> Tensor(a!)",
        "view(Tensor(a) self, SymInt[] size) -> Tensor(a)",
        "view_copy(Tensor self, SymInt[] size) -> Tensor",
        "implicit(Tensor self) -> Tensor",
        # generated: the out= variant autogen asks for, then the functional one
        "_foo.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",
        "_foo(Tensor self) -> Tensor",
    ]
    abs_f, abs_i, abs_o = idx.functions[:3]
    assert abs_f.variants == frozenset({Variant.function, Variant.method})
    assert "inplace" in abs_i.tags and "out" in abs_o.tags and "pt2_compliant_tag" in abs_f.tags
    assert idx.functions[6].has_composite_implicit_autograd_kernel  # no dispatch: implicit
    assert idx.functions[6].dispatch == {"CompositeImplicitAutograd": "implicit"}
    assert abs_o.dispatch == {"CPU": "abs_out", "CUDA": "abs_out"}
    assert [f.line for f in idx.functions] == [2, 7, 12, 16, 21, 26, 31, None, None]
    assert idx.functions[7].generated_from is idx.functions[3]
    assert idx.functions[7].dispatch == {"CompositeExplicitAutograd": "_foo_out"}
    (g,) = idx.view_groups
    assert str(g.view.func.name) == "view" and str(g.view_copy.func.name) == "view_copy"
    assert g.view_inplace is None
    assert len(idx.by_signature[abs_f.func.signature()]) == 3
    assert idx.by_name["abs.out"] is abs_o


def test_legacy_mode_generates_nothing(legacy_dir):
    idx = NativeIndex.load(legacy_dir / "native_functions.yaml")
    assert idx.legacy and idx.tags is None
    assert len(idx.functions) == 1830 and idx.loader_functions == idx.functions
    assert idx.view_groups == []
    assert any("Dimname" in str(f.func) for f in idx.functions)
    # read as a 2.x file, the 2021 entries with `use_c10_dispatcher:` are left out, one by one
    strict = NativeIndex.load(legacy_dir / "native_functions.yaml", legacy=False)
    assert {p.message.split(" (")[0] for p in strict.problems} == {
        "unknown key 'use_c10_dispatcher' in native function entry",
        "type 'Dimname' is no longer supported",
    }
    assert len(strict.functions) + len(strict.problems) == 1830


def test_2021_functions_match_their_schemas(legacy_dir):
    text = (legacy_dir / "native_functions.yaml").read_text()
    raw = yaml.safe_load(text)
    idx = NativeIndex.from_text(text, None, path="legacy.yaml")
    assert [str(f.func) for f in idx.functions] == [e["func"] for e in raw]
    assert [sorted(v.name for v in f.variants) for f in idx.functions] == [
        sorted(e.get("variants", "function").split(", ")) for e in raw
    ]


# --------------------------------------------------------------------------------------
# errors
# --------------------------------------------------------------------------------------


def _error(text: str, tags: str | None = TAGS) -> NativeIndexError:
    """The first error torchgen would raise: the file's (raised) or, since one bad entry costs only itself,
    the first entry's the index rejects."""
    try:
        idx = NativeIndex.from_text(text, tags, path="mem.yaml")
    except NativeIndexError as e:
        return e
    assert idx.rejected, "nothing rejected"
    p = idx.rejected[0]
    return NativeIndexError(p.message, path=p.path, line=p.line)


def test_missing_file(tmp_path):
    with pytest.raises(NativeIndexError, match="cannot read"):
        NativeIndex.load(tmp_path / "nope.yaml")


def test_yaml_error_has_line():
    e = _error("- func: a(Tensor self) -> Tensor\n  variants: [function\n")
    assert e.line is not None and "YAML" in e.message


def test_a_schema_with_an_unknown_type_costs_only_its_function():
    idx = NativeIndex.from_text(SMALL + "\n- func: bad(Tensor self) -> Tensr\n", TAGS, path="mem.yaml")
    (problem,) = idx.problems
    assert problem.line == 33 and "Tensr" in problem.message and str(problem).startswith("mem.yaml:33:")
    assert problem.name == "bad" and idx.unknown_by_name["bad"] is problem
    assert len(idx.functions) == len(NativeIndex.from_text(SMALL, TAGS).functions)


def test_unknown_tag_and_key_cost_their_function_with_a_line_and_a_bad_variant_is_an_error():
    idx = NativeIndex.from_text("- func: a(Tensor self) -> Tensor\n  tags: nope\n", TAGS, path="mem.yaml")
    assert not idx.functions and idx.problems[0].line == 2 and "illegal tag 'nope'" in idx.problems[0].message
    e = _error("- func: a(Tensor self) -> Tensor\n  variants: methd\n")
    assert e.line == 2 and "methd" in e.message
    idx = NativeIndex.from_text("- func: a(Tensor self) -> Tensor\n  dispach:\n    CPU: a\n", TAGS, path="mem.yaml")
    assert not idx.functions and idx.problems[0].line == 2 and "dispach" in idx.problems[0].message
    e = _error("- variants: method\n")
    assert "func" in e.message


def test_duplicates_and_ungroupable_out():
    e = _error("- func: a(Tensor self) -> Tensor\n- func: a(Tensor self) -> Tensor\n")
    assert "duplicate" in e.message.lower()
    e = _error("- func: lonely.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)\n  dispatch:\n    CPU: x\n")
    assert "could not find any other variants" in e.message and e.line == 1


def test_inplace_view_needs_tag():
    text = (
        "- func: t_(Tensor(a!) self) -> Tensor(a!)\n"
        "  variants: method\n"
        "- func: t(Tensor(a) self) -> Tensor(a)\n"
        "- func: bad_(Tensor(a!) self, Tensor(b -> *) x) -> Tensor(a!)\n"
    )
    e = _error(text)
    assert "inplace_view tag missing for bad_" in e.message and e.line == 4


def test_view_without_copy_is_reported():
    e = _error("- func: v(Tensor(a) self) -> Tensor(a)\n  dispatch:\n    CPU: v\n")
    assert "v_copy" in e.message and e.line == 1


def test_garbage_never_crashes():
    for text in ["", "[]", "- 1\n", "a: b\n", "- func: [1]\n", "- func:\n", "\t- func: x\n", "- {}\n", "- func: a(\n"]:
        try:
            NativeIndex.from_text(text, TAGS)
        except NativeIndexError:
            pass
