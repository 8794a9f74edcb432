"""derivls dump == torchgen's load_derivatives on the real 2.13 files, field by field."""

from __future__ import annotations

import json
import subprocess
import sys

import pytest

from tests.parity.torchgen_reference import torchgen_dump


@pytest.fixture(scope="module")
def both(real_files):
    expected = torchgen_dump(real_files.derivatives, real_files.native, real_files.tags)
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "derivls",
            "dump",
            str(real_files.derivatives),
            "--native",
            str(real_files.native),
            "--tags",
            str(real_files.tags),
        ],
        capture_output=True,
        text=True,
        check=False,
    )
    assert run.returncode == 0, run.stderr
    return expected, json.loads(run.stdout)


def test_same_infos_in_the_same_order(both):
    expected, actual = both
    assert len(expected["infos"]) == 746
    key = lambda info: (info["schema"], info["dispatch_key"])  # noqa: E731
    assert [key(i) for i in actual["infos"]] == [key(i) for i in expected["infos"]]
    assert actual["used_dispatch_keys"] == expected["used_dispatch_keys"]


def test_every_field_of_every_info(both):
    expected, actual = both
    mismatches = []
    for want, got in zip(expected["infos"], actual["infos"]):
        for field, value in want.items():
            if got.get(field) != value:
                mismatches.append((want["schema"], want["dispatch_key"], field, value, got.get(field)))
    assert not mismatches, f"{len(mismatches)} differing fields; first: {mismatches[:3]}"


def test_dump_has_exactly_the_documented_keys(both):
    _, actual = both
    documented = {
        "name", "schema", "dispatch_key", "op", "args_with_derivatives", "non_differentiable_arg_names",
        "output_differentiability", "output_differentiability_conditions", "available_named_gradients",
        "used_named_gradients", "all_saved_inputs", "all_saved_outputs", "derivatives", "forward_derivatives", "line",
    }  # fmt: skip
    assert all(set(info) == documented for info in actual["infos"])


def test_lines_point_at_the_entries(both, real_files):
    _, actual = both
    lines = real_files.derivatives.read_text().splitlines()
    generated = [i for i in actual["infos"] if i["line"] is None]
    assert generated and all(i["name"].split(".")[0].endswith("_copy") for i in generated)
    for info in actual["infos"]:
        if info["line"] is not None:
            assert lines[info["line"] - 1].startswith("- name:"), info["name"]
