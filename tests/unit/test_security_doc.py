"""docs/security.md's claims stand on tests: every test it names exists, and what it states of git (`--since`)
and of the check daemon (settings, bounds) is what the code has."""

from __future__ import annotations

import re
from pathlib import Path

from derivls.base import safegit
from derivls.daemon import address, serve
from derivls.project import since

REPO = Path(__file__).resolve().parents[2]
PAGE = REPO / "docs" / "security.md"
_NAMED = re.compile(r"(tests/[\w/]+\.py)?::(test_\w+)")


def named_tests(text: str) -> list[tuple[str | None, str]]:
    """The tests a page names, `tests/x.py::test_a` or `::test_b` (in the file named last before it)."""
    found, current = [], None
    for match in _NAMED.finditer(text):
        current = match.group(1) or current
        found.append((current, match.group(2)))
    return found


def row(title: str) -> str:
    """The table row of the process `title`."""
    (line,) = [line for line in PAGE.read_text(encoding="utf-8").splitlines() if line.startswith(f"| {title} |")]
    return line


def process_table() -> tuple[list[str], list[list[str]]]:
    """The table "What derivls runs": its header's cells, and each row's cells."""
    section = PAGE.read_text(encoding="utf-8").split("## What derivls runs", 1)[1].split("\n## ", 1)[0]
    lines = [line for line in section.splitlines() if line.startswith("|")]

    def cells(line: str) -> list[str]:
        return [cell.strip() for cell in line.strip().strip("|").split("|")]

    return cells(lines[0]), [cells(line) for line in lines[2:]]


def test_every_test_the_security_page_names_exists():
    named = named_tests(PAGE.read_text(encoding="utf-8"))
    assert len(named) >= 12
    missing = [
        f"{file}::{name}"
        for file, name in named
        if file is None or not re.search(rf"^(async )?def {name}\(", (REPO / file).read_text(encoding="utf-8"), re.M)
    ]
    assert missing == []


def test_the_named_test_reader_follows_the_file_named_last():
    text = "a (tests/unit/x.py::test_a, ::test_b) b tests/y.py::test_c ::test_d"
    assert named_tests(text) == [
        ("tests/unit/x.py", "test_a"),
        ("tests/unit/x.py", "test_b"),
        ("tests/y.py", "test_c"),
        ("tests/y.py", "test_d"),
    ]


def test_the_git_row_states_the_settings_and_bounds_git_runs_with():
    git = row("git")
    for name in ("GIT_NO_LAZY_FETCH", "GIT_ALLOW_PROTOCOL"):
        assert f"`{name}={safegit.ENVIRONMENT[name]}`" in git
    for setting in safegit.CONFIG:
        assert f"`-c {setting}`" in git
    assert "`--no-pager`" in git and "no terminal prompt" in git and "literal pathspecs" in git
    assert since.GIT_TIMEOUT == safegit.SECONDS
    assert f"{safegit.SECONDS:g} s each" in git and f"`RLIMIT_AS` {safegit.MEMORY >> 30} GB" in git
    assert "started from `/`" in git and "`-C`" in git


def test_the_daemon_row_states_its_bounds():
    daemon = row("The check daemon")
    assert f"at most {address.MAX_MESSAGE >> 20} MB" in daemon
    assert f"within {serve.REQUEST_SECONDS:g} s of its connection (`DERIVLS_DAEMON_REQUEST_SECONDS`)" in daemon
    assert f"`RLIMIT_AS` {serve.MEMORY >> 30} GB" in daemon
    assert f"{address.IDLE_SECONDS // 60:g} min without a request" in daemon
    assert "on the first SIGTERM" in daemon and "`derivls cache --clear` asks it to stop" in daemon


def test_every_process_in_the_table_names_the_tests_that_show_its_claims():
    header, rows = process_table()
    assert header[-1] == "Shown by"
    assert len(rows) >= 13
    for cells in rows:
        assert len(cells) == len(header), cells[0]
        assert named_tests(cells[-1]), cells[0]
        # the first test a row names comes with its file: a `::test` never leans on the row above's
        assert named_tests(" | ".join(cells))[0][0] is not None, cells[0]


def test_the_guard_processes_have_rows_that_say_how_they_start_and_end():
    scratch, session = row("The scratch folder's guard"), row("The gradcheck session's guard")
    for guard in (scratch, session):
        assert "`python -I`" in guard and "its own session" in guard and "even by SIGKILL" in guard
    assert "working folder `/`" in scratch
    assert "working folder the session's folder" in session
