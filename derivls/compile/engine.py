"""Generate, compile in batches, map each compiler error back to the formula it comes from.

`compile_units(units, ...)` is the whole engine: no LSP, no printing. Batches run as compiler
subprocesses, at most `jobs` at a time, each under `nice` and bounded (derivls.base.bounded: wall clock,
CPU, address space, its own process group, TMPDIR in a folder of ours); `cancel` (a threading.Event)
stops them. A batch that hits a bound is compiled again unit by unit, so the bound is reported on the
one entry that needs it (`compile-limit`).
"""

from __future__ import annotations

import os
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from derivls.base.bounded import GB, TIME, Bounded, Limits, env_limits, scratch_folder, spawn
from derivls.base.children import exit_if_orphaned
from derivls.base.diagnostics import Diagnostic, Related, Severity
from derivls.codes.compile import COMPILE_ERROR, COMPILE_LIMIT
from derivls.compile import messages
from derivls.compile.backward import backward_source
from derivls.compile.file_templates import Templates
from derivls.compile.forward import forward_source
from derivls.compile.safety import checked_source
from derivls.compile.sourcemap import SourceMap
from derivls.compile.toolchain import Pch, Toolchain, ensure_pch
from derivls.compile.units import Unit

CODE = COMPILE_ERROR
SOURCE = "derivls-compile"  # the diagnostic source a client sees
MAX_NOTES = 6
# what of a compiler's stderr is read (a formula whose compile takes 4 s wrote 103 MB, 785,268 lines, of errors):
# the first 8 MB and 50,000 lines; then at most 50 diagnostics an entry, the rest counted in one more
MAX_STDERR_BYTES = 8 * 2**20
MAX_STDERR_LINES = 50_000
MAX_PER_ENTRY = 50
BACKWARD_BATCH = 48
FORWARD_BATCH = 48


class Cancelled(Exception):
    pass


@dataclass(frozen=True)
class Batch:
    kind: str  # "backward" | "forward"
    units: tuple[Unit, ...]
    source: SourceMap


@dataclass
class CompileStats:
    pch: Pch | None = None
    batches: int = 0
    units: int = 0
    seconds: float = 0.0
    batch_seconds: list[float] = field(default_factory=list)


@dataclass
class CompileResult:
    diagnostics: list[Diagnostic]
    stats: CompileStats
    # 0-based `- name:` line of each compiled entry -> its diagnostics (for per-entry replacement)
    by_entry: dict[int, list[Diagnostic]] = field(default_factory=dict)


def make_batches(
    units: Sequence[Unit], templates: Templates, size: int = BACKWARD_BATCH, helpers: tuple[str, str] | None = None
) -> list[Batch]:
    """`helpers`: C++ defining FunctionsManual.cpp helpers and the using-declarations that make the formulas call
    them (derivls.gradcheck.manual.ManualCode's text and usings()), put in each batch's source."""
    batches: list[Batch] = []
    units = [u for u in units if u.refused is None]  # (compile/safety.py: formula-context reports them)
    backward = [u for u in units if u.has_backward]
    forward = [u for u in units if u.has_forward and u.in_generated_kernel]
    for i in range(0, len(backward), size):
        part = tuple(backward[i : i + size])
        batches.append(Batch("backward", part, backward_source(part, templates, helpers)))
    for i in range(0, len(forward), min(size, FORWARD_BATCH)):
        part = tuple(forward[i : i + min(size, FORWARD_BATCH)])
        source = forward_source(part, helpers)
        if source.units:
            batches.append(Batch("forward", part, source))
    return batches


def compile_units(
    units: Sequence[Unit],
    toolchain: Toolchain,
    templates: Templates,
    *,
    jobs: int = 2,
    batch_size: int = BACKWARD_BATCH,
    cancel: threading.Event | None = None,
    progress: Callable[[int, int, str], None] | None = None,
    cache: Path | None = None,
    nice: bool = True,
    helpers: tuple[str, str] | None = None,
) -> CompileResult:
    """Compile the units' generated code; every compiler error as a Diagnostic on the YAML. `helpers`: see
    make_batches (gradcheck's edited FunctionsManual.cpp helpers)."""
    started = time.monotonic()
    stats = CompileStats()
    if progress:
        progress(0, 1, "precompiled header")
    stats.pch = ensure_pch(toolchain, templates.pch_header(), cache, nice=nice)
    batches = _batches(units, templates, batch_size, helpers)
    stats.batches, stats.units = len(batches), len(units)
    by_entry: dict[int, list[Diagnostic]] = {u.entry_line: [] for u in units}
    with tempfile.TemporaryDirectory(prefix="compile-", dir=scratch_folder()) as work:
        running: list[tuple[Bounded, IO[bytes], Batch, Path]] = []
        queue = list(batches)
        done = count = 0
        total = len(batches)
        try:
            while queue or running:
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                while queue and len(running) < max(1, jobs):
                    batch = queue.pop(0)
                    count += 1
                    path = Path(work) / f"{batch.kind}-{count}.cpp"
                    path.write_text(checked_source(batch.source.render(), toolchain.include_dirs), encoding="utf-8")
                    command = [
                        toolchain.cxx,
                        *toolchain.flags,
                        "-fsyntax-only",
                        "-Winvalid-pch",
                        *toolchain.include_flags(stats.pch.folder),
                        str(path),
                    ]
                    if nice:
                        command = ["nice", *command]
                    process, errors = start(command, path.with_suffix(".err"), compile_limits(len(batch.units)))
                    running.append((process, errors, batch, path))
                for process, *_ in running:
                    if process.expired():
                        process.kill(TIME)
                finished = [r for r in running if r[0].popen.poll() is not None]
                if not finished:
                    exit_if_orphaned()  # (a worker whose server is gone: its SIGTERM may be late)
                    time.sleep(0.05)
                    continue
                for item in finished:
                    running.remove(item)
                    process, errors, batch, path = item
                    process.wait()
                    stderr = read_errors(errors)
                    stats.batch_seconds.append(time.monotonic() - process.started)
                    limit = process.limit_hit(stderr)
                    if limit is not None and len(batch.units) > 1:
                        # which unit made the compiler work that hard: each alone, under its own bound
                        singles = [b for b in make_batches(batch.units, templates, 1, helpers) if b.kind == batch.kind]
                        queue.extend(singles)
                        total += len(singles) - 1
                        continue
                    if limit is not None:
                        found = [
                            (
                                batch.units[0].entry_line,
                                limit_diagnostic(batch.units[0], limit, process.limits, batch.kind),
                            )
                        ]
                    else:
                        found = map_errors(stderr, str(path), batch.source, toolchain.include_dirs)
                        if process.popen.returncode != 0 and not found:
                            found = [_unmapped(stderr, batch, str(path))]
                    for unit_line, diagnostic in found:
                        by_entry.setdefault(unit_line, []).append(diagnostic)
                    done += 1
                    if progress:
                        progress(done, total, f"{batch.kind} batch {done}/{total}")
        finally:
            for process, errors, *_ in running:
                process.kill()
                errors.close()
    stats.seconds = time.monotonic() - started
    by_entry = capped(by_entry, units)
    diagnostics = [d for found in by_entry.values() for d in found]
    diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
    return CompileResult(_dedup(diagnostics), stats, by_entry)


def _batches(units: Sequence[Unit], templates: Templates, size: int, helpers: tuple[str, str] | None) -> list[Batch]:
    """make_batches, given `helpers` only when there are (check --compile's own calls are as they were)."""
    if helpers is None:
        return make_batches(units, templates, size)
    return make_batches(units, templates, size, helpers)


def compile_limits(units: int) -> Limits:
    """The bounds of one compiler run over `units` units (a syntax-only batch or a gradcheck build): a few
    seconds and a few MB per unit on top of what loading the precompiled header takes. Overridden by the
    user's environment: DERIVLS_COMPILE_SECONDS, DERIVLS_COMPILE_MEMORY_MB (the bound of every run)."""
    return env_limits("DERIVLS_COMPILE", 120 + 4 * units, int(3 * GB + 8 * 2**20 * units))


def start(command: list[str], errors_path: Path, limits: Limits) -> tuple[Bounded, IO[bytes]]:
    """Run a compiler, bounded (derivls.base.bounded), with its stderr going to a file: a pipe read once it has
    finished would block a compiler that reports more than the pipe holds (64 KiB: a batch of overload
    errors with their notes)."""
    errors = open(errors_path, "w+b")  # noqa: SIM115 (closed by read_errors, or when killed)
    try:
        process = spawn(command, limits, cwd=errors_path.parent, scratch=errors_path.parent, stderr=errors, text=False)
        return process, errors
    except BaseException:
        errors.close()
        raise


def read_errors(errors: IO[bytes]) -> str:
    """What a finished compiler wrote to its stderr file (see start), at most MAX_STDERR_BYTES and
    MAX_STDERR_LINES whole lines of it (nothing more is read); closes it."""
    with errors:
        errors.seek(0)
        data = errors.read(MAX_STDERR_BYTES + 1)
    if len(data) > MAX_STDERR_BYTES:  # (cut at the last whole line)
        data = data[: data.rfind(b"\n", 0, MAX_STDERR_BYTES) + 1]
    text = data.decode("utf-8", "replace")
    cut = -1
    for _ in range(MAX_STDERR_LINES):
        cut = text.find("\n", cut + 1)
        if cut < 0:
            return text
    return text[: cut + 1]


def capped(by_entry: dict[int, list[Diagnostic]], units: Sequence[Unit]) -> dict[int, list[Diagnostic]]:
    """Each entry's diagnostics without repeats, at most MAX_PER_ENTRY of them and one "… and N more" on the
    entry's name for the rest."""
    names = {u.entry_line: u.name_span for u in units}
    out: dict[int, list[Diagnostic]] = {}
    for line, found in by_entry.items():
        kept = list(dict.fromkeys(found))
        if len(kept) > MAX_PER_ENTRY:
            more = len(kept) - MAX_PER_ENTRY
            span = names.get(line, kept[0].span)
            kept = kept[:MAX_PER_ENTRY]
            kept.append(
                Diagnostic(span, Severity.ERROR, CODE, f"… and {more} more compiler errors on this entry (not shown)")
            )
        out[line] = kept
    return out


def limit_diagnostic(unit: Unit, which: str, limits: Limits, kind: str) -> Diagnostic:
    """One diagnostic on the entry's name: the compiler hit a bound on this entry's code."""
    return Diagnostic(
        unit.name_span,
        Severity.ERROR,
        COMPILE_LIMIT,
        f"{unit.name}: the compiler ran out of {'time' if which == TIME else 'memory'} on this entry's "
        f"{kind} code (bound: {limits.describe(which)}); it was stopped. A formula that makes the compiler "
        "work this hard is not one the build can afford either.",
    )


def _dedup(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return list(dict.fromkeys(diagnostics))


def map_errors(
    stderr: str, tu_path: str, source: SourceMap, headers: Sequence[Path] = ()
) -> list[tuple[int, Diagnostic]]:
    """(entry line, diagnostic) for each error of the compiler output, placed on its formula when
    the error (or its innermost context in this file) falls inside one, else on the entry's name.

    What it quotes is the compiler's text about the generated file (`tu_path`, the whole path: a `#line` naming
    its base name is another file): an error or note the compiler places in torch's headers (`headers`, symlinks
    resolved) is named by its path inside them and its line, never quoted; one in any other file is not shown."""
    result: list[tuple[int, Diagnostic]] = []
    where_is = Quotable(tu_path, headers)
    for error in messages.parse(stderr):
        located = None
        fallback = None
        for place in error.places():
            if not where_is.own(place.path):
                continue
            where = source.locate(place.line, place.column)
            if where is None:
                continue
            if where.in_formula:
                located = where
                break
            fallback = fallback or where
        where = located or fallback
        if where is None:
            continue
        own = [p for p in error.notes[:MAX_NOTES] if where_is.own(p.path)]
        torch = [(p, inside) for p in error.notes[:MAX_NOTES] if (inside := where_is.inside(p.path)) is not None]
        notes = [f"note: {p.text}" for p in own] + [
            f"note: at {inside}:{p.line} (torch's headers; not quoted)" for p, inside in torch
        ]
        if len(error.notes) > len(own) + len(torch):
            notes.append(f"note: ... {len(error.notes) - len(own) - len(torch)} more")
        unit = where.unit
        prefix = f"{unit}: " if unit else ""
        if not where.in_formula:
            prefix += "in the generated code (not a formula's text): "
        text = (
            error.message
            if where_is.own(error.place.path)
            else _unquoted(error.place, where_is.inside(error.place.path))
        )
        message = prefix + text + ("\n" + "\n".join(notes) if notes else "")
        related = tuple(Related(p.path, p.line - 1, "a note of the compiler (not quoted)") for p, _ in torch)
        entry_line = source.entry_lines.get(unit, where.span.line)
        result.append((entry_line, Diagnostic(where.span, Severity.ERROR, CODE, message, related)))
    return result


class Quotable:
    """Where a place of the compiler's output is: the generated file (by its whole path), or a file under the
    toolchain's include folders (symlinks resolved, so a header that is a link to /etc/passwd is not), or
    another file."""

    def __init__(self, tu_path: str, headers: Sequence[Path]) -> None:
        self.tu_path = tu_path
        self.roots = tuple(os.path.realpath(h) + os.sep for h in headers)
        self._seen: dict[str, str | None] = {}

    def own(self, path: str) -> bool:
        return path == self.tu_path

    def inside(self, path: str) -> str | None:
        """The path inside torch's include folders of a file there, None for any other file."""
        if path not in self._seen:
            real = os.path.realpath(path)
            self._seen[path] = next((real[len(r) :] for r in self.roots if real.startswith(r)), None)
        return self._seen[path]


def _unquoted(place: messages.Place, inside: str | None) -> str:
    if inside is not None:
        return f"error at {inside}:{place.line} in torch's headers (the compiler's text is not quoted)"
    return "error in a file outside the generated code and torch's headers (not named, not quoted)"


def _unmapped(stderr: str, batch: Batch, tu_path: str) -> tuple[int, Diagnostic]:
    """An error the compiler placed nowhere in the generated file: its first line about the generated file
    itself (nothing the compiler says about another file is quoted), else only that it failed."""
    unit = batch.units[0]
    own = next((line for line in stderr.splitlines() if line.startswith(tu_path + ":")), None)
    if own is not None:
        what = own[len(tu_path) + 1 :].lstrip("0123456789:").strip()
    else:
        what = "the compiler failed outside the generated file (its output is not quoted)"
    return unit.entry_line, Diagnostic(
        unit.name_span, Severity.ERROR, CODE, f"the generated {batch.kind} code does not compile: {what}"
    )
