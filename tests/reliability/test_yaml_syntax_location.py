"""Issue 28, item 11: an unclosed quote in an entry is reported at the opening quote, inside the broken
entry, under both profiles; the next entry's `- name:` line shows nothing."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from tests.reliability.conftest import run_cli
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE, packaged_layout

SHIPPED = "- name: acos(Tensor self) -> Tensor\n  self: grad * "
BROKEN = '- name: acos(Tensor self) -> Tensor\n  self: "unclosed grad * '


@pytest.mark.parametrize("profile", ["torchgen", "legacy"])
def test_an_unclosed_quote_is_reported_at_the_quote_inside_its_entry(tmp_path: Path, profile: str) -> None:
    text = REAL_DERIVATIVES.read_text(encoding="utf-8")
    assert SHIPPED in text
    broken = text.replace(SHIPPED, BROKEN, 1)
    path = packaged_layout(tmp_path)
    path.write_text(broken, encoding="utf-8")
    lines = broken.splitlines()
    quote_line = next(i for i, line in enumerate(lines) if line.startswith('  self: "unclosed')) + 1
    next_entry = next(i for i in range(quote_line, len(lines)) if lines[i].startswith("- name:")) + 1
    done = run_cli("check", str(path), "--native", str(REAL_NATIVE), "--profile", profile, "--no-cache")
    found = re.findall(r":(\d+):(\d+): error: [^\n]*\[yaml-syntax\]", done.stdout)
    assert found == [(str(quote_line), str(lines[quote_line - 1].index('"') + 1))], done.stdout
    assert not re.search(rf":{next_entry}:\d+: ", done.stdout), done.stdout
