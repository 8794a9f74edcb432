"""Run in a subprocess: torchgen's autograd codegen (from the installed wheel) judges derivatives.yaml files.

Usage: python -m tests.formulas.torchgen_codegen NATIVE TAGS OUT DIR=SCHEMA|--full=DIR ...
Each DIR holds a derivatives.yaml (templates/ and deprecated.yaml beside it, as in the wheel). Prints one
JSON line per DIR: {"dir", "ok", "error", "seconds"}.

The cheap faithful way (default): gen_autograd and gen_autograd_python are, after load_derivatives and
match_differentiability_info, one pure function per native function / per info plus file writing. An
edit of the entry for SCHEMA can only change the outcome for the functions that entry's infos reach, so
per DIR this runs load_derivatives (every loader check), match_differentiability_info (all functions),
then exactly the per-function generators of gen_autograd (gen_variable_type_func,
gen_inplace_or_view_type_env, gen_view_funcs' process_function) and the per-info ones of
gen_autograd_functions_lib / _python (process_function with each template) for the functions and
infos of that entry. `--full=DIR` runs the whole gen_autograd + gen_autograd_python on DIR instead
(~20 s each; the parity test checks on two edits that both ways agree).
"""

from __future__ import annotations

import json
import os
import re
import sys
import time


def _restricted(native: str, tags: str, directory: str, schema: str) -> None:
    from torchgen.api import cpp
    from torchgen.api.autograd import match_differentiability_info
    from torchgen.gen import parse_native_yaml
    from torchgen.packaged.autograd import gen_autograd_functions as gaf
    from torchgen.packaged.autograd import gen_inplace_or_view_type as giv
    from torchgen.packaged.autograd import gen_variable_type as gvt
    from torchgen.packaged.autograd import gen_view_funcs as gvf
    from torchgen.packaged.autograd.load_derivatives import load_derivatives

    infos, _ = load_derivatives(os.path.join(directory, "derivatives.yaml"), native, tags)
    fns = sorted(parse_native_yaml(native, tags).native_functions, key=lambda f: cpp.name(f.func))
    with_infos = match_differentiability_info(fns, infos)
    touched_infos = [info for schema_, by_key in infos.items() if str(schema_) == schema for info in by_key.values()]
    touched = [
        fn
        for fn in with_infos
        if str(fn.func.func) == schema or (fn.info is not None and any(i in touched_infos for i in fn.info.values()))
    ]
    for fn in touched:
        if not giv.use_derived(fn):
            continue  # gen_variable_type, gen_inplace_or_view_type and gen_view_funcs all filter on it
        gvt.gen_variable_type_func(fn)
        giv.gen_inplace_or_view_type_env(fn)
        if giv.get_view_info(fn.func) is not None and not giv.modifies_arguments(fn.func):
            for template in (gvf.FUNCTION_DECLARATION, gvf.FUNCTION_DEFINITION):
                gvf.process_function(fn.func, template)
    derivative_infos = [i for i in touched_infos if i.args_with_derivatives]  # get_infos_with_derivatives_list
    for info in derivative_infos:
        for template in (gaf.FUNCTION_DECLARATION, gaf.FUNCTION_DEFINITION):
            gaf.process_function(info, template)
        for template in (gaf.PY_FUNCTION_DEFINITION, gaf.PY_FUNCTION_PROPS_AND_GETTERS):
            gaf.process_function(info, template)


def _full(native: str, tags: str, out: str, directory: str) -> None:
    from torchgen.packaged.autograd.gen_autograd import gen_autograd, gen_autograd_python
    from torchgen.selective_build.selector import SelectiveBuilder

    gen_autograd(native, tags, out, directory, SelectiveBuilder.get_nop_selector())
    gen_autograd_python(native, tags, out, directory)


def main() -> None:
    # torchgen builds ~15,000 distinct regexes per load_derivatives, which thrash `re`'s 512-entry cache
    # (most of its time is re.compile). A larger cache changes nothing but speed: every edit after the
    # first reuses the compiled patterns of the entries it did not touch.
    re._MAXCACHE = 1_000_000  # type: ignore[attr-defined]
    native, tags, out, *rest = sys.argv[1:]
    for arg in rest:
        full = arg.startswith("--full=")
        directory, _, schema = arg.removeprefix("--full=").partition("=")
        start = time.perf_counter()
        try:
            if full:
                _full(native, tags, out, directory)
            else:
                _restricted(native, tags, directory, schema)
            ok, error = True, ""
        except Exception as e:  # torchgen raises AssertionError, RuntimeError, ValueError, ...
            ok, error = False, f"{type(e).__name__}: {e}"
        seconds = time.perf_counter() - start
        print(
            json.dumps({"dir": directory, "full": full, "ok": ok, "error": error[:2000], "seconds": seconds}),
            flush=True,
        )


if __name__ == "__main__":
    main()
