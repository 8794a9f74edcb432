"""Start the torch child: the chosen Python, isolated (`-I`: no workspace on sys.path, no user site),
run by path on child.py from the temporary folder (neutral; it writes nothing), in its own process group, killed with its parent."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

CHILD = Path(__file__).with_name("child.py")


def _die_with_parent() -> None:  # pragma: no cover (runs in the forked child)
    try:
        import ctypes

        ctypes.CDLL(None, use_errno=True).prctl(1, signal.SIGKILL)  # PR_SET_PDEATHSIG
    except Exception:
        pass


def torch_folder(python: str) -> Path | None:
    """The folder of `python`'s torch package (found without importing torch: that takes seconds)."""
    try:
        result = subprocess.run(
            [
                python,
                "-I",
                "-c",
                "import importlib.util, os; s = importlib.util.find_spec('torch'); "
                "print(os.path.dirname(s.origin) if s and s.origin else '')",
            ],
            capture_output=True,
            text=True,
            cwd=tempfile.gettempdir(),
            timeout=120,
            check=False,
        )
    except (OSError, subprocess.TimeoutExpired):
        return None
    found = result.stdout.strip() if result.returncode == 0 else ""
    return Path(found) if found else None


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
    """One run of child.py; `events()` yields its JSON lines; `cancel()` kills its process group.

    The request goes as a first line; `send()` adds the rest (the built extension) while the child imports
    torch and finds its samples, and `end_input()` closes its stdin (with nothing sent: the run ends)."""

    def __init__(self, python: str | None, request: dict[str, Any]) -> None:
        env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONSTARTUP", "PYTHONHOME")}
        env.setdefault("OMP_NUM_THREADS", "1")
        self.process = subprocess.Popen(
            [python or sys.executable, "-I", str(CHILD)],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            cwd=tempfile.gettempdir(),  # neutral: not the workspace; nothing is written there
            env=env,
            start_new_session=True,
            preexec_fn=_die_with_parent if sys.platform.startswith("linux") else None,
        )
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
        try:
            os.killpg(self.process.pid, signal.SIGKILL)
        except (ProcessLookupError, PermissionError):
            pass

    def close(self) -> None:
        if self.process.poll() is None:
            self.cancel()
            self.process.wait()
        self.end_input()
