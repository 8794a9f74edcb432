"""Per-entry analysis results kept on disk between processes (issue 13, item 2).

A process that opens a derivatives.yaml whose entries were analysed before (by `derivls check` or a
server; the same file or one that differs in a few entries, as after `git pull`) reads those
entries' results instead of analysing them again. `DocumentAnalyzer` asks its `EntryCache` for a
chunk's result before parsing and analysing it (`get`), and hands it the chunks of each full pass
(`passed`), which it writes back.

What a result depends on, all in the key (`context_key`), so a change of any of them is a miss:
- the chunk's text (each chunk is looked up by a digest of it);
- the NativeIndex: its own cache key (native_functions.yaml's and tags.yaml's texts and paths, the
  grammar and the release's native rules; project.index_native);
- the Profile (its class, name, release and reason) and the release rules the analyzer follows;
- the C++ sources the formula checks read (FunctionsManual.h, TensorBody.h, TensorBase.h, the
  Functions.cpp/.h templates: formulas/headers.py): their paths and contents;
- the derivls code and version and the Python version (derivls.base.diskcache salts every key with them).

Results point at objects the NativeIndex owns (NativeFunction, FunctionSchema, the arguments in
bindings) and at the analyzer's Profile, and the loader compares them by identity. They are
pickled as references (derivatives/indexrefs.py: a function by its schema string, an argument by
its position in that function's schema) and resolved against the live index when read, so a result
from disk shares those objects with the index, as a freshly computed one does.

Storage: one diskcache value per context key, {chunk digest: pickled record}; read once (on the
first lookup), each record unpickled when its chunk is asked for; written back with the chunks of
the current file only (bounded by it), atomically, last writer wins. A record also holds the
entry's codegen-stage diagnostics with the set of functions they were computed for (`mine`:
formulas/entry_formulas.py), so a file pass over unchanged entries does not run those checks again either,
and the entry's overload group (formulas/overloads.py), which that `mine` set is taken from.
"""

from __future__ import annotations

import _thread
from collections.abc import Callable, Generator, Iterator, Mapping
from pathlib import Path

from derivls.aten.native import NativeIndex
from derivls.base.diskcache import DiskCache, blake2b, content_key
from derivls.base.lazylog import info
from derivls.base.writebehind import defer
from derivls.derivatives.indexrefs import IndexRefs, Uncacheable

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any

    from derivls.base.diagnostics import Diagnostic
    from derivls.derivatives.profiles.base import Profile
    from derivls.derivatives.results import EntryResult

    # (the entries' results, the chunk's own diagnostics): DocumentAnalyzer's _ChunkResult
    ChunkResult = tuple[tuple[EntryResult, ...], tuple[Diagnostic, ...]]


FORMAT = 2  # of the stored value; part of the key (2: records hold overload groups)
SAVE_DELAY = 1.0  # seconds a background save waits (the server: after its first diagnostics are out)
MAX_CHUNKS = 10_000  # a file of more entries (the real one has 690) is not kept: its records would be 30+ MB
MAX_BYTES = 32 * 1024 * 1024  # of the records of one value (the real file's: 2 MB); entries past it are not kept

# Who runs background saves: None, a thread after SAVE_DELAY; else a callable handed each cache with a
# save to do (its `saving()` steps), which answers False when it cannot take it (the thread then).
# The server's (server/saving.py) runs the steps on its event loop while no one types: pickling the
# 10x file's 6,800 records takes ~2 s, and in a thread it held the GIL against every keystroke.
_runner: Callable[[EntryCache], bool] | None = None


def run_background_saves_with(runner: Callable[[EntryCache], bool] | None) -> None:
    """Background saves go to `runner` from now on (None: a thread each, as before)."""
    global _runner
    _runner = runner


def header_sources_key(native_path: str | None) -> list[str | bytes | None]:
    """The paths and contents of every file formulas/headers.build_header_index reads for an analyzer
    of `native_path` (header_index_for(index, native_path): sources found from native_functions.yaml)."""
    from derivls.derivatives.formulas.sources import find_sources

    sources = find_sources(None, native_path)
    paths: list[Path | None] = [sources.functions_manual, *sources.tensor_body[:1], sources.tensor_base]
    paths += sources.templates
    parts: list[str | bytes | None] = [str(len(paths))]
    for path in paths:
        parts.append(None if path is None else str(path))
        parts.append(_read_bytes(path))
    return parts


def _read_bytes(path: Path | None) -> bytes | None:
    if path is None:
        return None
    try:
        return path.read_bytes()
    except OSError:
        return None


def context_key(index_key: str, index: NativeIndex, native_path: str | None, profile: Profile) -> str:
    """The key of everything besides its text an entry's result depends on (see the module doc)."""
    from derivls.derivatives.releases import rules_of

    release = rules_of(index)
    return content_key(
        "entries",
        str(FORMAT),
        index_key,
        native_path,
        index.path,
        f"{type(profile).__module__}.{type(profile).__qualname__}",
        profile.describe(),
        repr(profile._key()),
        str(profile.codegen_stage_checks),
        release.label,
        index.rules.label,
        *header_sources_key(native_path),
    )


def digest(text: str) -> bytes:
    return blake2b(text.encode("utf-8", "surrogatepass"), digest_size=16).digest()


# one chunk's record: its result, and per entry result the codegen-stage diagnostics with the
# schema strings of the `mine` set they were computed for (None: not computed), and the schema strings
# of the entry's overload group (formulas/overloads.py; None: not known), which the `mine` set of the
# next file pass is taken from: a check after an edit does not work out 690 groups again
_Codegen = tuple[tuple[str, ...], tuple["Diagnostic", ...], tuple[str, ...] | None] | None


class EntryCache:
    """The chunk results of one analyzer context, read from and written to a DiskCache.

    `get(text)`: the stored result of a chunk, or None. `passed(chunks)`: after a full pass, with
    the current chunks' results; writes them back when anything was computed (at once, or with
    `background=True` later: by the runner run_background_saves_with() set, else in a thread after
    SAVE_DELAY seconds). `hits`/`misses` count lookups."""

    def __init__(
        self,
        disk: DiskCache,
        index_key: str,
        index: NativeIndex,
        native_path: str | None,
        profile: Profile,
        *,
        background: bool = False,
    ) -> None:
        self.disk = disk
        self.index_key = index_key
        self.native_path = native_path
        self.background = background
        self.refs = IndexRefs(index, profile)
        self.hits = 0
        self.misses = 0
        self.saves = 0
        self._key: str | None = None
        self._stored: dict[bytes, bytes] | None = None  # digest → record, as read (or last written)
        # id(chunk result) → (it, its digest, the `mine` sets its codegen diagnostics were read for)
        self._served: dict[int, tuple[ChunkResult, bytes, tuple[frozenset[object] | None, ...]]] = {}
        self._dirty = False
        self._lock = _thread.allocate_lock()
        self._pending: dict[str, ChunkResult] | None = None  # what a background save will write
        # background (the server): after its first full pass the stored records are let go (memory) and
        # later lookups, the edit path's, do not read the disk; a later save reads them again
        self._released = False

    @property
    def key(self) -> str:
        if self._key is None:
            self._key = context_key(self.index_key, self.refs.index, self.native_path, self.refs.profile)
        return self._key

    def _load(self, wait: bool = True) -> dict[bytes, bytes]:
        """The stored records (read once). `wait=False`: not waiting for a detached writer at work in
        the cache folder (a save on the server's event loop must not block it for seconds)."""
        if self._stored is None:
            value = self.disk.get(self.key, waited=not wait)
            ok = isinstance(value, dict) and all(
                isinstance(k, bytes) and isinstance(v, bytes) for k, v in value.items()
            )
            self._stored = value if ok else {}  # type: ignore[assignment]
        assert self._stored is not None
        return self._stored

    def holds(self, text: str) -> bool:
        """Whether a record for this chunk is stored (a `get` would likely hit), without reading it."""
        return self.disk.enabled and not self._released and digest(text) in self._load()

    def get(self, text: str) -> ChunkResult | None:
        if not self.disk.enabled:
            return None
        if self._released:
            self.misses += 1
            self._dirty = True
            return None
        stored = self._load()
        d = digest(text)
        data = stored.get(d)
        if data is None:
            self.misses += 1
            self._dirty = True
            return None
        try:
            record: Any = self.refs.loads(data)
            result, codegen = record
            results, _ = result
            if not isinstance(results, tuple) or len(codegen) != len(results):
                raise ValueError("not a chunk record")
            mines = tuple(self._seed(r, c) for r, c in zip(results, codegen))
        except Exception as e:  # unreadable, or from an index it does not fit: analyse the chunk
            info(__name__, "entry cache: dropping a record: %r", e)
            stored.pop(d, None)
            self.misses += 1
            self._dirty = True
            return None
        self.hits += 1
        self._served[id(result)] = (result, d, mines)
        return result  # type: ignore[no-any-return]

    def _seed(self, result: EntryResult, codegen: _Codegen) -> frozenset[object] | None:
        """Hand formulas/entry_formulas.py the codegen-stage diagnostics read with the result."""
        if codegen is None:
            return None
        from derivls.derivatives.formulas.entry_formulas import remember_codegen

        schemas, found, group = codegen
        by_schema = self.refs.index.by_schema
        mine = frozenset(by_schema[s].func for s in schemas)
        remember_codegen(result, mine, list(found))
        if group is not None and result.canonical is not None:
            from derivls.derivatives.formulas.overloads import remember_group

            remember_group(result.canonical, self.refs.index, [by_schema[s] for s in group])
        return mine

    def passed(self, chunks: Mapping[str, ChunkResult]) -> None:
        """After a full pass: write the current chunks back if anything in them was computed."""
        if not self.disk.enabled:
            return
        if len(chunks) > MAX_CHUNKS or (not self._dirty and not any(self._codegen_changed(r) for r in chunks.values())):
            self._release()
            return
        snapshot = dict(chunks)
        self._dirty = False
        if not self.background:
            if not defer(self.disk.directory, lambda: self.save(snapshot)):  # a one-shot command writes it last
                self.save(snapshot)
            return
        with self._lock:
            scheduled = self._pending is not None
            self._pending = snapshot  # a newer pass replaces what a pending save would write
        if not scheduled:
            runner = _runner
            if runner is None or not runner(self):
                import threading  # only a server saves in the background

                timer = threading.Timer(SAVE_DELAY, self.flush)
                timer.daemon = True
                timer.start()

    def flush(self) -> None:
        """Write what a background save is waiting to write, now (the timer, tests, shutdown)."""
        for _ in self.saving():
            pass

    def saving(self) -> Iterator[None]:
        """`flush()` in steps: each `next()` pickles one chunk's record (~0.3 ms), or reads or writes the
        stored value; nothing changes the cache's state until the last step."""
        with self._lock:
            pending, self._pending = self._pending, None
        if pending is not None:
            yield from self._saving(pending)

    def _reused(self, result: ChunkResult) -> bytes | None:
        """The digest of a chunk result read from disk whose record is still what it would be written as."""
        served = self._served.get(id(result))
        if served is None or served[0] is not result or self._codegen_changed(result):
            return None
        return served[1]

    def _codegen_changed(self, result: ChunkResult) -> bool:
        served = self._served.get(id(result))
        if served is None or served[0] is not result:
            return True
        from derivls.derivatives.formulas.entry_formulas import remembered_codegen

        for r, mine in zip(result[0], served[2]):
            now = remembered_codegen(r)
            # forgotten (entry_formulas's memo was cleared): the stored record is still right for the `mine` it names
            if now is not None and now[0] != mine:
                return True
        return False

    def save(self, chunks: Mapping[str, ChunkResult]) -> bool:
        """Write the records of `chunks` (reusing the stored bytes of unchanged ones); True if written."""
        steps = self._saving(chunks)
        while True:
            try:
                next(steps)
            except StopIteration as done:
                return bool(done.value)

    def _saving(self, chunks: Mapping[str, ChunkResult]) -> Generator[None, None, bool]:
        """`save(chunks)`, one step per record pickled; returns (StopIteration.value) whether it was written."""
        from derivls.derivatives.formulas.entry_formulas import remembered_codegen

        stored = self._load(wait=False)  # missed meanwhile: every record is pickled again (last writer wins)
        yield
        records: dict[bytes, bytes] = {}
        served: dict[int, tuple[ChunkResult, bytes, tuple[frozenset[object] | None, ...]]] = {}
        size = 0
        for text, result in chunks.items():
            if size > MAX_BYTES:
                break  # a pathological file: what is past the bound is analysed again next time
            d = self._reused(result)
            if d is not None and d in stored:
                records[d] = stored[d]
                size += len(records[d])
                served[id(result)] = self._served[id(result)]
                continue
            try:
                remembered = [remembered_codegen(r) for r in result[0]]
                codegen = tuple(self._codegen_record(r, m) for r, m in zip(result[0], remembered))
                d = digest(text)
                records[d] = self.refs.dumps((result, codegen))
                size += len(records[d])
            except Exception as e:  # Uncacheable, or a result being changed by another thread: not kept
                info(__name__, "entry cache: not keeping a chunk: %r", e)
                continue
            served[id(result)] = (result, d, tuple(m[0] if m is not None else None for m in remembered))
            yield
        yield
        with self._lock:
            self._stored = records
            self._served = served  # what is written now counts as read: memory follows the file
            self.saves += 1
        written = yield from self.disk.storing(self.key, records)  # a step per MB written
        self._release()
        return written

    def _release(self) -> None:
        if self.background:
            with self._lock:
                self._stored = None
                self._released = True

    def _codegen_record(
        self, result: EntryResult, remembered: tuple[frozenset[object], list[Diagnostic]] | None
    ) -> _Codegen:
        if remembered is None:
            return None
        from derivls.derivatives.formulas.overloads import remembered_group

        mine, found = remembered
        schemas = sorted(self.refs.schema_string(schema) for schema in mine)  # type: ignore[arg-type]
        group = remembered_group(result.canonical, self.refs.index) if result.canonical is not None else None
        return tuple(schemas), tuple(found), None if group is None else tuple(self.refs.schema_of(f) for f in group)


__all__ = ["EntryCache", "Uncacheable", "context_key", "digest", "header_sources_key"]
