"""derivls.aten.schema: parsing, printing and the torchgen.model semantics the loader relies on."""

from __future__ import annotations

import random

import pytest
import yaml

from derivls.aten.schema import (
    Annotation,
    Argument,
    Arguments,
    BaseOperatorName,
    BaseTy,
    BaseType,
    CustomClassType,
    FunctionSchema,
    ListType,
    OperatorName,
    OptionalType,
    Return,
    SchemaKind,
    Type,
)

_Loader = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _funcs(path) -> list[str]:
    return [e["func"] for e in yaml.load(path.read_text(), Loader=_Loader)]


@pytest.fixture(scope="module")
def funcs_213(real_files) -> list[str]:
    return _funcs(real_files.native)


@pytest.fixture(scope="module")
def funcs_2021(legacy_dir) -> list[str]:
    return _funcs(legacy_dir / "native_functions.yaml")


# --------------------------------------------------------------------------------------
# round trips over the real files
# --------------------------------------------------------------------------------------


def test_roundtrip_every_213_schema(funcs_213):
    assert len(funcs_213) > 2500
    for s in funcs_213:
        assert str(FunctionSchema.parse(s)) == s


def test_roundtrip_every_2021_schema_in_legacy_mode(funcs_2021):
    assert len(funcs_2021) == 1830
    for s in funcs_2021:
        assert str(FunctionSchema.parse(s, legacy=True)) == s


def test_2021_differences_are_only_dimname(funcs_2021):
    # The 2.13 grammar rejects exactly the Dimname schemas (type dropped from torchgen).
    rejected = []
    for s in funcs_2021:
        try:
            FunctionSchema.parse(s)
        except ValueError as e:
            rejected.append((s, str(e)))
    assert rejected
    assert all("Dimname" in s and "Dimname" in msg for s, msg in rejected)


def test_parse_agrees_with_torchgen_on_every_213_schema(funcs_213):
    from torchgen.model import FunctionSchema as TFunctionSchema

    for s in funcs_213:
        ours, theirs = FunctionSchema.parse(s), TFunctionSchema.parse(s)
        assert str(ours.signature()) == str(theirs.signature()), s
        assert str(ours.signature(strip_default=True)) == str(theirs.signature(strip_default=True)), s
        assert str(ours.signature(keep_return_names=True)) == str(theirs.signature(keep_return_names=True)), s
        assert str(ours.view_signature()) == str(theirs.view_signature()), s
        assert ours.kind().name == theirs.kind().name, s
        assert ours.is_out_fn() == theirs.is_out_fn()
        assert ours.is_functional_fn() == theirs.is_functional_fn()
        assert ours.has_symint() == theirs.has_symint()
        assert bool(ours.is_mutable) == theirs.is_mutable
        assert bool(ours.modifies_arguments) == theirs.modifies_arguments
        assert ours.returns_are_aliased() == theirs.returns_are_aliased()
        assert ours.arguments.mutable_arg_names() == theirs.arguments.mutable_arg_names()
        assert ours.arguments.has_tensor_arg() == theirs.arguments.has_tensor_arg()
        assert ours.arguments.has_generator_arg() == theirs.arguments.has_generator_arg()
        assert [a.name for a in ours.schema_order_arguments()] == [a.name for a in theirs.schema_order_arguments()]
        assert ours.name.unambiguous_name() == theirs.name.unambiguous_name()
        assert str(ours.name.remove_inplace()) == str(theirs.name.remove_inplace())
        a, b = ours.arguments, theirs.arguments
        for part in (
            "pre_self_positional",
            "post_self_positional",
            "pre_tensor_options_kwarg_only",
            "post_tensor_options_kwarg_only",
            "out",
        ):
            assert [str(x) for x in getattr(a, part)] == [str(x) for x in getattr(b, part)], (s, part)
        assert (a.self_arg is None) == (b.self_arg is None)
        assert (a.tensor_options is None) == (b.tensor_options is None)
        for r1, r2 in zip(ours.returns, theirs.returns):
            assert (r1.name, str(r1.type), str(r1.annotation)) == (r2.name, str(r2.type), str(r2.annotation))


# --------------------------------------------------------------------------------------
# hand-written cases
# --------------------------------------------------------------------------------------


def test_optional_and_list_types():
    assert Type.parse("int[]?") == OptionalType(ListType(BaseType(BaseTy.int), None))
    assert Type.parse("Tensor?[]") == ListType(OptionalType(BaseType(BaseTy.Tensor)), None)
    t = Type.parse("SymInt[]?")
    assert t.is_symint_like() and t.is_nullable() and t.is_list_like() == ListType(BaseType(BaseTy.SymInt), None)
    assert Type.parse("Tensor?[]").is_nullable()  # as torchgen: a list is nullable if its elements are
    assert Type.parse("Tensor[]").is_tensor_like()
    assert not Type.parse("Scalar").is_tensor_like()
    assert Type.parse("__torch__.torch.classes.quantized.Conv2dPackedParamsBase") == CustomClassType(
        "quantized.Conv2dPackedParamsBase"
    )


def test_sized_lists():
    t = Type.parse("int[2]")
    assert t == ListType(BaseType(BaseTy.int), 2)
    assert str(t) == "int[2]"
    assert str(Type.parse("bool[3]")) == "bool[3]"
    a = Argument.parse("SymInt[2] stride=1")
    assert a.default == "1" and a.type == ListType(BaseType(BaseTy.SymInt), 2)
    # int[0] prints as int[] (size 0 is falsy), so it cannot round-trip: rejected
    with pytest.raises(ValueError):
        Type.parse("int[0]")


def test_annotated_tensor_list_and_optional():
    a = Argument.parse("Tensor(a!)[] self")
    assert a.type == ListType(BaseType(BaseTy.Tensor), None)
    assert a.annotation == Annotation(alias_set=("a",), is_write=True, alias_set_after=())
    assert a.is_write and str(a) == "Tensor(a!)[] self"
    b = Argument.parse("Tensor(b!)? out")
    assert b.type == OptionalType(BaseType(BaseTy.Tensor)) and b.is_write
    c = Argument.parse("Tensor(a -> *) self")
    assert c.annotation.alias_set_after == ("*",) and not c.is_write
    with pytest.raises(ValueError, match="non-Tensor|alias analysis"):
        Argument.parse("Tensor(a)[]? x")
    with pytest.raises(ValueError):
        Argument.parse("int(a) x")


def test_annotation_forms():
    assert str(Annotation.parse("a|b")) == "a|b"
    assert Annotation.parse("a! -> b").alias_set_after == ("b",)
    with pytest.raises(ValueError):
        Annotation.parse("a|b!")  # alias set larger than 1 is not mutable
    with pytest.raises(ValueError):
        Annotation.parse("A")


def test_kwarg_only_and_out_split():
    args = Arguments.parse("Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out")
    assert [a.name for a in args.post_self_positional] == ["other"]
    assert args.self_arg is not None and args.self_arg.argument.name == "self"
    assert [a.name for a in args.pre_tensor_options_kwarg_only] == ["alpha"]
    assert [a.name for a in args.out] == ["out"]
    assert [a.name for a in args.flat_kwarg_only] == ["alpha"]  # out is separate
    assert [a.name for a in args.flat_all] == ["self", "other", "alpha", "out"]
    assert args.mutable_arg_names() == ["out"]
    # a mutable *positional* argument stays positional (a "mutable" schema, not out=)
    m = Arguments.parse("Tensor self, Tensor(a!) running_mean")
    assert not m.out and [a.name for a in m.post_self_positional_mutable] == ["running_mean"]
    with pytest.raises(ValueError, match="cannot follow mutable out"):
        Arguments.parse("Tensor self, *, Tensor(a!) out, int x")
    with pytest.raises(ValueError, match="only occur once"):
        Arguments.parse("Tensor self, *, int x, *, int y")


def test_pre_self_positional():
    args = Arguments.parse("Tensor condition, Tensor self, Tensor other")
    assert [a.name for a in args.pre_self_positional] == ["condition"]
    assert [x.name if isinstance(x, Argument) else "SELF" for x in args.positional] == [
        "condition",
        "SELF",
        "other",
    ]
    no_self = Arguments.parse("Tensor input, int dim")
    assert no_self.self_arg is None and len(no_self.post_self_positional) == 2


def test_tensor_options_grouping():
    s = (
        "empty.memory_format(SymInt[] size, *, ScalarType? dtype=None, Layout? layout=None, "
        "Device? device=None, bool? pin_memory=None, MemoryFormat? memory_format=None) -> Tensor"
    )
    f = FunctionSchema.parse(s)
    to = f.arguments.tensor_options
    assert to is not None
    assert [a.name for a in to.all()] == ["dtype", "layout", "device", "pin_memory"]
    assert [a.name for a in f.arguments.post_tensor_options_kwarg_only] == ["memory_format"]
    assert len(f.arguments.kwarg_only) == 2  # TensorOptionsArguments + memory_format
    # the signature drops TensorOptions; what followed joins what preceded
    sig = f.signature()
    assert sig.arguments.tensor_options is None
    assert str(sig) == "empty(SymInt[] size, *, MemoryFormat? memory_format=None) -> Tensor"
    # wrong order / name / type: not grouped
    g = Arguments.parse("*, Layout? layout=None, ScalarType? dtype=None, Device? device=None, bool? pin_memory=None")
    assert g.tensor_options is None
    h = Arguments.parse("*, ScalarType dtype, Layout layout, Device device, bool pin_memory")
    assert h.tensor_options is not None  # non-optional spellings group too


def test_defaults_are_kept_verbatim():
    f = FunctionSchema.parse(
        "f(Tensor self, int[2] stride=[1,1], str mode='reflect', float eps=1e-05, "
        "ScalarType? dtype=None, int reduction=Mean) -> Tensor"
    )
    assert [a.default for a in f.arguments.flat_all] == [None, "[1,1]", "'reflect'", "1e-05", "None", "Mean"]
    assert f.signature(strip_default=True).arguments.flat_all[1].default is None


def test_operator_names():
    n = OperatorName.parse("add_.Tensor")
    assert n.name.inplace and n.name.base == "add" and n.overload_name == "Tensor"
    assert n.unambiguous_name() == "add__Tensor"
    assert str(n.remove_inplace()) == "add.Tensor"
    d = BaseOperatorName.parse("__iand__")
    assert d.dunder_method and d.inplace and d.base == "and" and str(d) == "__iand__"
    assert not BaseOperatorName.parse("__and__").inplace
    fo = BaseOperatorName.parse("_fused_moving_avg_obs_fq_helper_functional")
    assert fo.functional_overload and fo.base == "_fused_moving_avg_obs_fq_helper"
    with pytest.raises(ValueError, match="_out suffix"):
        BaseOperatorName.parse("foo_out")
    with pytest.raises(ValueError):
        BaseOperatorName.parse("")


def test_kinds():
    k = lambda s: FunctionSchema.parse(s).kind()  # noqa: E731
    assert k("abs(Tensor self) -> Tensor") == SchemaKind.functional
    assert k("abs_(Tensor(a!) self) -> Tensor(a!)") == SchemaKind.inplace
    assert k("abs.out(Tensor self, *, Tensor(a!) out) -> Tensor(a!)") == SchemaKind.out
    assert k("bn(Tensor self, Tensor(a!) running_mean) -> Tensor") == SchemaKind.mutable
    assert k("f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) _scratch_x) -> Tensor(a!)") == SchemaKind.scratch


def test_signature_turns_mutable_inputs_into_returns():
    f = FunctionSchema.parse(
        "_fused_moving_avg_obs_fq_helper(Tensor self, Tensor(a!) running_min, float c) -> (Tensor output, Tensor mask)"
    )
    assert str(f.signature()) == (
        "_fused_moving_avg_obs_fq_helper(Tensor self, Tensor running_min, float c) -> (Tensor, Tensor, Tensor)"
    )
    assert str(f.signature(keep_return_names=True)).endswith("-> (Tensor output, Tensor mask, Tensor running_min_out)")
    inplace = FunctionSchema.parse("add_.Tensor(Tensor(a!) self, Tensor other, *, Scalar alpha=1) -> Tensor(a!)")
    out = FunctionSchema.parse("add.out(Tensor self, Tensor other, *, Scalar alpha=1, Tensor(a!) out) -> Tensor(a!)")
    func = FunctionSchema.parse("add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor")
    assert inplace.signature() == out.signature() == func.signature()
    assert len({inplace.signature(), out.signature(), func.signature()}) == 1
    assert hash(inplace.signature()) == hash(func.signature())


def test_view_signature_strips_copy_and_scatter():
    c = FunctionSchema.parse("view_copy(Tensor self, SymInt[] size) -> Tensor")
    v = FunctionSchema.parse("view(Tensor(a) self, SymInt[] size) -> Tensor(a)")
    assert c.view_signature() == v.view_signature() == v.signature()
    s = FunctionSchema.parse("slice_scatter(Tensor self, Tensor src) -> Tensor")
    assert str(s.view_signature().name) == "slice_inverse"
    assert v.is_view_op and not c.is_view_op
    assert FunctionSchema.parse("unbind.int(Tensor(a -> *) self, int dim=0) -> Tensor(a)[]").is_view_op


def test_bernoulli_p_special_case():
    # bernoulli.p has no default for p, bernoulli_.float does: torchgen pairs them anyway
    f = FunctionSchema.parse("bernoulli.p(Tensor self, float p, *, Generator? generator=None) -> Tensor")
    g = FunctionSchema.parse(
        "bernoulli_.float(Tensor(a!) self, float p=0.5, *, Generator? generator=None) -> Tensor(a!)"
    )
    assert f.signature() == g.signature()


def test_returns():
    assert FunctionSchema.parse("f(Tensor self) -> ()").returns == ()
    f = FunctionSchema.parse("f(Tensor self) -> (Tensor values, Tensor indices)")
    assert [r.name for r in f.returns] == ["values", "indices"]
    assert Return.parse("Tensor(a!)").is_write
    assert str(FunctionSchema.parse("f(Tensor self) -> Tensor[]")) == "f(Tensor self) -> Tensor[]"


def test_invariants_are_checked_unless_legacy():
    bad = [
        "abs_(Tensor self) -> Tensor",  # inplace without mutable self
        "f(Tensor self) -> Tensor(a!)",  # mutable return aliasing nothing
        "f.out(Tensor self, *, Tensor(a!) out) -> Tensor(b!)",  # out/return annotations differ
        "f.out(Tensor self, *, Tensor(a!) out, Tensor(b!) o2) -> Tensor(a!)",  # count mismatch
        "f.functional(Tensor self, *, Tensor(a!) out) -> Tensor(a!)",  # reserved overload
        "f(Tensor(a!) self, *, Tensor(b!) out) -> (Tensor(a!), Tensor)",  # mixed returns
    ]
    for s in bad:
        with pytest.raises(ValueError):
            FunctionSchema.parse(s)
        assert str(FunctionSchema.parse(s, legacy=True)) == s


def test_bad_input_is_value_error_with_message():
    cases = {
        "": "invalid function schema",
        "abs(Tensor self)": "invalid function schema",
        "abs(Tensor self) -> Tensr": "unrecognized type 'Tensr'",
        "abs(Tensor) -> Tensor": "illegal argument",
        "abs(Tensor self,  int x) -> Tensor": "unrecognized type .* int",
        "abs(Tensor self, int x=1=2) -> Tensor": "default value",
        "abs(Dimname self) -> Tensor": "legacy",
    }
    for s, msg in cases.items():
        with pytest.raises(ValueError, match=msg):
            FunctionSchema.parse(s)


def test_mangled_schemas_never_crash(funcs_213):
    # Every truncation / character drop of real schemas either parses or is a ValueError.
    rng = random.Random(1234)
    sample = rng.sample(funcs_213, 150)
    for s in sample:
        variants = [s[:i] for i in range(0, len(s), 7)]
        for _ in range(10):
            i = rng.randrange(len(s))
            variants.append(s[:i] + s[i + 1 :])
            variants.append(s[:i] + rng.choice("()[]?!,*=|- >.:a") + s[i:])
        for v in variants:
            for legacy in (False, True):
                try:
                    r = FunctionSchema.parse(v, legacy=legacy)
                except ValueError:
                    continue
                assert str(r) == v


def test_equality_and_hash_by_value():
    s = "add.Tensor(Tensor self, Tensor other, *, Scalar alpha=1) -> Tensor"
    a, b = FunctionSchema.parse(s), FunctionSchema.parse(s, legacy=True)
    assert a == b and hash(a) == hash(b)
    assert {a: 1}[b] == 1
    assert a != FunctionSchema.parse("add.Scalar(Tensor self, Scalar other, Scalar alpha=1) -> Tensor")
    assert Argument.parse("Tensor self") == Argument.parse("Tensor self")
    assert hash(Type.parse("int[]?")) == hash(OptionalType(ListType(BaseType(BaseTy.int), None)))


def test_is_mutable_is_both_property_and_callable():
    f = FunctionSchema.parse("abs_(Tensor(a!) self) -> Tensor(a!)")
    assert f.is_mutable and f.is_mutable() is True and f.is_mutable == True  # noqa: E712
    g = FunctionSchema.parse("abs(Tensor self) -> Tensor")
    assert not g.is_mutable and not g.modifies_arguments()
