"""Run in a subprocess: torchgen's autograd codegen (from the installed wheel) judges derivatives.yaml files.

Usage: python -m tests.formulas.torchgen_codegen NATIVE TAGS OUT DIR [DIR ...]
Each DIR holds a derivatives.yaml (plus the wheel's templates/deprecated.yaml beside it). For each DIR,
prints one JSON line {"dir": DIR, "ok": bool, "error": str, "seconds": float}: whether
gen_autograd + gen_autograd_python accept it. The native files are parsed once and kept (torchgen
caches parse_native_yaml by path), so each extra DIR costs only the codegen itself.
"""

from __future__ import annotations

import json
import sys
import time


def main() -> None:
    native, tags, out, *dirs = sys.argv[1:]
    from torchgen.packaged.autograd.gen_autograd import gen_autograd, gen_autograd_python
    from torchgen.selective_build.selector import SelectiveBuilder

    selector = SelectiveBuilder.get_nop_selector()
    for d in dirs:
        start = time.perf_counter()
        try:
            gen_autograd(native, tags, out, d, selector)
            gen_autograd_python(native, tags, out, d)
            ok, error = True, ""
        except BaseException as e:  # torchgen raises AssertionError, RuntimeError, ...
            ok, error = False, f"{type(e).__name__}: {e}"
        print(
            json.dumps({"dir": d, "ok": ok, "error": error[:2000], "seconds": time.perf_counter() - start}), flush=True
        )


if __name__ == "__main__":
    main()
