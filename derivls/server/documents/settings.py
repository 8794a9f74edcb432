"""The server's settings: `nativeFunctions`, `tags`, `profile`, `torchVersion`, `torchInclude`,
`functionsManual`, `compileOnSave`, `compileCxx`, `compileTorchInclude`, `gradcheckOnSave`, `gradcheckPython` (section
`derivls`).

They come from `initializationOptions` (flat, or nested under `derivls`) and
are overridden by `workspace/configuration` values that are set.

Trust (docs/security.md): `compileCxx`, `compileTorchInclude`, `gradcheckPython` and `gradcheckOnSave` name a
program the server runs, the headers it compiles, or make it run the file's C++. The server takes them from `initializationOptions`, which the editor builds
from the user's own configuration (the launch configuration: nvim's `init_options`, eglot's
`:initializationOptions`, the VS Code extension's settings, which VS Code already restricts to the
user's own values in an untrusted workspace). From `workspace/configuration` and
`didChangeConfiguration` (which may carry a workspace's own settings file) they are honoured only when
`initializationOptions` says the workspace is trusted (`"trustedWorkspace": true`); otherwise they
keep the user's values and a warning is logged once. At the user's level, a program or header folder is a
name looked up on PATH or an absolute path: a relative one would resolve against whichever workspace is open
(a program the workspace ships), so it is ignored with a warning. Gradcheck itself (the lenses, the command,
on save) runs only when the workspace is trusted (`trusted_workspace`): the client says so in
initializationOptions, or later by the `derivls/workspaceTrusted` notification when the user grants trust.
"""

from __future__ import annotations

import logging
import os
from dataclasses import dataclass, field, replace
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
    # `torchInclude`: a torch `include` folder where the formula checks find the headers the files' tree lacks
    # (`check --torch-include`); read, never compiled, so a workspace may set it like nativeFunctions
    torch_include: Path | None = None
    # `functionsManual`: the FunctionsManual.cpp whose helpers gradcheck compiles and the server watches, outside a
    # checkout (`gradcheck --manual`); None: the checkout's torch/csrc/autograd/FunctionsManual.cpp, if any
    functions_manual: Path | None = None
    compile_on_save: bool = False  # `compileOnSave`: compile the saved entries' C++ (derivls check --compile)
    compile_cxx: str | None = None  # `compileCxx`: the compiler (default: $CXX, g++, c++, clang++)
    compile_torch_include: str | None = None  # `compileTorchInclude`: torch's include folder (default: found)
    gradcheck_on_save: bool = False  # `gradcheckOnSave`: gradcheck the saved entries (derivls gradcheck)
    gradcheck_python: str | None = None  # `gradcheckPython`: the Python whose torch runs it (default: the server's)
    # Where the values stand: False, the defaults (the next `merged` reads initializationOptions, the
    # user's level); True, the user's level is in (the next `merged` reads a workspace's configuration)
    from_user: bool = field(default=False, compare=False)
    trusted_workspace: bool = field(default=False, compare=False)  # initializationOptions' `trustedWorkspace`

    def merged(self, raw: Any, root: Path | None) -> Settings:
        """These settings with the values set in `raw` (a settings object from the client) applied: the
        first call on the defaults reads initializationOptions; later calls on its result read a
        workspace's configuration, where the compile command and headers need trust (module doc)."""
        workspace_level = self.from_user
        result = replace(self, from_user=True)
        if not isinstance(raw, dict):
            return result
        if isinstance(raw.get(SECTION), dict):
            raw = raw[SECTION]
        if not workspace_level and isinstance(raw.get("trustedWorkspace"), bool):
            result = replace(result, trusted_workspace=raw["trustedWorkspace"])
        if workspace_level and not self.trusted_workspace:
            raw = _untrusted(raw, self, root)
        if "nativeFunctions" in raw:
            result = replace(result, native_functions=_path(raw["nativeFunctions"], root))
        if "tags" in raw:
            result = replace(result, tags=_path(raw["tags"], root))
        if "torchInclude" in raw:
            result = replace(result, torch_include=_path(raw["torchInclude"], root))
        if "functionsManual" in raw:
            result = replace(result, functions_manual=_path(raw["functionsManual"], root))
        if isinstance(raw.get("compileOnSave"), bool):
            result = replace(result, compile_on_save=raw["compileOnSave"])
        if isinstance(raw.get("gradcheckOnSave"), bool):
            result = replace(result, gradcheck_on_save=raw["gradcheckOnSave"])
        base = root if workspace_level else None  # the user's own programs: absolute, or looked up on PATH
        if "gradcheckPython" in raw:
            result = replace(result, gradcheck_python=_command(raw["gradcheckPython"], base, "gradcheckPython"))
        if "compileCxx" in raw:
            result = replace(result, compile_cxx=_command(raw["compileCxx"], base, "compileCxx"))
        if "compileTorchInclude" in raw:
            include = _path(raw["compileTorchInclude"], base, "compileTorchInclude")
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


TRUSTED_ONLY = ("compileCxx", "compileTorchInclude", "gradcheckPython", "gradcheckOnSave")
_warned: set[str] = set()


def _untrusted(raw: dict[str, Any], user: Settings, root: Path | None) -> dict[str, Any]:
    """`raw` (a workspace's configuration) without the keys that need trust, unless they equal the user's."""
    kept = dict(raw)
    for key in TRUSTED_ONLY:
        if key not in kept:
            continue
        value = kept.pop(key)
        if key == "compileCxx":
            same = _command(value, root) in (None, user.compile_cxx)
        elif key == "gradcheckPython":
            same = _command(value, root) in (None, user.gradcheck_python)
        elif key == "gradcheckOnSave":
            same = not isinstance(value, bool) or value == user.gradcheck_on_save
        else:
            path = _path(value, root)
            same = path is None or str(path) == user.compile_torch_include
        if same:
            continue
        if key not in _warned:
            _warned.add(key)
            log.warning(
                "derivls.%s from the workspace's configuration is ignored: the client did not say the workspace "
                "is trusted (set it in your own editor configuration / initializationOptions, or send "
                "trustedWorkspace: true)",
                key,
            )
    return kept


def _torch_version(settings: Settings, value: Any) -> Settings:
    """`torchVersion`: "auto", "" or null → found from the files; "2.4" / "2.4.1" → that release; else a warning."""
    if value is None or (isinstance(value, str) and value.strip().lower() in ("", AUTO)):
        return replace(settings, torch_version=None)
    if isinstance(value, str) and parse_version(value) is not None:
        return replace(settings, torch_version=value.strip())
    log.warning("derivls.torchVersion %r is not a torch version (expected auto, or e.g. 2.4 or 2.4.1); ignored", value)
    return settings


def _command(value: Any, root: Path | None, key: str = "") -> str | None:
    """A command looked up on PATH (a bare name, kept), or a path (expanded like the path settings)."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = value.strip()
    if os.sep not in text and "/" not in text and not text.startswith("~"):
        return text
    path = _path(text, root, key)
    return str(path) if path is not None else None


def _path(value: Any, root: Path | None, key: str = "") -> Path | None:
    """The setting's path: expanded (`~`, `$VAR`, file://), relative ones against `root`. With `key` and no
    `root` (a program or header folder at the user's level), a relative path is ignored with a warning."""
    if not isinstance(value, str) or not value.strip():
        return None
    text = os.path.expandvars(os.path.expanduser(value.strip()))
    if text.startswith("file://"):
        from pygls.uris import to_fs_path

        text = to_fs_path(text) or text
    path = Path(text)
    if not path.is_absolute() and root is not None:
        path = root / path
    elif not path.is_absolute() and key:
        log.warning(
            "derivls.%s %r is a relative path; ignored: give an absolute path (or a command name on PATH), so it "
            "cannot resolve to a file of whichever workspace is open",
            key,
            value,
        )
        return None
    return path


__all__ = ["PROFILES", "SECTION", "Settings"]
