"""Seeded native_functions.yaml / tags.yaml mistakes, judged by torchgen: what it rejects derivls flags on the
mistake's line (and nowhere else), what it accepts derivls does not flag; and the shipped files get no error.

The installed torch's torchgen (2.13) judges in the default run; under `-m releases` every release 2.1-2.15
judges the same campaign on its own files (tests/parity/native_campaign.py holds the data and the judge).
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

import pytest

from derivls.derivatives.releases import parse_version, rules_for_version
from tests.parity.native_campaign import MUTATIONS, Mutation, apply, derivls_problems, judge
from tests.releases.fetch import RELEASES
from tests.releases.matrix import installed_site, installed_version, release_root


def _files(root: Path) -> tuple[str, str]:
    native = root / "torchgen" / "packaged" / "ATen" / "native"
    return (native / "native_functions.yaml").read_text(encoding="utf-8"), (native / "tags.yaml").read_text(
        encoding="utf-8"
    )


def _applies(m: Mutation, native: str, tags: str) -> bool:
    """The mutation's entry and text exist in that release's files (older releases lack some ops)."""
    try:
        apply(m, native, tags)
    except AssertionError:
        return False
    return True


@cache
def _campaign(root: Path) -> dict[str, tuple[int, str | None]]:
    """mutation id → (the mistake's line, torchgen's error or None), for the mutations that apply there."""
    native, tags = _files(root)
    applicable = [m for m in MUTATIONS if _applies(m, native, tags)]
    cases = [apply(m, native, tags) for m in applicable]
    verdicts = judge(root, [(n, t) for n, t, _ in cases])
    return {m.id: (line, v) for m, (_, _, line), v in zip(applicable, cases, verdicts)}


def _check(root: Path, version: str, m: Mutation) -> None:
    native, tags = _files(root)
    if m.id not in _campaign(root):
        return  # the mutation's entry is not in this release's files
    line, verdict = _campaign(root)[m.id]
    mutated_native, mutated_tags, _ = apply(m, native, tags)
    version_tuple = parse_version(version)
    assert version_tuple is not None
    rules = rules_for_version(version_tuple)[0].native
    found = derivls_problems(mutated_native, mutated_tags, rules)
    if verdict is None:
        assert found == [], f"torchgen {version} accepts {m.id}, derivls flags {found}"
    else:
        assert found, f"torchgen {version} rejects {m.id} ({verdict}), derivls flags nothing"
        assert {(f, ln) for f, ln, _ in found} == {(m.file, line)}, (
            f"torchgen {version} rejects {m.id} at {m.file}:{line} ({verdict}); derivls flags {found}"
        )


def _installed() -> tuple[Path, str]:
    site, version = installed_site(), installed_version()
    assert site is not None and version is not None, "the tests need the installed torch (torchgen)"
    return site, version


@pytest.mark.parametrize("mutation", MUTATIONS, ids=[m.id for m in MUTATIONS])
def test_a_seeded_mistake_is_flagged_on_its_line_iff_the_installed_torchgen_rejects_it(mutation: Mutation):
    site, version = _installed()
    _check(site, version, mutation)


def test_the_campaign_holds_both_rejected_and_accepted_mistakes():
    site, _ = _installed()
    verdicts = [v for _, v in _campaign(site).values()]
    assert sum(v is not None for v in verdicts) >= 40 and sum(v is None for v in verdicts) >= 5


def test_the_installed_release_shipped_files_get_no_error():
    site, version = _installed()
    native, tags = _files(site)
    version_tuple = parse_version(version)
    assert version_tuple is not None
    assert derivls_problems(native, tags, rules_for_version(version_tuple)[0].native) == []


@pytest.mark.releases
@pytest.mark.parametrize("version", RELEASES)
def test_every_release_judges_the_campaign_on_its_own_files(version: str):
    root = release_root(version)
    native, tags = _files(root)
    version_tuple = parse_version(version)
    assert version_tuple is not None
    assert derivls_problems(native, tags, rules_for_version(version_tuple)[0].native) == []
    failures = []
    for m in MUTATIONS:
        try:
            _check(root, version, m)
        except AssertionError as e:
            failures.append(str(e))
    assert not failures, "\n".join(failures)
