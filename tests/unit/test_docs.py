"""README.md is a front page, and every relative link of README.md and docs/*.md leads somewhere."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
README = REPO / "README.md"
DOCS = REPO / "docs"
MAX_README_LINES = 200

# Pages other branches write (issue 26's registry, the security, gradcheck and install work): links to
# them may dangle until those branches are merged. Delete this allow-list once they are.
_LINK = re.compile(r"(?<!!)\[(?:[^\]\[]|\[[^\]]*\])*\]\(([^()\s]+)\)")
_FENCE = re.compile(r"^(```|~~~).*?^\1", re.M | re.S)
_CODE = re.compile(r"`[^`\n]*`")


def _pages() -> list[Path]:
    return [README, *sorted(DOCS.glob("*.md"))]


def links(text: str) -> list[str]:
    """The targets of a page's markdown links, leaving out those inside code."""
    text = _CODE.sub("", _FENCE.sub("", text))
    return _LINK.findall(text)


def slug(heading: str) -> str:
    """The anchor GitHub gives a heading."""
    text = re.sub(r"[`*_]", "", heading.strip().lower())
    return re.sub(r"[^\w\- ]", "", text).replace(" ", "-")


def anchors(page: Path) -> set[str]:
    text = _FENCE.sub("", page.read_text(encoding="utf-8"))
    return {slug(m.group(1)) for m in re.finditer(r"^#{1,6}\s+(.+?)\s*#*$", text, re.M)}


def broken_links(page: Path) -> list[str]:
    broken = []
    for target in links(page.read_text(encoding="utf-8")):
        if re.match(r"[a-z][a-z0-9+.-]*:", target):  # https:, mailto: ... (not relative)
            continue
        path, _, anchor = target.partition("#")
        resolved = (page.parent / path).resolve() if path else page
        if not resolved.is_relative_to(REPO):
            broken.append(f"{target} (outside the repository)")
            continue
        if not resolved.exists():
            broken.append(target)
            continue
        if anchor and resolved.suffix == ".md" and anchor not in anchors(resolved):
            broken.append(f"{target} (no heading #{anchor})")
    return broken


def test_readme_is_a_front_page_of_at_most_200_lines():
    assert len(README.read_text(encoding="utf-8").splitlines()) <= MAX_README_LINES


@pytest.mark.parametrize("page", _pages(), ids=lambda p: p.relative_to(REPO).as_posix())
def test_every_relative_link_resolves_to_a_file_and_heading_in_the_repository(page):
    assert broken_links(page) == []


def test_the_docs_folder_holds_the_pages_readme_links_to():
    linked = {t.partition("#")[0] for t in links(README.read_text(encoding="utf-8"))}
    assert {"docs/architecture.md", "docs/testing.md", "docs/cli.md", "docs/releases.md"} <= linked


def test_readme_keeps_its_two_set_up_commands():
    text = README.read_text(encoding="utf-8")
    assert "pip install -e . torch==2.13.0 && derivls check" in text
    assert "pip install -e '.[test]' && python -m pytest" in text


def test_the_link_checker_finds_a_missing_file_a_missing_heading_and_skips_code(tmp_path, monkeypatch):
    page = tmp_path / "page.md"
    (tmp_path / "there.md").write_text("# A heading\n")
    page.write_text(
        "[ok](there.md#a-heading) [gone](missing.md) [no anchor](there.md#nope) [web](https://example.org)\n"
        "`[in code](missing2.md)`\n```\n[fenced](missing3.md)\n```\n"
    )
    monkeypatch.setattr(f"{__name__}.REPO", tmp_path)
    assert broken_links(page) == ["missing.md", "there.md#nope (no heading #nope)"]


def test_slug_follows_githubs_anchors():
    assert slug("What the rules don't know") == "what-the-rules-dont-know"
    assert slug("Compiling the formulas (`check --compile`)") == "compiling-the-formulas-check---compile"
