"""The gradcheck child's entry, run by path by the chosen Python: `python -I .../child/__main__.py` runs one check
(oneshot.main), with `--serve` a session (serve.serve). It never imports derivls.

How it imports its modules: `-I` leaves the workspace and the user site off sys.path and, from Python 3.11 (`-I`
implies `-P`), this folder too. Nothing is added to sys.path: `load` imports this folder as the package PACKAGE
from explicit paths (its `__init__.py`, this folder as its only search location) and registers it in
sys.modules under that name, one no user package takes; its modules import each other relatively. A folder on
sys.path would instead make `samples`, `checks`, `jit`... top-level names of the user's Python, able to shadow
what torch imports: so where an older Python (3.10) put this folder first on sys.path, it is taken off. The
package's byte code is not written (derivls's folder stays as installed; the user's own modules are unaffected).
"""

import importlib
import importlib.util
import os
import sys

PACKAGE = "derivls_gradcheck_child"  # the package's name in the child's sys.modules


def load():
    """This folder imported as the package PACKAGE (its modules are imported on demand, as PACKAGE.name)."""
    folder = os.path.dirname(os.path.realpath(__file__))
    spec = importlib.util.spec_from_file_location(
        PACKAGE, os.path.join(folder, "__init__.py"), submodule_search_locations=[folder]
    )
    package = importlib.util.module_from_spec(spec)
    sys.modules[PACKAGE] = package
    try:
        spec.loader.exec_module(package)
    except BaseException:
        del sys.modules[PACKAGE]
        raise
    return package


def entry(argv):
    """The function to run: serve.serve with `--serve`, else oneshot.main; its modules imported without
    writing byte code, this folder off sys.path."""
    folder = os.path.dirname(os.path.realpath(__file__))
    if sys.path and os.path.realpath(sys.path[0] or os.curdir) == folder:
        del sys.path[0]  # (Python 3.10: the script's folder)
    keep = sys.dont_write_bytecode
    sys.dont_write_bytecode = True
    try:
        load()
        if "--serve" in argv:
            return importlib.import_module(PACKAGE + ".serve").serve
        return importlib.import_module(PACKAGE + ".oneshot").main
    finally:
        sys.dont_write_bytecode = keep


if __name__ == "__main__":
    import faulthandler

    faulthandler.enable()  # a crash of torch (a signal) leaves the Python stack on stderr: the parent quotes it
    entry(sys.argv[1:])()
