"""Which release's rules derivls picks, and why (derivls.derivatives.releases.detect)."""

from __future__ import annotations

import pytest

from derivls.cli import main
from derivls.derivatives.releases import FAMILIES, NEWEST, detect, parse_version, rules_for_version


def _checkout(tmp_path, version: str | None):
    autograd = tmp_path / "tools" / "autograd"
    autograd.mkdir(parents=True)
    (autograd / "derivatives.yaml").write_text("", encoding="utf-8")
    if version is not None:
        (tmp_path / "version.txt").write_text(version + "\n", encoding="utf-8")
    return autograd / "derivatives.yaml"


def _wheel(tmp_path, version: str | None):
    site = tmp_path / "site-packages"
    autograd = site / "torchgen" / "packaged" / "autograd"
    autograd.mkdir(parents=True)
    (autograd / "derivatives.yaml").write_text("", encoding="utf-8")
    if version is not None:
        (site / "torch").mkdir()
        (site / "torch" / "version.py").write_text(f"__version__ = '{version}'\ndebug = False\n", encoding="utf-8")
    return autograd / "derivatives.yaml"


def test_versions_parse_to_major_minor():
    assert parse_version("2.4.1+cu121") == (2, 4)
    assert parse_version("2.5.0a0") == (2, 5)
    assert parse_version("2.10") == (2, 10)
    assert parse_version("main") is None


def test_every_minor_release_from_2_1_has_exactly_one_family():
    for minor in range(1, 20):
        covering = [r for r in FAMILIES if r.covers((2, minor))]
        assert len(covering) == 1, minor
    assert rules_for_version((2, 12))[0].family == "2.8-2.12"
    assert rules_for_version((2, 13))[0] is NEWEST


def test_an_explicit_version_wins_over_what_the_files_say(tmp_path):
    path = _wheel(tmp_path, "2.4.1+cu121")
    detected = detect("2.13", path)
    assert detected.rules is NEWEST and detected.reason == "set to 2.13"


def test_a_checkout_s_version_txt(tmp_path):
    detected = detect(None, _checkout(tmp_path, "2.5.0a0"))
    assert detected.rules.family == "2.5" and detected.reason == "version.txt says 2.5.0a0"


def test_a_wheel_s_torch_version_py_beside_torchgen(tmp_path):
    detected = detect(None, _wheel(tmp_path, "2.3.1+cu121"))
    assert detected.rules.family == "2.3" and detected.reason == "torch/version.py says 2.3.1+cu121"


def test_then_what_native_functions_yaml_contains(tmp_path):
    native = tmp_path / "native_functions.yaml"
    native.write_text("- func: f(Tensor self, Dimname dim) -> Tensor\n", encoding="utf-8")
    detected = detect(None, _checkout(tmp_path, None), native)
    assert detected.rules.native.accepts_dimname and "Dimname" in detected.reason
    assert detected.rules.family == "2.8-2.12"


def test_else_the_newest_rules(tmp_path):
    detected = detect(None, _checkout(tmp_path, None))
    assert detected.rules is NEWEST and "newest" in detected.reason


def test_releases_outside_the_known_ones_say_so(tmp_path):
    newer = detect("3.0", None)
    assert newer.rules is NEWEST and "newer than every known release" in newer.reason
    older = detect("1.13", None)
    assert older.rules is FAMILIES[0] and "older than every known release" in older.reason


def test_a_bad_torch_version_is_a_usage_error(tmp_path, capsys):
    path = _checkout(tmp_path, None)
    assert main(["check", str(path), "--torch-version", "latest"]) == 2
    assert "'latest' is not a torch version" in capsys.readouterr().err


@pytest.mark.parametrize("version", ["2.1", "2.4", "2.12"])
def test_older_releases_accept_dimname_and_2_13_does_not(version):
    assert rules_for_version(parse_version(version))[0].native.accepts_dimname
    assert not NEWEST.native.accepts_dimname


def test_a_checkout_s_version_txt_is_found_from_native_functions_yaml_too(tmp_path):
    native = tmp_path / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
    native.parent.mkdir(parents=True)
    native.write_text("", encoding="utf-8")
    (tmp_path / "version.txt").write_text("2.2.0a0\n", encoding="utf-8")
    detected = detect(None, None, native)
    assert detected.rules.family == "2.2" and detected.reason == "version.txt says 2.2.0a0"
