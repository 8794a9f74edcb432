"""The JIT path (derivls/gradcheck/jit.py): the extension's code defined by Cling in this process."""

import sys

from .protocol import summarize


def jit_init(torch, jit, request):
    """Import cppyy, load libtorch and the helper stubs RTLD_GLOBAL (torch loads its libraries RTLD_LOCAL: the
    JIT would not resolve libtorch's symbols), parse the includes once, define the prelude."""
    import ctypes
    import time

    started = time.monotonic()
    try:
        import cppyy
    except ImportError as e:
        return {"event": "jit", "ready": False, "reason": f"cppyy is not installed for {sys.executable} ({e})"}
    try:
        if request.get("optimization") is not None:  # Cling's -O level for every later definition
            cppyy.gbl.gInterpreter.ProcessLine(f".O {int(request['optimization'])}")
        for library in request["libraries"]:
            ctypes.CDLL(library, mode=ctypes.RTLD_GLOBAL)
        for folder in request["include_dirs"]:
            cppyy.add_include_path(folder)
        for header in request["includes"]:
            cppyy.include(header.strip('"<>'))
        cppyy.cppdef(request["prelude"])
        if request.get("warmup"):  # a node defined once: the templates every node instantiates, instantiated now
            cppyy.cppdef(request["warmup"])
    except Exception as e:
        jit["broken"] = True
        return {"event": "jit", "ready": False, "reason": f"{type(e).__name__}: {summarize(str(e))}"}
    jit["cppyy"] = cppyy
    jit["defined"] = set()
    return {"event": "jit", "ready": True, "seconds": round(time.monotonic() - started, 2)}


def jit_define(torch, jit, request):
    """Define `request["source"]` (once per namespace); None when its ops are registered, else the jit-failed
    event, `broken`: Cling's state after a rejected definition or a failed materialization (it cannot run later
    static initializers) is not trusted, the session is restarted."""
    ns = request["namespace"]
    if ns in jit.get("defined", ()):
        return None
    cppyy = jit.get("cppyy")
    if cppyy is None or jit.get("broken"):
        return {"event": "jit-failed", "message": "the JIT is not ready", "broken": bool(jit.get("broken"))}
    try:
        cppyy.cppdef(request["source"])
    except Exception as e:  # Cling rejected the code: g++ judges it. Cling's roll-back of the templates that code
        # instantiated is not reliable (a later definition may find them broken): no more JIT in this process
        jit["broken"] = True
        return {"event": "jit-failed", "message": summarize(str(e)), "broken": True}
    wanted = request.get("ops", [])
    library = getattr(torch.ops, ns)
    if not all(hasattr(library, name) for name in wanted):
        jit["broken"] = True
        return {"event": "jit-failed", "message": "the JIT could not link the code", "broken": True}
    jit["defined"].add(ns)
    return None
