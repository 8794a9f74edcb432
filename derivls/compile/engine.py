"""Generate, compile in batches, map each compiler error back to the formula it comes from.

`compile_units(units, ...)` is the whole engine: no LSP, no printing. Batches run as compiler
subprocesses, at most `jobs` at a time, each under `nice`; `cancel` (a threading.Event) stops them.
"""

from __future__ import annotations

import os
import subprocess
import tempfile
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from derivls.codes.compile import COMPILE_ERROR
from derivls.compile import messages
from derivls.compile.backward import backward_source
from derivls.compile.file_templates import Templates
from derivls.compile.forward import forward_source
from derivls.compile.sourcemap import SourceMap
from derivls.compile.toolchain import Pch, Toolchain, ensure_pch
from derivls.compile.units import Unit
from derivls.diagnostics import Diagnostic, Related, Severity

CODE = COMPILE_ERROR
SOURCE = "derivls-compile"  # the diagnostic source a client sees
MAX_NOTES = 6
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


def make_batches(units: Sequence[Unit], templates: Templates, size: int = BACKWARD_BATCH) -> list[Batch]:
    batches: list[Batch] = []
    backward = [u for u in units if u.has_backward]
    forward = [u for u in units if u.has_forward and u.in_generated_kernel]
    for i in range(0, len(backward), size):
        part = tuple(backward[i : i + size])
        batches.append(Batch("backward", part, backward_source(part, templates)))
    for i in range(0, len(forward), FORWARD_BATCH):
        part = tuple(forward[i : i + FORWARD_BATCH])
        source = forward_source(part)
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
) -> CompileResult:
    """Compile the units' generated code; every compiler error as a Diagnostic on the YAML."""
    started = time.monotonic()
    stats = CompileStats()
    if progress:
        progress(0, 1, "precompiled header")
    stats.pch = ensure_pch(toolchain, templates.pch_header(), cache, nice=nice)
    batches = make_batches(units, templates, batch_size)
    stats.batches, stats.units = len(batches), len(units)
    diagnostics: list[Diagnostic] = []
    by_entry: dict[int, list[Diagnostic]] = {u.entry_line: [] for u in units}
    remove_stale_work_folders()
    with tempfile.TemporaryDirectory(prefix=f"{WORK_PREFIX}{os.getpid()}-") as work:
        running: list[tuple[subprocess.Popen[bytes], IO[bytes], Batch, Path, float]] = []
        queue = list(enumerate(batches))
        done = 0
        try:
            while queue or running:
                if cancel is not None and cancel.is_set():
                    raise Cancelled()
                while queue and len(running) < max(1, jobs):
                    index, batch = queue.pop(0)
                    path = Path(work) / f"{batch.kind}-{index}.cpp"
                    path.write_text(batch.source.render(), encoding="utf-8")
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
                    process, errors = start(command, path.with_suffix(".err"))
                    running.append((process, errors, batch, path, time.monotonic()))
                finished = [r for r in running if r[0].poll() is not None]
                if not finished:
                    time.sleep(0.05)
                    continue
                for item in finished:
                    running.remove(item)
                    process, errors, batch, path, begun = item
                    stderr = read_errors(errors)
                    stats.batch_seconds.append(time.monotonic() - begun)
                    found = map_errors(stderr, str(path), batch.source)
                    if process.returncode != 0 and not found:
                        found = [_unmapped(stderr, batch)]
                    for unit_line, diagnostic in found:
                        diagnostics.append(diagnostic)
                        by_entry.setdefault(unit_line, []).append(diagnostic)
                    done += 1
                    if progress:
                        progress(done, len(batches), f"{batch.kind} batch {done}/{len(batches)}")
        finally:
            for process, errors, *_ in running:
                _kill(process)
                errors.close()
    stats.seconds = time.monotonic() - started
    diagnostics.sort(key=lambda d: (d.span.line, d.span.column))
    return CompileResult(_dedup(diagnostics), stats, by_entry)


WORK_PREFIX = "derivls-compile-"  # + the pid of the process that made it


def remove_stale_work_folders() -> None:
    """Remove the temporary folders of compile processes that died without removing theirs (SIGKILL):
    `derivls-compile-<pid>-*` of the user's own whose process is gone."""
    import re
    import shutil

    mine = getattr(os, "geteuid", lambda: None)()
    try:
        entries = list(os.scandir(tempfile.gettempdir()))
    except OSError:
        return
    for entry in entries:
        match = re.fullmatch(re.escape(WORK_PREFIX) + r"(\d+)-\w+", entry.name)
        if match is None or not entry.is_dir(follow_symlinks=False):
            continue
        try:
            if mine is not None and entry.stat(follow_symlinks=False).st_uid != mine:
                continue
            os.kill(int(match.group(1)), 0)
            continue  # its process is alive
        except ProcessLookupError:
            shutil.rmtree(entry.path, ignore_errors=True)
        except (OSError, OverflowError):
            continue


def start(command: list[str], errors_path: Path) -> tuple[subprocess.Popen[bytes], IO[bytes]]:
    """Run a compiler with its stderr going to a file: a pipe read once it has finished would block a
    compiler that reports more than the pipe holds (64 KiB: a batch of overload errors with their notes)."""
    errors = open(errors_path, "w+b")  # noqa: SIM115 (closed by read_errors, or when killed)
    try:
        return subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=errors, cwd=errors_path.parent), errors
    except BaseException:
        errors.close()
        raise


def read_errors(errors: IO[bytes]) -> str:
    """What a finished compiler wrote to its stderr file (see start); closes it."""
    with errors:
        errors.seek(0)
        return errors.read().decode("utf-8", "replace")


def _kill(process: subprocess.Popen[bytes]) -> None:
    try:
        process.kill()
        process.wait(timeout=10)
    except (OSError, subprocess.TimeoutExpired):
        pass


def _dedup(diagnostics: list[Diagnostic]) -> list[Diagnostic]:
    return list(dict.fromkeys(diagnostics))


def map_errors(stderr: str, tu_path: str, source: SourceMap) -> list[tuple[int, Diagnostic]]:
    """(entry line, diagnostic) for each error of the compiler output, placed on its formula when
    the error (or its innermost context in this file) falls inside one, else on the entry's name."""
    result: list[tuple[int, Diagnostic]] = []
    tu_name = os.path.basename(tu_path)
    for error in messages.parse(stderr):
        located = None
        fallback = None
        for place in error.places():
            if os.path.basename(place.path) != tu_name:
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
        notes = [
            f"note: {_short(p.path)}:{p.line}: {p.text}" if os.path.basename(p.path) != tu_name else f"note: {p.text}"
            for p in error.notes[:MAX_NOTES]
        ]
        if len(error.notes) > MAX_NOTES:
            notes.append(f"note: ... {len(error.notes) - MAX_NOTES} more")
        unit = where.unit
        prefix = f"{unit}: " if unit else ""
        if not where.in_formula:
            prefix += "in the generated code (not a formula's text): "
        message = prefix + error.message + ("\n" + "\n".join(notes) if notes else "")
        related = tuple(
            Related(p.path, p.line - 1, p.text) for p in error.notes[:MAX_NOTES] if os.path.basename(p.path) != tu_name
        )
        entry_line = source.entry_lines.get(unit, where.span.line)
        result.append((entry_line, Diagnostic(where.span, Severity.ERROR, CODE, message, related)))
    return result


def _short(path: str) -> str:
    marker = "/include/"
    return path.split(marker, 1)[1] if marker in path else path


def _unmapped(stderr: str, batch: Batch) -> tuple[int, Diagnostic]:
    first = next((line for line in stderr.splitlines() if "error" in line), stderr.strip()[:300])
    unit = batch.units[0]
    return unit.entry_line, Diagnostic(
        unit.name_span, Severity.ERROR, CODE, f"the generated {batch.kind} code does not compile: {first}"
    )
