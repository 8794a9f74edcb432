"""Starts the derivls server that comes with the VS Code extension (bundled/libs, see bundle_server.py).

The extension runs it as `<python> -I derivls_server.py serve` in its own folder: `-I` keeps the script's
folder, the working directory, PYTHONPATH and the user's site-packages off sys.path, and this puts
bundled/libs first, so the bundled derivls and its libraries win over anything installed in that Python
and nothing from the workspace is imported.
"""

import os
import sys

if sys.version_info < (3, 10):
    sys.stderr.write(
        "derivls needs Python 3.10 or newer; %s is %s\n" % (sys.executable, sys.version.split()[0])
    )
    sys.exit(3)

LIBS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "libs")
HERE = os.path.dirname(LIBS)
sys.path[:] = [LIBS] + [p for p in sys.path if p not in ("", ".", HERE) and os.path.isabs(p)]

from derivls.__main__ import main  # noqa: E402

sys.exit(main())
