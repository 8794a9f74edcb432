"""g++ on one translation unit against the torch wheel's headers: the tests that have the compiler judge
C++ derivls reasons about (seeded formulas, the saved calls' argument types, VariableType.cpp's lookup)."""

from __future__ import annotations

import importlib.util
import re
import shutil
import subprocess
from pathlib import Path


def torch_include() -> Path:
    """The wheel's headers, found without importing torch."""
    spec = importlib.util.find_spec("torch")
    assert spec is not None and spec.submodule_search_locations, "torch==2.13.0 is needed (pip install -e '.[test]')"
    return Path(list(spec.submodule_search_locations)[0]) / "include"


def syntax_errors(lines: list[str], source: Path) -> tuple[dict[int, list[str]], str]:
    """Write `lines` to `source` and have g++ (-std=c++20 -fsyntax-only, no error limit) check it: the
    messages of its errors by 1-based line of `source`, and the whole of what it printed."""
    gxx = shutil.which("g++")
    assert gxx is not None, "g++ is needed (apt-get install g++)"
    source.write_text("\n".join(lines) + "\n")
    run = subprocess.run(
        [gxx, "-std=c++20", "-fsyntax-only", "-fmax-errors=0", f"-I{torch_include()}", str(source)],
        capture_output=True,
        text=True,
        timeout=600,
    )
    errors: dict[int, list[str]] = {}
    for m in re.finditer(rf"^{re.escape(str(source))}:(\d+):\d+: error: (.*)$", run.stderr, re.M):
        errors.setdefault(int(m.group(1)), []).append(m.group(2))
    return errors, run.stderr
