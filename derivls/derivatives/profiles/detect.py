"""Which profile a workspace gets. `auto` decides, first match wins:

1. the layout around derivatives.yaml (derivls.base.discovery): a checkout with `torchgen/` → torchgen,
   with `tools/codegen/` and no `torchgen/` → legacy; a wheel's `torchgen/packaged/` → torchgen;
2. native_functions.yaml: read with a tags.yaml (tags.yaml appeared in 2022), or any SymInt in it
   (every PyTorch 2.x file has them) → torchgen; otherwise entries with `use_c10_dispatcher:`
   (a key of the 2021 files, dropped later that year) → legacy;
3. otherwise torchgen.

The choice is made before native_functions.yaml is indexed: the profile decides how it is read.
"""

from __future__ import annotations

import re
from pathlib import Path

from derivls.derivatives.profiles.base import AUTO, Profile
from derivls.derivatives.profiles.legacy import LEGACY
from derivls.derivatives.profiles.torchgen import TORCHGEN

PROFILES: tuple[Profile, ...] = (TORCHGEN, LEGACY)
NAMES = tuple(p.name for p in PROFILES)
CHOICES = (AUTO, *NAMES)

_MARKER = re.compile(r"^  use_c10_dispatcher:", re.MULTILINE)  # dropped from native_functions.yaml in 2021
_SYMINT = re.compile(r"\bSymInt\b")


def named(name: str) -> Profile:
    for profile in PROFILES:
        if profile.name == name:
            return profile
    raise ValueError(f"unknown profile {name!r}; expected one of {', '.join(NAMES)}")


def choose_before_reading(requested: str, derivatives: Path | None) -> Profile | None:
    """The profile set or shown by the layout; None when only native_functions.yaml can tell."""
    if requested != AUTO:
        return named(requested).because(f"set to {requested}")
    if derivatives is None:
        return None
    from derivls.base.discovery import CHECKOUT, WHEEL, layout_of

    layout = layout_of(derivatives)
    if layout.kind == WHEEL:
        return TORCHGEN.because("a torch wheel's packaged files")
    if layout.kind == CHECKOUT:
        if layout.has_torchgen:
            return TORCHGEN.because("a checkout with torchgen/")
        if layout.has_tools_codegen:
            return LEGACY.because("a checkout with tools/codegen/ and no torchgen/")
    return None


def choose_from_native(native_text: str | None, has_tags: bool) -> Profile:
    """legacy only on positive evidence: no tags.yaml, no SymInt, and the 2021-only `use_c10_dispatcher:`."""
    if native_text is None:
        return TORCHGEN.because("the default")
    if has_tags:
        return TORCHGEN.because("native_functions.yaml comes with a tags.yaml")
    if _SYMINT.search(native_text):
        return TORCHGEN.because("native_functions.yaml has SymInt")
    if _MARKER.search(native_text):
        return LEGACY.because("native_functions.yaml has 2021's use_c10_dispatcher keys")
    return TORCHGEN.because("the default")


def choose(requested: str, derivatives: Path | None, native_text: str | None, has_tags: bool) -> Profile:
    return choose_before_reading(requested, derivatives) or choose_from_native(native_text, has_tags)
