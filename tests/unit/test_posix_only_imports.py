"""Issue 27 item 4: no derivls module imports a POSIX-only module when it is imported (Windows has no
fcntl, resource, termios, pwd, grp...): those that need one import it where it is used, guarded."""

from __future__ import annotations

import subprocess
import sys
import textwrap
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
POSIX_ONLY = ("fcntl", "resource", "termios", "tty", "pty", "pwd", "grp", "syslog")  # (posix: the stdlib
# imports it itself on POSIX, by os.name)

SCRIPT = textwrap.dedent(
    """
    import importlib, pkgutil, sys
    for name in sys.argv[1:]:
        sys.modules.pop(name, None)
        sys.modules[name] = None  # `import name` raises ImportError, as on Windows
    import derivls
    failed = []
    for module in pkgutil.walk_packages(derivls.__path__, "derivls."):
        if module.name.endswith("__main__"):
            continue
        try:
            importlib.import_module(module.name)
        except ImportError as e:
            failed.append(f"{module.name}: {e}")
    print("\\n".join(failed))
    """
)


def test_every_derivls_module_imports_without_posix_only_modules() -> None:
    done = subprocess.run(
        [sys.executable, "-c", SCRIPT, *POSIX_ONLY], capture_output=True, text=True, cwd=ROOT, timeout=300
    )
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.strip() == "", done.stdout


def test_the_check_blocks_the_modules_it_names() -> None:  # the test above can fail
    probe = "import sys; sys.modules['fcntl'] = None\ntry:\n    import fcntl\nexcept ImportError:\n    print('blocked')"
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=60)
    assert done.stdout.strip() == "blocked"
