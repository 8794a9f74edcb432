"""Loader profiles: which loader's rules an analysis follows (one Profile object per generation).

- `torchgen`: PyTorch 2.x (torchgen/packaged/autograd/load_derivatives.py) — profiles/torchgen.py;
- `legacy`: the January 2021 loader (tools/autograd/load_derivatives.py of that time) —
  profiles/legacy.py, its rules in derivls.derivatives.legacy.

`auto` is resolved by profiles/detect.py. Results carry the Profile they were computed with
(`EntryResult.profile`, `DocumentAnalysis.profile`).
"""

from __future__ import annotations

from derivls.derivatives.profiles.base import AUTO, OpNames, Profile
from derivls.derivatives.profiles.detect import (
    CHOICES,
    NAMES,
    PROFILES,
    choose,
    choose_before_reading,
    choose_from_native,
    named,
)
from derivls.derivatives.profiles.legacy import LEGACY, LegacyProfile
from derivls.derivatives.profiles.torchgen import TORCHGEN, TorchgenProfile

__all__ = [
    "AUTO",
    "CHOICES",
    "LEGACY",
    "NAMES",
    "PROFILES",
    "TORCHGEN",
    "LegacyProfile",
    "OpNames",
    "Profile",
    "TorchgenProfile",
    "choose",
    "choose_before_reading",
    "choose_from_native",
    "named",
]
