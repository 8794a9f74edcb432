"""The baseline on the unmodified 2.13 file: every entry of the CI subset (tests/gradcheck/baseline-2.13.json,
`ops`) either passes or is listed there with its reason (not-checkable reasons are facts about the
harness: the list should shrink). The full run is bench/bench_gradcheck.py (--all)."""

from __future__ import annotations

import json

import pytest

from tests.gradcheck.conftest import EXPECTATIONS

pytestmark = pytest.mark.gradcheck


def _kind(reason: str) -> str:
    return reason.split(":", 1)[0].strip()


def test_every_entry_of_the_subset_passes_or_is_listed_with_its_reason(shipped_run):
    expected = json.loads(EXPECTATIONS.read_text())["units"]
    found = {u["name"]: u for u in shipped_run.summary["units"]}
    assert set(found) == set(expected), (set(found) ^ set(expected), shipped_run.stderr)
    differences = {
        name: (u["status"], u["reason"], expected[name])
        for name, u in found.items()
        if u["status"] != expected[name]["status"] or _kind(u["reason"]) != _kind(expected[name]["reason"])
    }
    assert not differences, differences


def test_the_subset_has_no_failing_formula(shipped_run):
    assert shipped_run.code == 0, shipped_run.stderr
    assert shipped_run.summary["counts"]["failed"] == 0
    assert shipped_run.summary["counts"]["passed"] >= 30
