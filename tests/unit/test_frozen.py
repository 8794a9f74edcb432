"""derivls.frozen.frozen_dataclass behaves as @dataclass(frozen=True), only faster to construct."""

from __future__ import annotations

import dataclasses
import inspect
from dataclasses import FrozenInstanceError, dataclass, field

import pytest

from derivls.frozen import frozen_dataclass


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
