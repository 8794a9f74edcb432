"""derivls.base.frozen.frozen_dataclass behaves as @dataclass(frozen=True), only faster to construct."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from derivls.base.frozen import frozen_dataclass


def _pair(build):
    """The same class body built with @dataclass(frozen=True, **options) and @frozen_dataclass(**options)."""
    return build(lambda **options: dataclass(frozen=True, **options)), build(frozen_dataclass)


def _rich(deco):
    @deco()
    class Rich:
        _cache = None  # not a field (no annotation)

        x: int
        y: str = "a"
        z: tuple = field(default_factory=tuple)
        w: int = field(default=3, init=False)
        v: tuple = field(default_factory=lambda: (1,), init=False)
        u: int = field(default=5, repr=False, compare=False)

        def __post_init__(self) -> None:
            object.__setattr__(self, "post", self.x + 1)

    return Rich


def test_same_init_semantics_as_dataclass() -> None:
    ref, ours = _pair(_rich)
    for args, kwargs in [((1,), {}), ((1, "b", (2,), 7), {}), ((), {"x": 4, "u": 9}), ((2,), {"z": ()})]:
        a, b = ref(*args, **kwargs), ours(*args, **kwargs)
        assert a.__dict__ == b.__dict__
        assert list(a.__dict__) == list(b.__dict__)
        assert repr(a).split("(", 1)[1] == repr(b).split("(", 1)[1]
    assert str(inspect.signature(ref)) == str(inspect.signature(ours))
    assert ours.__init__.__annotations__ == ref.__init__.__annotations__
    assert ours.__init__.__qualname__.endswith("Rich.__init__")
    assert ref.__doc__ == ours.__doc__
    assert [f.name for f in dataclasses.fields(ref)] == [f.name for f in dataclasses.fields(ours)]
    with pytest.raises(TypeError):
        ours()
    with pytest.raises(TypeError):
        ours(1, x=2)


def test_frozen_eq_hash_replace_unchanged() -> None:
    _, ours = _pair(_rich)
    a = ours(1)
    with pytest.raises(FrozenInstanceError):
        a.x = 2  # type: ignore[misc]
    assert a == ours(1, u=99)  # u does not compare
    assert hash(a) == hash(ours(1))
    b = dataclasses.replace(a, x=5)
    assert (b.x, b.post, b.y) == (5, 6, "a")
    assert dataclasses.is_dataclass(ours)
    assert ours.__dataclass_params__.frozen


def test_options_and_inheritance() -> None:
    def build(deco):
        @deco(eq=False)
        class Base:
            """Documented."""

            a: int

        @deco(eq=False)
        class Sub(Base):
            b: int = 2

        return Base, Sub

    (ref_base, ref_sub), (base, sub) = _pair(build)
    assert base.__doc__ == ref_base.__doc__ == "Documented."
    assert sub.__doc__ == ref_sub.__doc__
    s = sub(1)
    assert s.__dict__ == ref_sub(1).__dict__ == {"a": 1, "b": 2}
    assert s != sub(1)  # eq=False: identity


def test_unsupported_options_are_refused() -> None:
    with pytest.raises(TypeError):
        frozen_dataclass(init=False)
    with pytest.raises(TypeError):

        @frozen_dataclass
        class KwOnly:
            a: int = field(kw_only=True)


def test_repr_eq_hash_like_dataclass() -> None:
    def build(deco):
        @deco()
        class P:
            a: int
            b: object = None
            c: int = field(default=0, compare=False)
            d: int = field(default=0, hash=False)
            e: int = field(default=0, repr=False)

        @deco()
        class One:
            a: object

        @deco()
        class Empty:
            pass

        return P, One, Empty

    (rp, ro, re_), (p, o, e) = _pair(build)
    for args in [(1,), (1, "x", 2, 3, 4), (float("nan"), None)]:
        assert repr(p(*args)).split("(", 1)[1] == repr(rp(*args)).split("(", 1)[1]
        assert hash(p(*args)) == hash(rp(*args))
        assert (p(*args) == p(*args)) == (rp(*args) == rp(*args))
    nan = float("nan")
    assert (o(nan) == o(nan)) == (ro(nan) == ro(nan))  # tuple comparison: identity first
    assert hash(o(7)) == hash(ro(7)) == hash((7,))
    assert hash(e()) == hash(re_()) and e() == e() and repr(e()).endswith("Empty()")
    assert p(1).__eq__(rp(1)) is NotImplemented
    assert p(1, c=5) == p(1, c=6)  # compare=False
    assert hash(p(1, d=5)) == hash(p(1, d=6))  # hash=False
    # recursion guard, as dataclasses' _recursive_repr
    items: list[object] = []
    r = o(items)
    items.append(r)
    assert repr(r).endswith("One(a=[...])")
    for name in ("__init__", "__repr__", "__eq__", "__hash__", "__setattr__", "__delattr__"):
        assert getattr(p, name).__qualname__ == getattr(rp, name).__qualname__


def test_frozen_errors_and_params_like_dataclass() -> None:
    ref, ours = _pair(_rich)
    for obj in (ref(1), ours(1)):
        with pytest.raises(FrozenInstanceError, match="cannot assign to field 'x'"):
            obj.x = 2
        with pytest.raises(FrozenInstanceError, match="cannot assign to field 'other'"):
            obj.other = 2
        with pytest.raises(FrozenInstanceError, match="cannot delete field 'x'"):
            del obj.x
    for attr in ("init", "repr", "eq", "order", "unsafe_hash", "frozen"):
        assert getattr(ours.__dataclass_params__, attr) == getattr(ref.__dataclass_params__, attr), attr
    assert ours.__match_args__ == ref.__match_args__


def test_explicit_eq_and_hash_are_kept() -> None:
    def build(deco):
        @deco()
        class OwnHash:
            a: int

            def __hash__(self) -> int:
                return 42

        @deco()
        class OwnEq:
            a: int

            def __eq__(self, other: object) -> bool:
                return True

        @deco(eq=False)
        class NoEq:
            a: int

        return OwnHash, OwnEq, NoEq

    (rh, rq, rn), (h, q, n) = _pair(build)
    assert hash(h(1)) == hash(rh(1)) == 42
    assert q(1) == q(2) and hash(q(1)) == hash(rq(1))  # generated hash over a
    assert n(1) != n(1) and hash(n(1)) != hash(n(1))  # identity, like rn
    assert rn(1) != rn(1)


def test_inheritance_rules_like_dataclass() -> None:
    @frozen_dataclass
    class Base:
        a: int

    @dataclass(frozen=True)
    class RealSub(Base):  # a real frozen dataclass may derive from ours
        b: int = 0

    @frozen_dataclass
    class OurSub(RealSub):  # and ours from a real one
        c: int = 1

    assert OurSub(1).__dict__ == {"a": 1, "b": 0, "c": 1}
    assert Base.__dataclass_params__.frozen and RealSub.__dataclass_params__.frozen
    with pytest.raises(TypeError, match="non-frozen"):

        @dataclass
        class Thawed(Base):
            b: int = 0

    @dataclass
    class Plain:
        a: int

    with pytest.raises(TypeError, match="non-frozen"):

        @frozen_dataclass
        class FrozenOnPlain(Plain):
            b: int = 0

    with pytest.raises(TypeError, match="Cannot overwrite attribute __setattr__"):

        @frozen_dataclass
        class OwnSetattr:
            a: int

            def __setattr__(self, name: str, value: object) -> None:
                pass


def test_derivls_classes_are_documented_as_dataclass_would() -> None:
    import importlib
    import sys

    for name in (
        "derivls.cli.commandline",
        "derivls.ide.targets",
        "derivls.derivatives.legacy",
        "derivls.codegen.nodes",
    ):
        importlib.import_module(name)
    checked = 0
    for module_name, module in list(sys.modules.items()):
        if not module_name.startswith("derivls"):
            continue
        for cls in vars(module).values():
            if not (isinstance(cls, type) and cls.__module__ == module_name and dataclasses.is_dataclass(cls)):
                continue
            init = cls.__dict__.get("__init__")
            if (
                init is None
                or not getattr(init, "__code__", None)
                or "frozen_dataclass" not in init.__code__.co_filename
            ):
                continue
            expected = cls.__name__ + str(inspect.signature(cls)).replace(" -> None", "")
            if cls.__doc__.startswith(cls.__name__ + "("):  # a generated doc (not a docstring)
                assert cls.__doc__ == expected
            checked += 1
    assert checked > 40


def test_slots_option_keeps_dataclass_behaviour_without_an_instance_dict() -> None:
    import copy
    from functools import cached_property

    @frozen_dataclass(slots=True)
    class Slotted:
        a: int
        b: str = "x"
        c: tuple[int, ...] = field(default_factory=tuple)

    @dataclass(frozen=True)
    class Plain:
        a: int
        b: str = "x"
        c: tuple[int, ...] = field(default_factory=tuple)

    s = Slotted(1)
    assert not hasattr(s, "__dict__") and Slotted.__slots__ == ("a", "b", "c")
    assert repr(s).replace("Slotted", "Plain") == repr(Plain(1))
    assert s == Slotted(1, "x", ()) and hash(s) == hash(Slotted(1)) and s != Slotted(2)
    assert dataclasses.replace(s, b="y") == Slotted(1, "y")
    assert [f.name for f in dataclasses.fields(s)] == ["a", "b", "c"]
    assert copy.deepcopy(s) == s and copy.copy(s) == s  # pickle's protocol: __getstate__ / __setstate__
    with pytest.raises(FrozenInstanceError):
        s.a = 2  # type: ignore[misc]
    with pytest.raises(FrozenInstanceError):
        del s.b  # type: ignore[misc]

    @frozen_dataclass(slots=True, extra_slots=("_cache", "__dict__"))
    class WithCaches:
        _cache = None  # a lazily filled cache: every instance starts with the class's value
        a: int

        @cached_property
        def double(self) -> int:
            return self.a * 2

    w = WithCaches(3)
    assert w._cache is None and w.double == 6 and w.__dict__ == {"double": 6}
    object.__setattr__(w, "_cache", "filled")
    copied = copy.deepcopy(w)
    assert copied == w and copied._cache == "filled" and copied.__dict__ == {"double": 6}
