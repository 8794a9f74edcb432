"""Start the torch child: the chosen Python, isolated (`-I`: no workspace on sys.path, no user site), run by
path on the child package (child/__main__.py), bounded (derivls.base.bounded: its own process group, killed with its parent, RLIMIT_AS and
RLIMIT_CPU, a wall-clock bound), working in and writing only to a folder of this process's scratch folder
(its TMPDIR: torch's own temporary files, `torchinductor_*`, land there and are removed with it)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

from derivls.base import bounded
from derivls.base.bounded import GB, Limits, env_limits
from derivls.base.children import neutral_folder
from derivls.compile.toolchain import TOOL_LIMITS

CHILD = Path(__file__).with_name("child") / "__main__.py"


# one unit's checks, from its `unit-start` to its answer (DERIVLS_GRADCHECK_SECONDS). The one-shot child (the CLI):
# BaddbmmBackward0 of the CI subset took over 120 s at load ~5, so 300 s; the session (the editor, one entry a
# save): 120 s, what a one-unit run had before (60 s + 60 s), and as long as the child lets one check run
UNIT_SECONDS = 300.0
SESSION_UNIT_SECONDS = 120.0
START_SECONDS = 300.0  # the one-shot child's start: torch and op_db imported, the samples found, the build awaited


def unit_seconds(default: float = UNIT_SECONDS) -> float:
    """The wall-clock bound of one unit's checks: `default` (UNIT_SECONDS in the one-shot child,
    SESSION_UNIT_SECONDS in the session), or the user's DERIVLS_GRADCHECK_SECONDS (a positive number of seconds)
    for both. A unit past it is stopped (its child killed) and is "not checkable: it ran out of N s"; the other
    units are checked."""
    return env_limits("DERIVLS_GRADCHECK", default, 8 * GB).seconds


def ran_out(seconds: float) -> str:
    """The reason of a unit stopped at its bound."""
    return f"it ran out of {seconds:g} s"


def child_limits(units: int) -> Limits:
    """The torch child over `units` units: importing torch and op_db takes ~5 s and ~0.75 GB of address space;
    one unit's checks seconds to a minute (each unit is bounded by unit_seconds, the whole child by START_SECONDS
    more). Memory: 8 GB, or the user's DERIVLS_GRADCHECK_MEMORY_MB."""
    memory = env_limits("DERIVLS_GRADCHECK", UNIT_SECONDS, 8 * GB).memory
    return Limits(START_SECONDS + unit_seconds() * max(units, 1), memory)


_torch_folders: dict[str, Path] = {}  # python -> its torch folder, once found (a long-lived process asks per run)


def torch_folder(python: str) -> Path | None:
    """The folder of `python`'s torch package (found without importing torch: that takes seconds). A folder
    found is remembered while it exists (a Python found without torch is asked again: it may get one)."""
    known = _torch_folders.get(python)
    if known is not None and (known / "__init__.py").is_file():
        return known
    try:
        result = bounded.run(
            [
                python,
                "-I",
                "-c",
                "import importlib.util, os; s = importlib.util.find_spec('torch'); "
                "print(os.path.dirname(s.origin) if s and s.origin else '')",
            ],
            TOOL_LIMITS,
            cwd=neutral_folder(),
        )
    except OSError:
        return None
    found = result.stdout.strip() if result.returncode == 0 else ""
    if not found:
        return None
    _torch_folders[python] = Path(found)
    return Path(found)


def python_version(python: str) -> str | None:
    """The torch version of `python` (its torch/version.py's `__version__`), None when it has no torch."""
    import re

    folder = torch_folder(python)
    if folder is None:
        return None
    try:
        text = (folder / "version.py").read_text(encoding="utf-8")
    except OSError:
        return None
    m = re.search(r"""^__version__\s*=\s*['"]([^'"]+)['"]""", text, re.MULTILINE)
    return m.group(1) if m else None


def torch_include(python: str) -> str | None:
    folder = torch_folder(python)
    return str(folder / "include") if folder is not None else None


class Child:
    """One run of the child; `events()` yields its JSON lines; `cancel()` kills its process group.

    The request goes as a first line; `send()` adds the rest (the built extension) while the child imports
    torch and finds its samples, and `end_input()` closes its stdin (with nothing sent: the run ends)."""

    def __init__(self, python: str | None, request: dict[str, Any], limits: Limits | None = None) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
        env.setdefault("OMP_NUM_THREADS", "1")
        self.folder = tempfile.mkdtemp(prefix="torch-child-", dir=bounded.scratch_folder())
        self.limits = limits or child_limits(len(request.get("units") or ()) or 1)
        self.bounded = bounded.spawn(
            [python or sys.executable, "-I", str(CHILD)],
            self.limits,
            cwd=self.folder,  # neutral (not the workspace), and where whatever it writes is removed from
            scratch=self.folder,
            env=env,
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        self.process = self.bounded.popen
        self._deadline = threading.Timer(self.limits.seconds, lambda: self.bounded.kill(bounded.TIME))
        self._deadline.daemon = True
        self._deadline.start()
        self.stderr = ""
        self._stderr_reader = threading.Thread(target=self._read_stderr, daemon=True)
        self._stderr_reader.start()
        self.send(request)

    def send(self, message: dict[str, Any]) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.write(json.dumps(message) + "\n")
            self.process.stdin.flush()
        except (OSError, ValueError):  # the child is gone (its events say why) or stdin is closed
            pass

    def end_input(self) -> None:
        assert self.process.stdin is not None
        try:
            self.process.stdin.close()
        except OSError:
            pass

    def _read_stderr(self) -> None:
        assert self.process.stderr is not None
        self.stderr = self.process.stderr.read()[-4000:]

    def events(self, on_event: Callable[[dict[str, Any]], None] | None = None) -> Iterator[dict[str, Any]]:
        assert self.process.stdout is not None
        try:
            for line in self.process.stdout:
                try:
                    event = json.loads(line)
                except ValueError:
                    continue
                if on_event:
                    on_event(event)
                yield event
            self.process.wait()
            self._stderr_reader.join(5)
        finally:
            self.close()

    def cancel(self) -> None:
        self.bounded.kill()

    def limit_hit(self) -> str | None:
        """TIME or MEMORY when a bound ended the child (after events() ended), None otherwise."""
        return self.bounded.limit_hit(self.stderr)

    def close(self) -> None:
        self._deadline.cancel()
        self.bounded.kill()  # (also when it has exited: what is left in its group, and it is no longer live)
        self.end_input()
        shutil.rmtree(self.folder, ignore_errors=True)
