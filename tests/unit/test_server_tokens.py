"""server.tokens: the whole file's semantic tokens joined from per-entry fragments equal a plain delta
encoding of ide.tokens, before and after edits, in UTF-16 and UTF-8."""

from __future__ import annotations

import json
import random

import pytest

from derivls.ide import tokens as ide_tokens
from derivls.server.documents.positions import UTF8, UTF16, LineIndex
from derivls.server.documents.state import DerivDocument
from derivls.server.features.tokens import delta_edit as semantic_delta_edit
from derivls.server.features.tokens import encode, full_data
from tests.unit.ide_support import analyse, real_analysis, real_text


def document(text: str, analysis, encoding: str = UTF16, doc: DerivDocument | None = None) -> DerivDocument:
    doc = doc or DerivDocument("file:///derivatives.yaml")
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


# -- semanticTokens/full/delta ----------------------------------------------------------------------


def apply_edit(old: list[str], edit: tuple[int, int, list[str]] | None) -> list[str]:
    if edit is None:
        return old
    start, count, data = edit
    return old[:start] + data + old[start + count :]


@pytest.mark.parametrize(
    ("old", "new"),
    [
        ([], []),
        ([], ["1", "2"]),
        (["1", "2"], []),
        (["1", "2", "3"], ["1", "2", "3"]),
        (["1", "2", "3"], ["1", "9", "3"]),
        (["1", "2", "3"], ["1", "2", "3", "4"]),
        (["0", "1", "2", "3"], ["1", "2", "3"]),
        (["1", "1", "1"], ["1", "1"]),  # prefix and suffix would overlap: the edit must not count one twice
        (["1", "2", "1"], ["1", "2", "2", "1"]),
    ],
)
def test_a_delta_edit_turns_the_old_data_into_the_new(old, new):
    edit = semantic_delta_edit(old, new)
    assert apply_edit(old, edit) == new
    assert (edit is None) == (old == new)


def test_a_delta_edit_of_random_changes_is_exact_and_small():
    rng = random.Random(13)
    for _ in range(300):
        old = [str(rng.randrange(4)) for _ in range(rng.randrange(0, 40))]
        new = list(old)
        at = rng.randrange(len(new) + 1)
        new[at : at + rng.randrange(3)] = [str(rng.randrange(4)) for _ in range(rng.randrange(3))]
        edit = semantic_delta_edit(old, new)
        assert apply_edit(old, edit) == new
        if edit is not None:
            assert len(edit[2]) <= 2 and edit[1] <= 2
