"""A workspace that shadows Python modules: each one's `__init__.py` appends its name to a marker file.

Used by the editor tests: a server started the way an editor starts it, with such a folder as the
workspace (and as Neovim's working directory), must never import any of them.
"""

from __future__ import annotations

from pathlib import Path

# derivls itself, its dependencies, and stdlib modules the server imports after startup.
SHADOWED = ("derivls", "yaml", "pygls", "lsprotocol", "asyncio", "json", "logging", "runpy")


def add_shadowing_modules(workspace: Path, marker: Path) -> None:
    """Writes `<workspace>/<module>/__init__.py` for every SHADOWED module; importing one appends to `marker`."""
    for name in SHADOWED:
        package = workspace / name
        package.mkdir(parents=True, exist_ok=True)
        (package / "__init__.py").write_text(
            f"open({str(marker)!r}, 'a').write({name + chr(10)!r})\n", encoding="utf-8"
        )


def imported(marker: Path) -> list[str]:
    """The shadowing modules that ran, in order."""
    return marker.read_text(encoding="utf-8").split() if marker.exists() else []
