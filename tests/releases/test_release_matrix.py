"""Every PyTorch release from 2.1 to 2.15: derivls on a release's own packaged files equals that release's torchgen.

For each release (fetched into the release cache when missing, see fetch.py): its own torchgen's
load_derivatives, run in a subprocess, against `derivls dump` field by field; `derivls check` has no
error and names the rules it picked; `derivls codegen` equals that torchgen's process_function for
every node; and every declaration derivls generates is in the Functions.h the wheel ships.
"""

from __future__ import annotations

import json

import pytest

from tests.releases.fetch import RELEASES
from tests.releases.matrix import Release, derivls, reference

pytestmark = pytest.mark.releases


@pytest.fixture(scope="module", params=RELEASES)
def release(request) -> Release:
    return Release(request.param)


@pytest.fixture(scope="module")
def expected(release):
    return reference(release.version)


@pytest.fixture(scope="module")
def generated(release):
    run = derivls("codegen", str(release.derivatives), "--format", "json")
    assert run.returncode == 0, run.stderr[-2000:]
    return json.loads(run.stdout)["nodes"]


def _family_of(version: str) -> str:
    from derivls.derivatives.releases import parse_version, rules_for_version

    parsed = parse_version(version)
    assert parsed is not None
    return rules_for_version(parsed)[0].family


def test_dump_equals_the_release_s_own_loader_field_by_field(release, expected):
    run = derivls("dump", str(release.derivatives))
    assert run.returncode == 0, run.stderr[-2000:]
    got = json.loads(run.stdout)
    want = expected["dump"]
    assert len(want["infos"]) > 700
    key = lambda info: (info["schema"], info["dispatch_key"])  # noqa: E731
    assert [key(i) for i in got["infos"]] == [key(i) for i in want["infos"]]
    assert got["used_dispatch_keys"] == want["used_dispatch_keys"]
    mismatches = [
        (w["schema"], w["dispatch_key"], field, value, g.get(field))
        for w, g in zip(want["infos"], got["infos"])
        for field, value in w.items()
        if g.get(field) != value
    ]
    assert not mismatches, f"{len(mismatches)} differing fields; first: {mismatches[:3]}"


def test_check_reports_no_error_and_says_which_rules(release):
    run = derivls("check", str(release.derivatives))
    assert run.returncode == 0, run.stdout[-2000:] + run.stderr[-2000:]
    assert " 0 errors" in run.stdout
    assert "formula-sources-missing" not in run.stdout  # every formula check ran, with the release's own headers
    assert f"using torch {_family_of(release.version)} rules (torch/version.py says {release.version}" in run.stdout


def test_codegen_equals_the_release_s_own_process_function(generated, expected):
    got = generated
    want = expected["nodes"]
    assert [n["op"] for n in got] == [n["op"] for n in want]
    differing = [
        (w["op"], what) for w, g in zip(want, got) for what in ("declaration", "definition") if w[what] != g[what]
    ]
    assert not differing, f"{len(differing)}/{2 * len(want)} differ; first: {differing[:5]}"


def test_every_generated_declaration_is_in_the_shipped_functions_h(release, generated):
    header = release.functions_h.read_text(encoding="utf-8")
    assert generated
    missing = [n["op"] for n in generated if n["declaration"] not in header]
    assert not missing, f"{len(missing)} declarations not in {release.functions_h}: {missing[:5]}"
