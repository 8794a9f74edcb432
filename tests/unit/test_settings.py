"""The server's settings (section `derivls`): how client values are read, merged and refused."""

from __future__ import annotations

import logging
from pathlib import Path

import pytest

from derivls.server.documents.settings import Settings


def test_defaults_follow_the_files():
    settings = Settings()
    assert settings.torch_version is None and settings.profile == "auto" and settings.compile_on_save is False


@pytest.mark.parametrize("value", ["2.4", "2.4.1", " 2.12.1 ", "2.4.1+cu121", "2.5.0a0"])
def test_torch_version_takes_a_release(value: str):
    assert Settings().merged({"torchVersion": value}, None).torch_version == value.strip()


@pytest.mark.parametrize("value", ["auto", "AUTO", "", "  ", None])
def test_torch_version_auto_or_empty_means_found_from_the_files(value: str | None):
    assert Settings(torch_version="2.4").merged({"torchVersion": value}, None).torch_version is None


@pytest.mark.parametrize("value", ["latest", "two.four", "2", 2.4, ["2.4"], {"v": "2.4"}])
def test_a_bad_torch_version_is_a_warning_and_keeps_the_value_before(value: object, caplog):
    with caplog.at_level(logging.WARNING, logger="derivls.server.documents.settings"):
        merged = Settings(torch_version="2.6").merged({"torchVersion": value}, None)
    assert merged.torch_version == "2.6"
    assert [r.levelno for r in caplog.records] == [logging.WARNING]
    assert "torchVersion" in caplog.records[0].getMessage()


def test_torch_version_absent_keeps_the_value_before():
    assert Settings(torch_version="2.6").merged({"profile": "torchgen"}, None).torch_version == "2.6"


def test_settings_nested_under_the_section_or_flat_read_the_same():
    values = {
        "torchVersion": "2.4",
        "compileOnSave": True,
        "compileCxx": "clang++",
        "compileTorchInclude": "/opt/torch/include",
        "nativeFunctions": "native_functions.yaml",
        "profile": "torchgen",
    }
    root = Path("/work/space")
    flat = Settings().merged(values, root)
    assert flat == Settings().merged({"derivls": values}, root)
    assert flat == Settings(
        native_functions=root / "native_functions.yaml",
        profile="torchgen",
        torch_version="2.4",
        compile_on_save=True,
        compile_cxx="clang++",
        compile_torch_include="/opt/torch/include",
    )


def test_an_unknown_profile_is_a_warning_and_ignored(caplog):
    with caplog.at_level(logging.WARNING, logger="derivls.server.documents.settings"):
        assert Settings().merged({"profile": "torchgen-1.0"}, None).profile == "auto"
    assert "profile" in caplog.text


def test_compile_on_save_takes_only_a_boolean():
    assert Settings().merged({"compileOnSave": "yes"}, None).compile_on_save is False
    assert Settings(compile_on_save=True).merged({"compileOnSave": False}, None).compile_on_save is False


def test_values_that_are_not_an_object_change_nothing():
    settings = Settings(torch_version="2.4")
    assert settings.merged(None, None) == settings and settings.merged(["2.5"], None) == settings


def test_the_compile_paths_are_expanded_like_the_path_settings(monkeypatch):
    monkeypatch.setenv("HOME", "/home/u")
    monkeypatch.setenv("VENV", "/opt/venv")
    root = Path("/work/space")
    merged = Settings().merged({"compileTorchInclude": "~/torch/include", "compileCxx": "$VENV/bin/g++"}, root)
    assert merged.compile_torch_include == "/home/u/torch/include"
    assert merged.compile_cxx == "/opt/venv/bin/g++"
    # relative paths resolve against the workspace only in its own (trusted) configuration
    trusted = Settings().merged({"trustedWorkspace": True}, root)
    relative = trusted.merged({"compileTorchInclude": "build/include", "compileCxx": "tools/c++"}, root)
    assert relative.compile_torch_include == "/work/space/build/include"
    assert relative.compile_cxx == "/work/space/tools/c++"
    # a bare compiler name is looked up on PATH by the compile engine: kept as it is
    assert Settings().merged({"compileCxx": " clang++ "}, root).compile_cxx == "clang++"
    # empty: found (None)
    cleared = Settings(compile_cxx="g++", compile_torch_include="/x").merged(
        {"compileCxx": "", "compileTorchInclude": " "}, root
    )
    assert cleared.compile_cxx is None and cleared.compile_torch_include is None


def test_a_workspace_configuration_cannot_set_the_compiler_or_headers_without_trust(caplog):
    user = Settings().merged({"compileOnSave": True}, None)  # initializationOptions: the user's own
    with caplog.at_level(logging.WARNING, logger="derivls.server.documents.settings"):
        workspace = user.merged({"compileCxx": "/work/evil/cc", "compileTorchInclude": "/work/evil/inc"}, None)
    assert workspace.compile_cxx is None and workspace.compile_torch_include is None
    assert "compileCxx" in caplog.text and "trusted" in caplog.text


def test_the_users_own_compile_settings_are_kept_and_may_be_repeated_by_the_workspace_configuration():
    user = Settings().merged({"compileCxx": "clang++", "compileTorchInclude": "/opt/torch/include"}, None)
    again = user.merged({"compileCxx": "clang++", "compileTorchInclude": "/opt/torch/include"}, None)
    assert again.compile_cxx == "clang++" and again.compile_torch_include == "/opt/torch/include"
    other = user.merged({"compileCxx": "/work/evil/cc"}, None)
    assert other.compile_cxx == "clang++"


def test_a_workspace_configuration_cannot_choose_the_gradcheck_python_without_trust():
    user = Settings().merged({"gradcheckPython": "/opt/venv/bin/python"}, None)  # the user's own
    workspace = user.merged({"gradcheckPython": "/work/evil/python", "gradcheckOnSave": True}, None)
    assert workspace.gradcheck_python == "/opt/venv/bin/python"
    assert not workspace.gradcheck_on_save  # a save would compile and run the workspace's C++
    trusted = Settings().merged({"trustedWorkspace": True}, None).merged({"gradcheckPython": "/opt/py"}, None)
    assert trusted.gradcheck_python == "/opt/py"


def test_a_trusted_workspace_sets_the_compiler_and_headers():
    user = Settings().merged({"trustedWorkspace": True}, None)
    workspace = user.merged({"derivls": {"compileCxx": "/opt/cc", "compileTorchInclude": "/opt/inc"}}, None)
    assert workspace.compile_cxx == "/opt/cc" and workspace.compile_torch_include == "/opt/inc"


def test_initialization_options_that_are_not_an_object_still_count_as_the_users_level():
    user = Settings().merged(None, None)
    assert user.merged({"compileCxx": "/work/evil/cc"}, None).compile_cxx is None


def test_a_relative_program_or_header_folder_in_the_users_own_settings_is_ignored_not_resolved_in_the_workspace(
    caplog,
):
    # issue 34: a relative compileCxx resolved against whichever workspace was open (a program it ships)
    root = Path("/work/some-repo")
    with caplog.at_level(logging.WARNING, logger="derivls.server.documents.settings"):
        user = Settings().merged(
            {"compileCxx": "bin/g++", "gradcheckPython": "./venv/bin/python", "compileTorchInclude": "torch/include"},
            root,
        )
    assert user.compile_cxx is None and user.gradcheck_python is None and user.compile_torch_include is None
    assert "relative path" in caplog.text and "compileCxx" in caplog.text
    # the path settings of data files stay relative to the workspace
    assert Settings().merged({"nativeFunctions": "aten/native_functions.yaml"}, root).native_functions == (
        root / "aten/native_functions.yaml"
    )


def test_gradcheck_on_save_from_a_workspace_configuration_needs_trust():
    user = Settings().merged({}, None)
    assert not user.merged({"gradcheckOnSave": True}, None).gradcheck_on_save
    trusted = Settings().merged({"trustedWorkspace": True}, None)
    assert trusted.merged({"gradcheckOnSave": True}, None).gradcheck_on_save
    # the user's own setting stands; an untrusted workspace only repeats it
    own = Settings().merged({"gradcheckOnSave": True}, None)
    assert own.merged({"gradcheckOnSave": True}, None).gradcheck_on_save


def test_functions_manual_is_a_path_setting_a_workspace_may_set(monkeypatch):
    """`functionsManual` names the FunctionsManual.cpp gradcheck and the server's watch use outside a checkout: it is
    only read (compiled only by a trusted workspace's gradcheck), so an untrusted workspace's configuration may set it
    like `nativeFunctions`; `~`, `$VARS` and workspace-relative paths work, "" clears it."""
    monkeypatch.setenv("HOME", "/home/u")
    user = Settings().merged({"functionsManual": "~/pt/torch/csrc/autograd/FunctionsManual.cpp"}, Path("/w"))
    assert user.functions_manual == Path("/home/u/pt/torch/csrc/autograd/FunctionsManual.cpp")
    workspace = user.merged({"functionsManual": "manual/FunctionsManual.cpp"}, Path("/w"))
    assert not workspace.trusted_workspace and workspace.functions_manual == Path("/w/manual/FunctionsManual.cpp")
    assert workspace.merged({"functionsManual": ""}, Path("/w")).functions_manual is None
    assert Settings().functions_manual is None
