"""native_functions.yaml diagnostics per keystroke: only the entries whose text changed are read again.

`EntryChecker.check(text)` splits the buffer into entries (a line starting with `- ` starts one), reads each
entry it has not seen (by its text) with the index's own per-entry reader (`_from_entry`: the schema, the
keys, the dispatch table, NativeFunction's rules) and reuses the problems of every other entry, moved to
its new line. What needs the whole file (error_check_native_functions, BackendIndex, the generated functions,
the view groups) comes from the last full index (`adopt`), kept for the entries whose text is unchanged; the
server re-indexes the whole file a moment after the typing stops and publishes that.

A keystroke in the 16k-line file costs the split, one dict lookup per entry and one entry read
(bench/bench_native_edit.py measures it).
"""

from __future__ import annotations

from bisect import bisect_left, bisect_right
from dataclasses import replace

from derivls.aten.native_entry import _from_entry, _problem, _read_entries
from derivls.aten.native_model import NativeIndexError
from derivls.aten.native_rules import NEWEST, NativeProblem, NativeRules, UnknownToRules
from derivls.aten.native_validate import EntryRejected
from derivls.codes.native import NATIVE_YAML

__all__ = ["EntryChecker", "split_entries"]


def split_entries(text: str) -> list[tuple[int, str]]:
    """(0-based first line, text) of each entry: from a line starting with `- ` to the next (the text
    before the first one, comments and blank lines included, is its own chunk)."""
    chunks: list[tuple[int, str]] = []
    start = 0
    line = 0
    if not text.startswith("- "):
        at = text.find("\n- ")
        if at < 0:
            return [(0, text)]
        chunks.append((0, text[: at + 1]))
        line = text.count("\n", 0, at + 1)
        start = at + 1
    while True:
        at = text.find("\n- ", start)
        if at < 0:
            chunks.append((line, text[start:]))
            return chunks
        chunk = text[start : at + 1]
        chunks.append((line, chunk))
        line += chunk.count("\n")
        start = at + 1


class EntryChecker:
    """Per-entry problems of one native_functions.yaml buffer, cached by entry text (see the module doc)."""

    def __init__(self, path: str, valid_tags: set[str] | None, rules: NativeRules = NEWEST) -> None:
        self.path = path
        self.valid_tags = valid_tags
        self.rules = rules
        self._entry: dict[str, tuple[NativeProblem, ...]] = {}  # entry text → its problems (line 1 = its first)
        self._whole: dict[str, tuple[NativeProblem, ...]] = {}  # entry text → the full index's cross-entry ones
        self._text: str | None = None  # the last text checked, and its entries
        self._chunks: list[tuple[int, str]] = []

    def adopt(self, text: str, rejected: tuple[NativeProblem, ...]) -> None:
        """The problems of a full index of `text` that are not the entry reader's (cross-entry ones), kept
        for each entry while its text stays the same."""
        whole: dict[str, list[NativeProblem]] = {}
        chunks = split_entries(text)
        starts = [first for first, _ in chunks]
        entry_problems = {(p.line, p.message) for first, chunk in chunks for p in self._shifted(chunk, first)}
        for p in rejected:
            if p.path != self.path or (p.line, p.message) in entry_problems:
                continue
            i = _chunk_at(starts, p.line - 1)
            first, chunk = chunks[i]
            whole.setdefault(chunk, []).append(replace(p, line=p.line - first))
        self._whole = {chunk: tuple(ps) for chunk, ps in whole.items()}

    def check(self, text: str) -> list[NativeProblem]:
        """Every problem of the buffer: each entry's (read again only if its text changed) and the
        cross-entry ones of the last full index for the entries that did not change."""
        out: list[NativeProblem] = []
        for first, chunk in self._split(text):
            out.extend(self._shifted(chunk, first))
            for p in self._whole.get(chunk, ()):
                out.append(replace(p, line=p.line + first))
        return out

    def _split(self, text: str) -> list[tuple[int, str]]:
        """split_entries(text), reusing the entries of the last text before and after the edited part (the
        same string objects: their hashes are cached, so the lookups by text cost nothing)."""
        old, old_text = self._chunks, self._text
        if old_text is None or not old:
            chunks = split_entries(text)
        elif old_text == text:
            return old
        else:
            chunks = _respliced(old, old_text, text)
        self._text, self._chunks = text, chunks
        return chunks

    def _shifted(self, chunk: str, first: int) -> list[NativeProblem]:
        found = self._entry.get(chunk)
        if found is None:
            found = self._entry[chunk] = self._read(chunk)
        return [replace(p, line=p.line + first) if first else p for p in found]

    def _read(self, chunk: str) -> tuple[NativeProblem, ...]:
        if not chunk.startswith("- "):
            return ()
        try:
            entries = _read_entries(chunk, self.path)
        except NativeIndexError as e:
            line = e.line or 1
            return (NativeProblem(self.path, line, e.message, None, None, code=NATIVE_YAML, left_out=False),)
        lines = chunk.split("\n")
        found: list[NativeProblem] = []
        for ent in entries:
            for key, dup_line in ent.duplicate_keys:
                col = max(lines[dup_line - 1].find(key), 0) if dup_line <= len(lines) else 0
                found.append(
                    NativeProblem(
                        self.path,
                        dup_line,
                        f"found a duplicate key in the yaml: '{key}' (torchgen's YAML loader rejects it)",
                        None,
                        None,
                        code=NATIVE_YAML,
                        column=col,
                        end_column=col + len(key),
                        left_out=False,
                    )
                )
            try:
                _from_entry(ent, self.valid_tags, self.path, False, self.rules)
            except (UnknownToRules, EntryRejected) as e:
                found.append(_problem(ent, self.path, e, lines, len(lines)))
            except ValueError as e:  # (NativeIndexError included) what the full index reports for the file
                found.append(NativeProblem(self.path, ent.line, str(e), None, None, code=NATIVE_YAML, left_out=False))
        return tuple(found)


def _common_prefix(a: str, b: str) -> int:
    """len of the common prefix (a binary search of slices: about len(a) characters compared in all)."""
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.startswith(a[lo:mid], lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _common_suffix(a: str, b: str) -> int:
    lo, hi = 0, min(len(a), len(b))
    while lo < hi:
        mid = (lo + hi + 1) // 2
        if b.endswith(a[len(a) - mid : len(a) - lo], 0, len(b) - lo):
            lo = mid
        else:
            hi = mid - 1
    return lo


def _respliced(old: list[tuple[int, str]], old_text: str, text: str) -> list[tuple[int, str]]:
    """The entries of `text`, an edit of `old_text` (whose entries are `old`): the unchanged ones before and
    after the edit kept, the part between split again."""
    prefix = _common_prefix(old_text, text)
    suffix = min(_common_suffix(old_text, text), len(text) - prefix, len(old_text) - prefix)
    # entries ending strictly before the first change are kept; so are those starting strictly after the last
    offsets = []
    off = 0
    for _, chunk in old:
        offsets.append(off)
        off += len(chunk)
    # the entry holding the last unchanged character before the change (re-split from its start: text
    # inserted right before an entry's `- ` belongs to the entry before)
    i = max(bisect_right(offsets, prefix - 2) - 1, 0)  # (its `- ` unchanged too)
    keep_from = len(old_text) - suffix + 1  # an old entry starting at or after this keeps its text and place
    j = bisect_left(offsets, keep_from)
    j = max(j, i + 1)
    head = offsets[i]
    old_tail = offsets[j] if j < len(old) else len(old_text)
    tail = old_tail + len(text) - len(old_text)
    middle_line = old[i][0]
    middle = [(middle_line + line, chunk) for line, chunk in split_entries(text[head:tail])] if head < tail else []
    if j < len(old):
        delta = middle_line + text.count("\n", head, tail) - old[j][0]
        rest = [(line + delta, chunk) for line, chunk in old[j:]] if delta else old[j:]
    else:
        rest = []
    return old[:i] + middle + rest


def _chunk_at(starts: list[int], line: int) -> int:
    lo, hi = 0, len(starts)
    while lo < hi:
        mid = (lo + hi) // 2
        if starts[mid] <= line:
            lo = mid + 1
        else:
            hi = mid
    return max(lo - 1, 0)
