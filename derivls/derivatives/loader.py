"""The whole-file pass: entries → infos keyed like torchgen's, op names, duplicates, view_copy infos.

`DocumentAnalyzer.analyse` is incremental: entry results are cached by the
entry's text, so after an edit only the touched entry is parsed and analysed
again; op numbering and cross-entry checks are recomputed from cached facts.
Given the edits that made the new text (`TextEdit`s, code-point offsets), it also
re-splits only the entries they touch: a keystroke costs its entry, not the file.
"""

from __future__ import annotations

import bisect
from collections.abc import Container, Iterator, Sequence
from dataclasses import replace
from functools import cached_property
from itertools import accumulate
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.aten.schema import FunctionSchema
from derivls.base.diagnostics import Diagnostic, Related, warning
from derivls.base.frozen import frozen_dataclass
from derivls.base.limits import (
    MAX_ENTRIES,
    MAX_ENTRY_CHARS,
    bound_chunks,
    bound_diagnostics,
    bound_text,
    read_regular_file,
)
from derivls.base.linebreaks import count_line_breaks
from derivls.codes.loader import DUPLICATE_ENTRY
from derivls.derivatives import profiles
from derivls.derivatives.document import Chunk, Entry, empty_document, parse_chunk, split_entries
from derivls.derivatives.model import DifferentiabilityInfo
from derivls.derivatives.parallel import analyse_chunks
from derivls.derivatives.profiles import Profile
from derivls.derivatives.results import EntryResult

MAX_IN_PLACE = 16  # entries changed in a whole new text that are swapped in one by one (more: a full pass)
TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.derivatives.entrycache import EntryCache

# (start, end, new length): text[start:end] of the text before was replaced by `new length` code points
TextEdit = tuple[int, int, int]


@frozen_dataclass(slots=True, extra_slots=("__dict__",))
class PlacedEntry:
    """An entry's cached result and where it stands now; `ops` are its node names per dispatch key."""

    start_line: int  # 0-based line of the chunk; result spans are relative to it
    result: EntryResult
    ops: tuple[tuple[str, str | None], ...]

    @property
    def entry(self) -> Entry:
        return self.result.entry

    @property
    def line(self) -> int:
        """0-based line of the entry's `- name:`."""
        return self.start_line + self.result.entry.span.line

    @property
    def end_line(self) -> int:
        return self.start_line + self.result.entry.span.end_line

    @property
    def profile(self) -> Profile:
        """The rules this entry was analysed by."""
        return self.result.profile or profiles.TORCHGEN

    def op(self, dispatch_key: str) -> str | None:
        return dict(self.ops).get(dispatch_key)

    @cached_property
    def _named_infos(self) -> tuple[tuple[str, DifferentiabilityInfo], ...]:
        ops = dict(self.ops)
        return tuple(
            (section.dispatch_key, replace(section.info, op=ops.get(section.dispatch_key)))
            for section in self.result.sections
            if section.info is not None
        )

    def infos(self) -> Iterator[tuple[str, DifferentiabilityInfo]]:
        """(dispatch key, info with its op name), in the entry's order; built once, on demand."""
        return iter(self._named_infos)

    @property
    def diagnostics(self) -> list[Diagnostic]:
        return [d.shifted(self.start_line) for d in self.result.diagnostics]


@frozen_dataclass
class ViewCopyInfo:
    """A `{view}_copy` info torchgen derives from a view op's entry."""

    source: PlacedEntry
    dispatch_key: str
    info: DifferentiabilityInfo


@frozen_dataclass
class DocumentAnalysis:
    """One version of the file. What an edit needs (diagnostics, op names) is computed at once;
    the torchgen-shaped `infos` only when asked for (dump, codegen), so keystrokes stay cheap."""

    entries: tuple[PlacedEntry, ...]
    diagnostics: tuple[Diagnostic, ...]  # absolute positions, file order
    used_dispatch_keys: frozenset[str]
    index: NativeIndex | None
    profile: Profile  # the rules it was computed with

    @cached_property
    def _owners(self) -> dict[FunctionSchema, PlacedEntry]:
        """canonical schema → the entry torchgen keeps for it (the last), in first-seen order."""
        owners: dict[FunctionSchema, PlacedEntry] = {}
        for entry in self.entries:
            if entry.result.canonical is not None:
                owners[entry.result.canonical.func] = entry
        return owners

    @cached_property
    def view_copies(self) -> tuple[ViewCopyInfo, ...]:
        if self.index is None:
            return ()
        return tuple(_view_copy_infos(self._owners, self.index))

    @cached_property
    def infos(self) -> dict[FunctionSchema, dict[str, DifferentiabilityInfo]]:
        """torchgen's `load_derivatives` result: canonical schema → {dispatch key: info}."""
        infos = {schema: dict(entry.infos()) for schema, entry in self._owners.items()}
        for copy in self.view_copies:
            infos.setdefault(copy.info.func.func, {})[copy.dispatch_key] = copy.info
        return infos

    @cached_property
    def info_lines(self) -> dict[FunctionSchema, int | None]:
        """0-based `- name:` line of each info's entry; None for generated view_copy infos."""
        lines: dict[FunctionSchema, int | None] = {schema: entry.line for schema, entry in self._owners.items()}
        for copy in self.view_copies:
            lines[copy.info.func.func] = None
        return lines

    @cached_property
    def entry_lines(self) -> list[int]:
        """The 0-based `- name:` line of each entry, in order (not to be changed: the next version
        of the file may share it when no line moved)."""
        return [e.line for e in self.entries]

    def entry_at(self, line: int) -> PlacedEntry | None:
        """The entry whose lines (up to the next entry) hold `line` (0-based)."""
        i = bisect.bisect_right(self.entry_lines, line) - 1
        return self.entries[i] if i >= 0 else None

    def entries_from(self, line: int) -> int:
        """The index of the first entry whose lines may reach `line` or later (the one holding it)."""
        return max(bisect.bisect_left(self.entry_lines, line) - 1, 0)

    @property
    def has_errors(self) -> bool:
        return any(d.severity == 1 for d in self.diagnostics)


_ChunkResult = tuple[tuple[EntryResult, ...], tuple[Diagnostic, ...]]


class _Known:
    """The chunk texts whose results need no analysis: in the analyzer's memory or in its entry cache
    (the cold pass's second process is only worth starting for the others)."""

    def __init__(self, memory: Container[str], store: EntryCache) -> None:
        self.memory, self.store = memory, store

    def __contains__(self, text: object) -> bool:
        return text in self.memory or (isinstance(text, str) and self.store.holds(text))


class DocumentAnalyzer:
    """Analyses successive versions of one derivatives.yaml against one NativeIndex."""

    def __init__(
        self,
        index: NativeIndex | None,
        native_path: str | None = None,
        profile: Profile | str = profiles.TORCHGEN,
        store: EntryCache | None = None,
    ) -> None:
        """`profile`: a Profile, or the name of one (profiles.named). `store`: chunk results kept on disk
        between processes (derivatives/entrycache.py), asked before a chunk is analysed."""
        self.index = index
        self.store = store
        self.native_path = native_path
        self.profile = profiles.named(profile) if isinstance(profile, str) else profile
        self._analyzer = self.profile.entry_analyzer(index, native_path) if index is not None else None
        self._cache: dict[str, _ChunkResult] = {}
        self._placed: dict[tuple[int, int], PlacedEntry] = {}
        self._last: tuple[list[Chunk], DocumentAnalysis] | None = None
        # Facts of the last analysis the edit paths reuse (set by `analyse` and `_full_pass`):
        self._ends: list[int] = []  # where each chunk ends (plus `_shift` from `_shifted` on: edits move them)
        self._shifted = 0
        self._shift = 0
        self._lines = 0  # what the start lines of the chunks from `_shifted` on lack (edits that moved lines)
        self._length = -1  # of the text analysed; -1 when something was cut or refused (no edit path)
        self._first_entry: list[int] = []  # per chunk: the position in `entries` of its first entry
        self._uses: dict[str, int] = {}  # chunk text -> how many chunks have it
        self._owners: Container[object] = ()  # canonical functions that have an entry

    def analyse(self, text: str, edits: Sequence[TextEdit] | None = None) -> DocumentAnalysis:
        """`edits`, if given, made `text` from the text analysed last (in order); they only make it faster."""
        try:
            return self._analyse(text, edits)
        except BaseException:
            self._last, self._length = None, -1  # the edit paths' state may be half updated: start afresh
            raise

    def _analyse(self, text: str, edits: Sequence[TextEdit] | None) -> DocumentAnalysis:
        located = self._resplit(text, edits) if edits is not None else None
        if located is not None:
            chunks, changed, before, moved = located
            refused: list[Diagnostic] = []
            analysis = self._edit_in_place(chunks, changed, before, moved) if changed is not None else None
        else:
            length = len(text)
            text, too_many = bound_text(text)  # limits: at most MAX_ENTRIES entries, no entry over MAX_ENTRY_CHARS
            chunks, refused = bound_chunks(split_entries(text))
            refused += too_many
            self._settle_lines()  # (the previous chunks are compared with these)
            analysis = self._edit_in_place(chunks)
        if analysis is None:
            self._settle_lines()  # the pass reads every chunk's start line
            analysis = self._full_pass(chunks)
        self._last = (chunks, analysis)
        if located is None:
            self._ends = list(accumulate(len(c.text) for c in chunks))
            self._shifted, self._shift, self._lines = len(chunks), 0, 0
            self._length = -1 if refused else length
        else:
            self._length = len(text)
        diagnostics = bound_diagnostics(analysis.diagnostics, refused)  # refusals; at most MAX_DIAGNOSTICS
        if diagnostics is not analysis.diagnostics:
            analysis = DocumentAnalysis(
                analysis.entries, diagnostics, analysis.used_dispatch_keys, analysis.index, analysis.profile
            )
        return analysis

    def _chunk_result(self, chunk: Chunk) -> _ChunkResult:
        hit = self._cache.get(chunk.text)
        if hit is None and self.store is not None:
            hit = self.store.get(chunk.text)
        if hit is None:
            entries, diagnostics = parse_chunk(chunk.text)
            hit = (tuple(self._analyse_entry(e) for e in entries), diagnostics)
        return hit

    def _full_pass(self, chunks: list[Chunk]) -> DocumentAnalysis:
        cache: dict[str, _ChunkResult] = {}
        placed: list[tuple[int, EntryResult]] = []
        loose: list[Diagnostic] = []
        uses: dict[str, int] = {}
        first_entry: list[int] = []
        known = self._cache if self.store is None else _Known(self._cache, self.store)
        forked = analyse_chunks(chunks, self._chunk_result, known, self.index, self.profile)  # both cores
        for chunk in chunks:
            hit = cache.get(chunk.text) or forked.get(chunk.text) or self._chunk_result(chunk)
            cache[chunk.text] = hit
            uses[chunk.text] = uses.get(chunk.text, 0) + 1
            first_entry.append(len(placed))
            results, diagnostics = hit
            if diagnostics:
                loose.extend(d.shifted(chunk.start_line) for d in diagnostics)
            for result in results:
                placed.append((chunk.start_line, result))
        if not placed and not loose:
            empty = empty_document(chunks)  # torchgen fails on a file without a YAML document
            if empty is not None:
                loose.append(empty)
        self._cache = cache  # only the current chunks stay cached: memory follows the file
        self._uses = uses
        self._first_entry = first_entry
        analysis = self._file_pass(placed, loose)
        if self.store is not None:
            self.store.passed(cache)  # written back (with the codegen-stage diagnostics of the file pass)
        return analysis

    def _resplit(self, text: str, edits: Sequence[TextEdit]) -> tuple[list[Chunk], list[int] | None, Chunk, int] | None:
        """The chunks of `text`, updated in place: only those the edits touch are split again. Also the
        indexes of the chunks whose text changed (None when chunks came or went), the first one's
        previous version, and how many lines the edits added (negative: removed) before the chunks
        after them. None: split the whole text (nothing was changed)."""
        if self._last is None or self._length < 0:
            return None
        chunks = self._last[0]
        old_length = length = self._length
        prefix = suffix = old_length  # untouched at the start / end of both texts
        for start, end, new_length in edits:
            if not 0 <= start <= end <= length or new_length < 0:
                return None
            prefix = min(prefix, start)
            suffix = min(suffix, length - end)
            length += new_length - (end - start)
        if length != len(text) or not chunks:
            return None
        if prefix == old_length == length:
            return chunks, [], chunks[0], 0
        suffix = min(suffix, old_length - prefix, length - prefix)
        # An entry starts at `-` after a line break, before a blank: the edit moves the boundaries at
        # most one character before and after it; the chunks holding those characters are split again.
        first = self._chunk_at(max(prefix - 2, 0))
        last = self._chunk_at(min(old_length - suffix + 1, old_length - 1))
        begin = self._end(first - 1)
        end = self._end(last) + length - old_length
        olds = [self._placed_chunk(chunks, k) for k in range(first, last + 1)]  # with their start lines
        base = olds[0].start_line
        middle = [Chunk(base + c.start_line, c.text, c.is_entry) for c in split_entries(text[begin:end])]
        if (
            any(len(c.text) > MAX_ENTRY_CHARS for c in middle)
            or len(chunks) + len(middle) - (last - first) > MAX_ENTRIES
        ):
            return None  # bound_chunks or bound_text would refuse some: the whole path says how
        old_lines = olds[-1].start_line + count_line_breaks(olds[-1].text) - base
        moved = count_line_breaks(text, begin, end) - old_lines
        # chunk ends: those at or after `_shifted` lack `_shift`, and their start lines `_lines`; make that
        # true again past the new chunks (a keystroke in one place costs no pass over the chunks after it)
        ends, shifted, grown, lines = self._ends, self._shifted, length - old_length, self._lines
        for k in range(shifted, first):
            ends[k] += self._shift
            if lines:
                c = chunks[k]
                chunks[k] = Chunk(c.start_line + lines, c.text, c.is_entry)
        for k in range(last + 1, shifted):
            ends[k] -= self._shift
            if lines:
                c = chunks[k]
                chunks[k] = Chunk(c.start_line - lines, c.text, c.is_entry)
        self._shift += grown
        self._lines += moved
        ends[first : last + 1] = accumulate((len(c.text) for c in middle), initial=begin)
        del ends[first]  # accumulate's `initial`
        self._shifted = first + len(middle)
        before = olds[0]
        same = len(middle) == last - first + 1
        changed = [first + i for i, c in enumerate(middle) if c.text != olds[i].text] if same else None
        if changed:
            before = olds[changed[0] - first]
        chunks[first : last + 1] = middle
        return chunks, changed, before, moved

    def _placed_chunk(self, chunks: list[Chunk], i: int) -> Chunk:
        """Chunk `i` of the last analysis with its start line (one at or after `_shifted` lacks `_lines`)."""
        c = chunks[i]
        if i < self._shifted or not self._lines:
            return c
        return Chunk(c.start_line + self._lines, c.text, c.is_entry)

    def _settle_lines(self) -> None:
        """Every chunk of the last analysis gets its start line (before a pass that reads them all)."""
        if self._last is not None and self._lines:
            chunks, lines = self._last[0], self._lines
            for k in range(self._shifted, len(chunks)):
                c = chunks[k]
                chunks[k] = Chunk(c.start_line + lines, c.text, c.is_entry)
        self._lines = 0

    def _chunk_at(self, offset: int) -> int:
        """The index of the chunk holding `offset` (of the text analysed last)."""
        ends, shifted = self._ends, self._shifted
        i = bisect.bisect_right(ends, offset, 0, shifted)
        if i == shifted:
            i = bisect.bisect_right(ends, offset - self._shift, shifted)
        return min(i, len(ends) - 1)

    def _end(self, i: int) -> int:
        """Where chunk `i` ends (0 for i = -1)."""
        if i < 0:
            return 0
        return self._ends[i] + (self._shift if i >= self._shifted else 0)

    def _edit_in_place(
        self, chunks: list[Chunk], changed: list[int] | None = None, before: Chunk | None = None, moved: int = 0
    ) -> DocumentAnalysis | None:
        """The common keystroke: one entry's text changed, and nothing the file pass derives from that
        entry (node names, canonical function, dispatch keys) changed. Then the previous analysis is
        reused with that one entry swapped: no pass over all entries. `changed`: the indexes of the
        chunks that changed, if known, and `before`: the first one's previous version (else the chunks
        are compared with the last analysis's); `moved`: the lines the edit added to that entry (Enter,
        a deleted line), by which the later entries and their diagnostics move."""
        if self._last is None:
            return None
        old_chunks, old = self._last
        if changed is None:  # a whole new text (a check in the daemon, a file changed on disk)
            return self._entries_in_place(old_chunks, chunks)
        if not changed:
            return old
        if len(changed) != 1 or before is None:
            return None
        after = chunks[changed[0]]
        # The first line past the chunk before the edit: the next chunk's `- name:` line (a chunk ends with
        # its line break), from which on the later diagnostics move by `moved`. The last chunk of a file
        # without a final line break has its last line as its own.
        past = before.start_line + count_line_breaks(before.text) + (0 if before.text.endswith(("\n", "\r")) else 1)
        if before.start_line != after.start_line or after.start_line + count_line_breaks(after.text) != (
            before.start_line + count_line_breaks(before.text) + moved
        ):
            return None
        if moved and any(d.code == DUPLICATE_ENTRY for d in old.diagnostics):
            return None  # its related line (the other entry's) would move too: the file pass says it again
        previous = self._cache.get(before.text)
        if previous is None:
            return None
        (old_results, old_loose), (new_results, new_loose) = previous, self._chunk_result(after)
        if old_loose or new_loose or len(old_results) != 1 or len(new_results) != 1:
            return None
        old_result, new_result = old_results[0], new_results[0]
        if (
            new_result.op_plan != old_result.op_plan
            or new_result.canonical is not old_result.canonical
            or new_result.dispatch_keys != old_result.dispatch_keys
            or new_result.entry.span.line != old_result.entry.span.line
        ):
            return None
        position = self._first_entry[changed[0]]
        old_entry = old.entries[position]
        if old_entry.result is not old_result:
            return None
        first, last = after.start_line, after.start_line + after.text.count("\n")
        if any(d.code == DUPLICATE_ENTRY and first <= d.span.line <= last for d in old.diagnostics):
            return None  # its warning points at this entry's name, which may have moved
        entry = PlacedEntry(after.start_line, new_result, old_entry.ops)
        owned = self._owners  # the same: the entry's canonical function did not change
        if self._codegen([old_entry], owned):
            return None  # its codegen-stage diagnostics may go away: the file pass redoes them
        fresh = self._codegen([entry], owned)
        diagnostics = list(old.diagnostics)
        if old_result.diagnostics or new_result.diagnostics or fresh or moved:
            stale = set(old_entry.diagnostics)
            diagnostics = [d if d.span.line < past else d.shifted(moved) for d in diagnostics if d not in stale]
            diagnostics += entry.diagnostics + fresh
            diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
        self._uses[after.text] = self._uses.get(after.text, 0) + 1
        self._uses[before.text] -= 1
        if not self._uses[before.text]:  # identical entries share a cache slot
            del self._uses[before.text]
            del self._cache[before.text]
        self._cache[after.text] = (new_results, new_loose)
        self._placed.pop((old_entry.start_line, id(old_result)), None)
        self._placed[(entry.start_line, id(new_result))] = entry
        later = old.entries[position + 1 :]
        if moved:  # (an entry's place is its start line: the later ones are placed again, O(entries) but cheap)
            later = tuple(PlacedEntry(e.start_line + moved, e.result, e.ops) for e in later)
        entries = old.entries[:position] + (entry,) + later
        analysis = DocumentAnalysis(entries, tuple(diagnostics), old.used_dispatch_keys, self.index, self.profile)
        if not moved and "entry_lines" in old.__dict__:  # the same lines (requests after each edit need them)
            analysis.__dict__["entry_lines"] = old.__dict__["entry_lines"]
        return analysis

    def _entries_in_place(self, old_chunks: list[Chunk], chunks: list[Chunk]) -> DocumentAnalysis | None:
        """A whole new text whose entries are the last analysis's but for a few whose text changed (lines
        added or removed in them move the later ones): one in-place step per changed entry, in order; None
        (a full pass) when entries came or went, or more than MAX_IN_PLACE changed, or a step cannot be made."""
        assert self._last is not None
        if len(old_chunks) != len(chunks):
            return None
        changed = [i for i, (a, b) in enumerate(zip(old_chunks, chunks)) if a.text != b.text]
        if len(changed) > MAX_IN_PLACE:
            return None
        analysis, shift, steps = self._last[1], 0, iter(changed)
        step = next(steps, None)
        for i, (a, b) in enumerate(zip(old_chunks, chunks)):
            if b.start_line != a.start_line + shift:
                return None
            if i == step:
                moved = count_line_breaks(b.text) - count_line_breaks(a.text)
                before = Chunk(a.start_line + shift, a.text, a.is_entry)  # where it is after the steps before
                made = self._edit_in_place(chunks, [i], before, moved)
                if made is None:
                    return None  # (the steps made so far are undone by the full pass)
                analysis, shift, step = made, shift + moved, next(steps, None)
                self._last = (chunks, analysis)
        return analysis

    def _codegen(
        self, entries: list[PlacedEntry] | tuple[PlacedEntry, ...], owned: Container[object]
    ) -> list[Diagnostic]:
        if not self.profile.codegen_stage_checks:
            return []  # torchgen 2.x's autograd codegen; the 2021 loader had other rules
        from derivls.derivatives.formulas.entry_formulas import codegen_diagnostics

        return [d.shifted(e.start_line) for e in entries for d in codegen_diagnostics(e.result, self.index, owned)]

    def _analyse_entry(self, entry: Entry) -> EntryResult:
        if self._analyzer is None:
            return EntryResult(entry, None, None, None, (), entry.diagnostics, profile=self.profile)
        return self._analyzer.analyse(entry)

    def _file_pass(self, placed: list[tuple[int, EntryResult]], loose: list[Diagnostic]) -> DocumentAnalysis:
        entries: list[PlacedEntry] = []
        seen: dict[FunctionSchema, PlacedEntry] = {}
        used_keys: set[str] = set()
        diagnostics = list(loose)
        reused: dict[tuple[int, int], PlacedEntry] = {}
        for (start_line, result), ops in zip(placed, self.profile.number_ops([result for _, result in placed])):
            # An unchanged entry at an unchanged place keeps its PlacedEntry, and so its built infos.
            key = (start_line, id(result))
            ops = tuple(ops)
            entry = self._placed.get(key)
            if entry is None or entry.result is not result or entry.ops != ops:
                entry = PlacedEntry(start_line, result, ops)
            reused[key] = entry
            entries.append(entry)
            if result.diagnostics:
                diagnostics.extend(entry.diagnostics)
            if result.canonical is None:
                continue
            used_keys.update(result.dispatch_keys)
            earlier = seen.get(result.canonical.func)
            if earlier is not None:
                diagnostics.append(_duplicate(entry, earlier))
            seen[result.canonical.func] = entry
        self._placed = reused
        self._owners = seen
        diagnostics.extend(self._codegen(entries, seen))  # issue 10: torchgen's codegen-stage checks
        diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
        return DocumentAnalysis(tuple(entries), tuple(diagnostics), frozenset(used_keys), self.index, self.profile)


def _duplicate(entry: PlacedEntry, earlier: PlacedEntry) -> Diagnostic:
    name = entry.entry.name
    canonical = entry.result.canonical
    assert name is not None and canonical is not None  # only entries with a canonical function are compared
    return warning(
        name.span.shifted(entry.start_line),
        DUPLICATE_ENTRY,
        f"Another entry (line {earlier.line + 1}) is for the same function {canonical.func}; "
        "only one can take effect (PyTorch 2.x's loader silently keeps this later one). Merge them.",
        related=(Related(None, earlier.line, "the other entry for this function"),),
    )


def _view_copy_infos(owners: dict[FunctionSchema, PlacedEntry], index: NativeIndex) -> list[ViewCopyInfo]:
    """torchgen's add_view_copy_derivatives: `{view}_copy` reuses its view's formulas."""
    groups = {g.view.func.name: g for g in index.view_groups}
    result: list[ViewCopyInfo] = []
    for entry in owners.values():
        copies: list[ViewCopyInfo] = []
        copy_schema = None
        for key, info in entry.infos():
            group = groups.get(info.func.func.name)
            if group is None or group.view_copy is None:
                break
            head, *rest = info.name.split(".", maxsplit=2)
            copy = replace(
                info,
                name=f"{head}_copy." + ".".join(rest),
                func=group.view_copy,
                op=None if info.op is None else f"{info.op}_copy",
            )
            copy_schema = group.view_copy.func
            copies.append(ViewCopyInfo(entry, key, copy))
        if copies and copy_schema not in owners:  # a hand-written entry for the copy wins
            result.extend(copies)
    return result


def load_derivatives(
    derivatives_path: str | Path,
    native_path: str | Path,
    tags_path: str | Path | None = None,
    torch_version: str | None = None,
) -> tuple[dict[FunctionSchema, dict[str, DifferentiabilityInfo]], set[str]]:
    """torchgen's `load_derivatives`, for callers that want its return shape (raises on error diagnostics).

    Follows the release `torch_version` names, else the one the files' location shows (see releases.detect)."""
    from derivls.derivatives.releases import detect

    profile = profiles.TORCHGEN
    rules = detect(torch_version, Path(derivatives_path), Path(native_path)).rules.native
    index = NativeIndex.load(
        str(native_path), str(tags_path) if tags_path else None, legacy=profile.native_2021_grammar, rules=rules
    )
    text = read_regular_file(derivatives_path, "derivatives.yaml")
    analysis = DocumentAnalyzer(index, str(native_path), profile).analyse(text)
    errors = [d for d in analysis.diagnostics if d.severity == 1]
    if errors:
        first = errors[0]
        raise ValueError(f"{derivatives_path}:{first.span.line + 1}:{first.span.column + 1}: {first.message}")
    return analysis.infos, set(analysis.used_dispatch_keys)
