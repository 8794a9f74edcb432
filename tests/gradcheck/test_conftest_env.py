"""The gradcheck tests' subprocesses run the derivls under test, wherever they start and whatever
derivls an editable install elsewhere provides."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import derivls
from tests.gradcheck.conftest import subprocess_env


def test_a_gradcheck_subprocess_imports_the_derivls_under_test(tmp_path: Path):
    out = subprocess.run(
        [sys.executable, "-c", "import derivls; print(derivls.__file__)"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        env=subprocess_env(),
        timeout=60,
        check=True,
    )
    assert Path(out.stdout.strip()).resolve() == Path(derivls.__file__).resolve()
