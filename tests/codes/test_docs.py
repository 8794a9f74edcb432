"""The docs generated from the registry: docs/diagnostics.md and the package's doc pages are current,
`derivls explain` prints them, and hover on a squiggle shows the code's first paragraph."""

from __future__ import annotations

from pathlib import Path

import pytest

from derivls.cli import commandline as cli
from derivls.codes import all_codes, docs, lookup
from derivls.derivatives.loader import DocumentAnalyzer
from derivls.ide.hover import hover

ROOT = Path(__file__).resolve().parents[2]


def test_the_committed_docs_are_what_the_registry_generates():
    assert docs.stale(ROOT) == [], "run `python -m derivls.codes.docs` and commit the result"


def test_the_manual_has_one_anchored_section_per_code():
    text = (ROOT / "docs" / "diagnostics.md").read_text(encoding="utf-8")
    for code in all_codes():
        assert text.count(f'<a id="{code}"></a>') == 1
        assert f"](#{code})" in text


def test_every_code_links_to_a_doc_page_shipped_in_the_package():
    for code in all_codes():
        uri = docs.doc_uri(code)
        assert uri.startswith("file://") and uri.endswith(f"/derivls/codes/pages/{code}.md")
        assert docs.doc_path(code).read_text(encoding="utf-8").startswith(f"# `{code}`")


def test_the_package_data_includes_the_doc_pages():
    assert '"derivls.codes" = ["pages/*.md"]' in (ROOT / "pyproject.toml").read_text(encoding="utf-8")


def test_explain_prints_a_codes_doc(capsys):
    assert cli.main(["explain", "schema-not-found"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("schema-not-found\n") and "**What it means.**" in out and "**Wrong:**" in out


def test_explain_without_a_code_lists_every_code_with_its_summary(capsys):
    assert cli.main(["explain"]) == 0
    out = capsys.readouterr().out
    for code in all_codes():
        assert f"{code} " in out and code.summary in out


def test_explain_of_an_unknown_code_suggests_the_closest(capsys):
    assert cli.main(["explain", "overlapp"]) == 2
    assert "did you mean overlap" in capsys.readouterr().err


@pytest.fixture(scope="module")
def analysed(real_files):
    from derivls.aten.native import NativeIndex

    index = NativeIndex.load(str(real_files.native), str(real_files.tags))
    text = "- name: abs(Tensor self) -> Tensor\n  self: grad * slef.sgn()\n"
    return DocumentAnalyzer(index, index.path).analyse(text), index


def test_hover_on_a_squiggle_shows_the_codes_first_paragraph_and_links_its_doc(analysed):
    analysis, index = analysed
    info = hover(analysis, index, 1, 16)  # on `slef`
    assert info is not None
    code = lookup("formula-unknown-name")
    assert info.markdown.startswith(f"**`{code}`** (error): {code.what}")
    assert docs.doc_uri(code) in info.markdown


def test_hover_away_from_a_squiggle_shows_no_code(analysed):
    analysis, index = analysed
    info = hover(analysis, index, 0, 10)  # on the schema
    assert info is None or "formula-unknown-name" not in info.markdown
