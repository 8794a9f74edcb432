"""Per-keystroke native_functions.yaml diagnostics (derivls.aten.native_incremental): the entries found
after any edit are the ones of a fresh split, and the problems equal a full index's."""

from __future__ import annotations

import random

from derivls.aten.native import NativeIndex
from derivls.aten.native_incremental import EntryChecker, split_entries
from derivls.derivatives.releases import NEWEST
from tests.unit.test_native_diagnostics import ABS, CASES, TAGS

PIECES = ["\n- ", "- func: x(Tensor self) -> Tensor\n", "\n", "  tags: core\n", "x", "# c\n", "- ", "-"]


def test_after_any_edit_the_reused_entries_are_those_of_a_fresh_split():
    rnd = random.Random(0)
    for _ in range(200):
        checker = EntryChecker("native_functions.yaml", None)
        text = ABS
        checker.check(text)
        for _ in range(20):
            at = rnd.randrange(len(text) + 1)
            if rnd.random() < 0.5 and len(text) > 5:
                text = text[:at] + text[min(len(text), at + rnd.randrange(1, 30)) :]
            else:
                text = text[:at] + rnd.choice(PIECES) + text[at:]
            checker.check(text)
            assert checker._chunks == split_entries(text)


def _full(text: str) -> list[tuple[int, str]]:
    index = NativeIndex.from_text(text, TAGS, "native_functions.yaml", rules=NEWEST.native)
    return [(p.line, p.code) for p in index.rejected]


# what only the whole file shows (error_check_native_functions, BackendIndex, the generated functions, views)
CROSS_ENTRY = {"native-duplicate", "native-python-keyword", "native-generated", "native-view-group"}


def test_typing_each_mistake_gives_the_full_index_problems_at_once():
    index = NativeIndex.from_text(ABS, TAGS, "native_functions.yaml", rules=NEWEST.native)
    for case, text, line, code in CASES:
        checker = EntryChecker("native_functions.yaml", set(index.tags or ()), NEWEST.native)
        checker.check(ABS)
        checker.adopt(ABS, index.rejected)
        # before the full re-index: each entry's own mistakes (cross-entry ones wait for it)
        quick = [(p.line, p.code) for p in checker.check(text)]
        if code in CROSS_ENTRY or case == "native-structured":  # (a structured_delegate to a missing op)
            assert set(quick) <= set(_full(text)), (quick, _full(text))
        else:
            assert quick == _full(text) == [(line, code)]
        # after it: the same as a full index, and kept while other entries are edited
        full = NativeIndex.from_text(text, TAGS, "native_functions.yaml", rules=NEWEST.native)
        checker.adopt(text, full.rejected)
        assert sorted((p.line, p.code) for p in checker.check(text)) == sorted(_full(text))
        edited = "# a new first line\n" + text
        assert sorted((p.line, p.code) for p in checker.check(edited)) == sorted((ln + 1, c) for ln, c in _full(text))
