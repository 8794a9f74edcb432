"""server.tokens: the whole file's semantic tokens joined from per-entry fragments equal a plain delta
encoding of ide.tokens, before and after edits, in UTF-16 and UTF-8."""

from __future__ import annotations

import json

import pytest

from derivls.ide import tokens as ide_tokens
from derivls.server.positions import UTF8, UTF16, LineIndex
from derivls.server.state import DerivDocument
from derivls.server.tokens import encode, full_data
from tests.unit.ide_support import analyse, real_analysis, real_text


def document(text: str, analysis, encoding: str = UTF16, doc: DerivDocument | None = None) -> DerivDocument:
    doc = doc or DerivDocument("file:///derivatives.yaml", None)
    doc.analysis, doc.text, doc.lines = analysis, text, LineIndex(text, encoding)
    return doc


def joined(doc: DerivDocument) -> list[int]:
    return json.loads(full_data(doc).text)["data"]


def plain(doc: DerivDocument) -> list[int]:
    assert doc.analysis is not None and doc.lines is not None
    return encode(ide_tokens.semantic_tokens(doc.analysis), doc.lines)


def test_the_real_file_joined_from_fragments_is_the_plain_encoding():
    doc = document(real_text(), real_analysis())
    data = joined(doc)
    assert len(data) > 5 * 5000 and data == plain(doc)
    assert joined(doc) == data  # from the cache


@pytest.mark.parametrize("encoding", [UTF16, UTF8])
def test_after_edits_that_shift_and_change_entries_the_join_is_still_the_plain_encoding(encoding):
    head = "- name: abs(Tensor self) -> Tensor\n  self: grad * self.sgn()\n"
    tail = (
        '- name: sin(Tensor self) -> Tensor\n  self: grad * self.cos().conj() * at::where(self > 0, "é\U0001f600", 1)\n'
    )
    doc = document(head + tail, analyse(head + tail), encoding)
    assert joined(doc) == plain(doc)
    # an entry inserted before: the second entry moves down; then the first entry changes on its own line
    for text in (
        head + "\n- name: cos(Tensor self) -> Tensor\n  self: grad * -self.sin().conj()\n" + tail,
        head.replace("grad * self.sgn()", "self.sgn() * grad") + tail,
        head + "# \U0001f600\n" + tail.replace("sin", "sin", 1),
    ):
        doc = document(text, analyse(text), encoding, doc)
        assert joined(doc) == plain(doc), text
