"""The server's settings: `nativeFunctions`, `tags`, `profile`, `torchVersion`, `compileOnSave`,
`compileCxx`, `compileTorchInclude` (section `derivls`).

They come from `initializationOptions` (flat, or nested under `derivls`) and
are overridden by `workspace/configuration` values that are set.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

from derivls.derivatives.profiles import AUTO, CHOICES
from derivls.derivatives.releases import parse_version

log = logging.getLogger(__name__)

SECTION = "derivls"
PROFILES = CHOICES  # the `profile` setting: auto or a loader generation


@dataclass(frozen=True)
class Settings:
    native_functions: Path | None = None
    tags: Path | None = None
    profile: str = "auto"
    # `torchVersion`: follow this PyTorch release's torchgen ("2.4"); None ("auto", ""): found, else newest
    torch_version: str | None = None
    compile_on_save: bool = False  # `compileOnSave`: compile the saved entries' C++ (derivls check --compile)
    compile_cxx: str | None = None  # `compileCxx`: the compiler (default: $CXX, g++, c++, clang++)
    compile_torch_include: str | None = None  # `compileTorchInclude`: torch's include folder (default: found)
    gradcheck_on_save: bool = False  # `gradcheckOnSave`: gradcheck the saved entries (derivls gradcheck)
    gradcheck_python: str | None = None  # `gradcheckPython`: the Python whose torch runs it (default: the server's)

    def merged(self, raw: Any, root: Path | None) -> Settings:
        """These settings with the values set in `raw` (a settings object from the client) applied."""
        if not isinstance(raw, dict):
            return self
        if isinstance(raw.get(SECTION), dict):
            raw = raw[SECTION]
        result = self
        if "nativeFunctions" in raw:
            result = replace(result, native_functions=_path(raw["nativeFunctions"], root))
        if "tags" in raw:
            result = replace(result, tags=_path(raw["tags"], root))
        if isinstance(raw.get("compileOnSave"), bool):
            result = replace(result, compile_on_save=raw["compileOnSave"])
        if isinstance(raw.get("gradcheckOnSave"), bool):
            result = replace(result, gradcheck_on_save=raw["gradcheckOnSave"])
        if "gradcheckPython" in raw:
            result = replace(result, gradcheck_python=_command(raw["gradcheckPython"], root))
        if "compileCxx" in raw:
            result = replace(result, compile_cxx=_command(raw["compileCxx"], root))
        if "compileTorchInclude" in raw:
            include = _path(raw["compileTorchInclude"], root)
            result = replace(result, compile_torch_include=str(include) if include is not None else None)
        if "torchVersion" in raw:
            result = _torch_version(result, raw["torchVersion"])
        profile = raw.get("profile")
        if isinstance(profile, str) and profile.strip():
            if profile.strip() in PROFILES:
                result = replace(result, profile=profile.strip())
            else:
                log.warning("unknown derivls.profile %r; expected one of %s", profile, ", ".join(PROFILES))
        return result


def _torch_version(settings: Settings, value: Any) -> Settings:
    """`torchVersion`: "auto", "" or null → found from the files; "2.4" / "2.4.1" → that release; else a warning."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", AUTO)):
        return replace(settings, torch_version=None)
    if isinstance(value, str) and parse_version(value) is not None:
        return replace(settings, torch_version=value.strip())
    log.warning("derivls.torchVersion %r is not a torch version (expected auto, or e.g. 2.4 or 2.4.1); ignored", value)
    return settings


def _command(value: Any, root: Path | None) -> str | None:
    """A command looked up on PATH (a bare name, kept), or a path (expanded like the path settings)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if os.sep not in text and "/" not in text and not text.startswith("~"):
        return text
    path = _path(text, root)
    return str(path) if path is not None else None


def _path(value: Any, root: Path | None) -> Path | None:
    if not isinstance(value, str) or not value.strip():
        return None
    text = os.path.expandvars(os.path.expanduser(value.strip()))
    if text.startswith("file://"):
        from pygls.uris import to_fs_path

        text = to_fs_path(text) or text
    path = Path(text)
    if not path.is_absolute() and root is not None:
        path = root / path
    return path


__all__ = ["PROFILES", "SECTION", "Settings"]
