"""Compile and link a gradcheck extension, cached by content in derivls's cache folder.

The precompiled header is derivls.compile.toolchain's (ensure_pch): the same one `check --compile`
uses (the toolchain's flags carry the `-fPIC -O0` the extension needs; the header text is the templates'). The extension is `<cache>/gradcheck/<key>.so`, the key a
hash of the toolchain, the headers' stamps and the source: an unchanged entry is never recompiled.

FunctionsManual helpers (`torch::autograd::generated::details::*`) are mostly not exported by
libtorch_cpu.so. The wheel is not stripped: its `.symtab` has their addresses, so each one the
extension needs gets a jump stub through a slot filled when the extension loads (libtorch_cpu's
load base + the symbol's value): the installed helper's own code runs (x86-64 ELF only). A helper
found nowhere jumps to a function that throws "helper not reachable: NAME" (the formula using it
is reported not checkable).
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import platform
import shutil
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path

from derivls.base import bounded
from derivls.base.bounded import Limits
from derivls.base.children import neutral_folder
from derivls.compile.file_templates import Templates
from derivls.compile.toolchain import TOOL_LIMITS, Pch, SetupError, Toolchain, cache_root, ensure_pch

LIBRARY_PLACEHOLDER = "DERIVLS_GRADCHECK_LIBRARY"
# libtorch_cpu's own symbols a formula can reach and the library does not export: FunctionsManual's helpers
# (torch::autograd::generated::details) and a few others of torch::autograd (TypeAndSize::zeros)
HELPER_PREFIX = "_ZN5torch8autograd"
# a change of how extensions are made (stubs, flags): a new key, so no extension of an older derivls is reused
BUILD_VERSION = "2"


@dataclass
class Built:
    library: Path
    namespace: str
    reused: bool
    seconds: float
    pch: Pch | None = None
    unreachable: list[str] = field(default_factory=list)  # demangled helper names
    stubbed: int = 0


def gradcheck_toolchain(toolchain: Toolchain) -> Toolchain:
    """The toolchain the extension is built with: `check --compile`'s, whose flags carry -fPIC -O0."""
    if "-fPIC" in toolchain.flags and "-O0" in toolchain.flags:
        return toolchain
    return dataclasses.replace(toolchain, flags=(*toolchain.flags, "-fPIC", "-O0"))


def pch_header(templates: Templates) -> str:
    """The precompiled header's text: `check --compile`'s, so one header (and one build of it) serves both."""
    return templates.pch_header()


def torch_lib_dir(toolchain: Toolchain) -> Path:
    for include in toolchain.include_dirs:
        lib = include.parent / "lib"
        if (lib / "libtorch_cpu.so").is_file():
            return lib
    raise SetupError("libtorch_cpu.so not found beside the torch headers (torch/lib)")


class BuildLimit(SetupError):
    """The extension's compile or link reached a bound (derivls.base.bounded): `which` is TIME or MEMORY."""

    def __init__(self, message: str, which: str) -> None:
        super().__init__(message)
        self.which = which


def _run(command: list[str], cwd: Path, what: str, limits: Limits) -> None:
    """Run a compiler or the linker bounded, in `cwd` (its TMPDIR too). A failure is one line that quotes only
    what the compiler says about derivls's own files (unit.cpp, stubs.cpp), never another file's text."""
    result = bounded.run(["nice", "-n", "10", *command], limits, cwd=cwd, scratch=cwd)
    if result.limit is not None:
        raise BuildLimit(
            f"{what}: the compiler ran out of {limits.describe(result.limit)} and was stopped", result.limit
        )
    if result.returncode != 0:
        from derivls.compile.engine import MAX_STDERR_BYTES, MAX_STDERR_LINES

        lines = [line for line in result.stderr[:MAX_STDERR_BYTES].splitlines()[:MAX_STDERR_LINES] if line.strip()]
        own = [line for line in lines if line.startswith(OWN_FILES) and "error" in line]
        shown = " | ".join(own[:3])[:800] if own else "(the compiler's output is about other files; not quoted)"
        raise CompileFailed(f"{what} failed: {shown}", [line for line in lines if line.startswith(OWN_FILES)])


OWN_FILES = ("unit.cpp:", "stubs.cpp:")


class CompileFailed(SetupError):
    """A compiler or the linker failed: `lines`, what it said about derivls's own files (the repair phase drops
    the candidates whose code those lines name, derivls.gradcheck.trials.culprits)."""

    def __init__(self, message: str, lines: list[str]) -> None:
        super().__init__(message)
        self.lines = lines


def build_limits(units: int) -> Limits:
    """One compile of the extension's translation unit: --all (570 units) took 178 s of CPU and 5.4 GB."""
    from derivls.compile.engine import compile_limits

    return compile_limits(units)


def build(source: str, toolchain: Toolchain, templates: Templates, cache: Path | None = None, units: int = 1) -> Built:
    """The extension for `source` (whose library name is LIBRARY_PLACEHOLDER, `units` units): reused, or built.
    Raises SetupError (BuildLimit when a bound was reached, RefusedSource when compile/safety.py refuses the
    source or the headers)."""
    from derivls.compile.safety import checked_source

    started = time.monotonic()
    root = (cache or cache_root()) / "gradcheck"
    root.mkdir(parents=True, exist_ok=True)
    found = reusable(source, toolchain, templates, cache)
    if found is not None:
        os.utime(found.library)
        return found
    header = pch_header(templates)
    namespace = _namespace(source, toolchain, header)
    target = root / f"{namespace}.so"
    meta = root / f"{namespace}.json"
    pch = ensure_pch(toolchain, header, cache)
    lib = torch_lib_dir(toolchain)
    _remove_stale_work(root)  # (the cache folder held the work folders of earlier derivls versions)
    # the work folder is in this process's scratch folder (derivls.base.bounded): removed when the build ends, at
    # this process's exit, or, after a SIGKILL, by the next derivls process that makes one
    with tempfile.TemporaryDirectory(prefix="gradcheck-", dir=bounded.scratch_folder()) as work_dir:
        work = Path(work_dir)
        text = checked_source(source.replace(LIBRARY_PLACEHOLDER, namespace), toolchain.include_dirs)
        (work / "unit.cpp").write_text(text, encoding="utf-8")
        _run(
            [toolchain.cxx, *toolchain.flags, "-Winvalid-pch", *toolchain.include_flags(pch.folder), "-c", "unit.cpp"],
            work,
            "compiling the formulas",
            build_limits(units),
        )
        objects = ["unit.o"]
        unreachable: list[str] = []
        needed = _undefined_helpers(work / "unit.o")
        exported = _exported(lib / "libtorch_cpu.so")
        missing = sorted(n for n in needed if n not in exported)
        stubbed = 0
        if missing:
            stubs, unreachable, stubbed = helper_stubs(missing, lib / "libtorch_cpu.so", cache)
            (work / "stubs.cpp").write_text(stubs, encoding="utf-8")
            _run(
                [toolchain.cxx, "-std=c++17", "-fPIC", "-O0", "-w", "-c", "stubs.cpp"],
                work,
                "compiling helper stubs",
                TOOL_LIMITS,
            )
            objects.append("stubs.o")
        tmp = root / f".{namespace}.{os.getpid()}.so"
        _run(
            [
                toolchain.cxx,
                "-shared",
                *objects,
                f"-L{lib}",
                "-ltorch",
                "-ltorch_cpu",
                "-lc10",
                f"-Wl,-rpath,{lib}",
                "-o",
                str(tmp),
            ],
            work,
            "linking the extension",
            TOOL_LIMITS,
        )
        os.replace(tmp, target)
    meta.write_text(json.dumps({"unreachable": unreachable, "stubbed": stubbed}), encoding="utf-8")
    _prune(root, keep=target)
    return Built(target, namespace, False, time.monotonic() - started, pch, unreachable, stubbed)


def _namespace(source: str, toolchain: Toolchain, header: str) -> str:
    key = hashlib.sha256((BUILD_VERSION + "\0" + toolchain.key(header) + "\0" + source).encode()).hexdigest()[:20]
    return f"derivls_gc_{key}"


def reusable(source: str, toolchain: Toolchain, templates: Templates, cache: Path | None = None) -> Built | None:
    """The extension already built for `source`, or None."""
    namespace = _namespace(source, toolchain, pch_header(templates))
    root = (cache or cache_root()) / "gradcheck"
    target, meta = root / f"{namespace}.so", root / f"{namespace}.json"
    if not (target.is_file() and meta.is_file()):
        return None
    try:
        info = json.loads(meta.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    return Built(target, namespace, True, 0.0, None, info.get("unreachable", []))


def _remove_stale_work(root: Path) -> None:
    """Work folders of builds whose process is gone (killed while compiling)."""
    for folder in root.glob(".work-*-*"):
        try:
            pid = int(folder.name.split("-")[1])
            os.kill(pid, 0)
        except (ValueError, IndexError):
            continue
        except ProcessLookupError:
            shutil.rmtree(folder, ignore_errors=True)
        except PermissionError:
            pass


def _prune(root: Path, keep: Path, limit: int = 40) -> None:
    """Keep the `limit` most recently used extensions."""
    libs = sorted(root.glob("derivls_gc_*.so"), key=lambda p: p.stat().st_mtime, reverse=True)
    for old in libs[limit:]:
        if old != keep:
            old.unlink(missing_ok=True)
            old.with_suffix(".json").unlink(missing_ok=True)


def _nm(args: list[str]) -> list[str]:
    if shutil.which("nm") is None:
        raise SetupError("`nm` (binutils) not found: needed to find FunctionsManual helpers")
    result = bounded.run(["nm", *args], TOOL_LIMITS, cwd=neutral_folder())
    if result.limit is not None:
        raise SetupError(f"`nm {args[0]}` ran out of {TOOL_LIMITS.describe(result.limit)}")
    return result.stdout.splitlines()


def _undefined_helpers(obj: Path) -> set[str]:
    return {
        line.split()[-1]
        for line in _nm(["-u", str(obj)])
        if line.split() and line.split()[-1].startswith(HELPER_PREFIX)
    }


def _exported(library: Path) -> set[str]:
    return {
        parts[-1]
        for line in _nm(["-D", "--defined-only", str(library)])
        if (parts := line.split()) and len(parts) >= 3 and parts[-1].startswith(HELPER_PREFIX)
    }


@dataclass(frozen=True)
class Symbol:
    value: int  # the address in the library (add its load base)
    code: bool  # a function (else data)
    size: int  # bytes (0: unknown)


def symbol_table(library: Path, cache: Path | None = None) -> dict[str, Symbol]:
    """The helpers' symbols in the library's .symtab (cached by the library's path, size and mtime)."""
    st = library.stat()
    stamp = f"{BUILD_VERSION}:{HELPER_PREFIX}:{library.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:20]
    path = (cache or cache_root()) / "gradcheck" / f"symtab-{key}.json"
    if path.is_file():
        return {k: Symbol(int(v[0]), bool(v[1]), int(v[2])) for k, v in json.loads(path.read_text("utf-8")).items()}
    table: dict[str, Symbol] = {}
    for line in _nm(["-S", "--defined-only", str(library)]):
        parts = line.split()  # "value size type name", or "value type name" without a size
        if len(parts) not in (3, 4) or not parts[-1].startswith(HELPER_PREFIX):
            continue
        kind = parts[-2]
        size = int(parts[1], 16) if len(parts) == 4 else 0
        if kind in "tTwW":
            table[parts[-1]] = Symbol(int(parts[0], 16), True, size)
        elif kind in "dDbBrRvV":
            table[parts[-1]] = Symbol(int(parts[0], 16), False, size)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(json.dumps({k: [v.value, v.code, v.size] for k, v in table.items()}), encoding="utf-8")
    os.replace(tmp, path)
    return table


def demangle(names: list[str]) -> list[str]:
    if not names or shutil.which("c++filt") is None:
        return names
    result = bounded.run(["c++filt"], TOOL_LIMITS, cwd=neutral_folder(), input="\n".join(names))
    out = result.stdout.splitlines()
    return out if len(out) == len(names) else names


def helper_stubs(
    missing: list[str], library: Path, cache: Path | None = None, exported: bool = False
) -> tuple[str, list[str], int]:
    """C++ for the missing helpers; (text, the helpers found nowhere, how many were reached). `exported`: the
    stubs are global symbols of their library (the JIT's, which the session loads RTLD_GLOBAL), else hidden.

    A function gets a jump stub through a slot filled when the extension loads (libtorch_cpu's load base +
    its value). A data symbol of pointer size (`extern const char* kCudnnDoubleBackwardMsg`) gets a hidden
    copy of its value, made at load time; other data cannot be copied safely (its type is not known): like a
    symbol found nowhere it is reported not reachable (a function: throws; data: zeroed)."""
    table = symbol_table(library, cache) if platform.machine() in ("x86_64", "AMD64") else {}
    code = [n for n in missing if n in table and table[n].code]
    data = [n for n in missing if n in table and not table[n].code and table[n].size == 8]
    reached = set(code) | set(data)
    absent = [n for n in missing if n not in reached]
    absent_data = [n for n in absent if n in table and not table[n].code]
    lines = [
        "#include <dlfcn.h>",
        "#include <link.h>",
        "#include <cstring>",
        "#include <stdexcept>",
        "#include <string>",
        'extern "C" {',
    ]
    asm = []

    def hide(name: str) -> str:
        return "" if exported else f".hidden {name}\\n"

    functions = [n for n in missing if n not in data and n not in absent_data]
    for i, name in enumerate(functions):
        lines.append(f'__attribute__((visibility("hidden"))) void* derivls_slot_{i} = nullptr;')
        asm.append(
            f'".globl {name}\\n{hide(name)}.type {name}, @function\\n{name}:\\n  jmp *derivls_slot_{i}(%rip)\\n"'
        )
    copies = [*data, *absent_data]
    for i, name in enumerate(copies):
        size = max(8, table[name].size)
        asm.append(
            f'".data\\n.balign 8\\n.globl {name}\\n{hide(name)}.type {name}, @object\\n.size {name}, {size}\\n'
            f'{name}:\\n  .zero {size}\\n.text\\n"'
        )
        lines.append(f'extern char derivls_data_{i}[] __asm__("{name}");')
    names = demangle(absent)
    shown = dict(zip(absent, names))
    for i, name in enumerate(n for n in functions if n not in reached):
        text = shown[name].replace("\\", "\\\\").replace('"', '\\"')
        lines.append(
            f"[[noreturn]] void derivls_unreachable_{i}() {{ "
            f'throw std::runtime_error("derivls: FunctionsManual helper not reachable: {text}"); }}'
        )
    lines.append("}")
    lines.append('asm(".text\\n"\n' + "\n".join(asm) + ");")
    lines.append("__attribute__((constructor)) static void derivls_fill_slots() {")
    lines.append('  void* handle = dlopen("libtorch_cpu.so", RTLD_NOW | RTLD_NOLOAD);')
    lines.append("  struct link_map* map = nullptr;")
    lines.append("  if (handle) dlinfo(handle, RTLD_DI_LINKMAP, &map);")
    lines.append("  unsigned long base = map ? map->l_addr : 0;")
    unreachable = [n for n in functions if n not in reached]
    for i, name in enumerate(functions):
        if name in reached:
            lines.append(f"  derivls_slot_{i} = base ? (void*)(base + {table[name].value}UL) : nullptr;")
        else:
            lines.append(f"  derivls_slot_{i} = (void*)&derivls_unreachable_{unreachable.index(name)};")
    for i, name in enumerate(data):
        lines.append(f"  if (base) std::memcpy(derivls_data_{i}, (const void*)(base + {table[name].value}UL), 8);")
    lines.append("}")
    return "\n".join(lines) + "\n", names, len(reached)


def helpers_library(lib: Path, toolchain_cxx: str, cache: Path | None = None) -> Path:
    """A library of exported jump stubs to every helper libtorch_cpu has and does not export (x86-64 ELF,
    unstripped), for the JIT path: the session loads it RTLD_GLOBAL so Cling resolves the helpers' names through
    it. Built once per libtorch_cpu (its path, size and time), cached. Raises SetupError."""
    library = lib / "libtorch_cpu.so"
    if platform.machine() not in ("x86_64", "AMD64"):
        raise SetupError("the JIT's helper stubs need x86-64")
    table = symbol_table(library, cache)
    st = library.stat()
    stamp = f"{BUILD_VERSION}:helpers:{library.resolve()}:{st.st_size}:{st.st_mtime_ns}"
    key = hashlib.sha256(stamp.encode()).hexdigest()[:20]
    root = (cache or cache_root()) / "gradcheck"
    target = root / f"helpers-{key}.so"
    if target.is_file():
        return target
    exported = _exported(library)
    missing = sorted(n for n, s in table.items() if n not in exported and (s.code or s.size == 8))
    stubs, _, _ = helper_stubs(missing, library, cache, exported=True)
    root.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="gradcheck-", dir=bounded.scratch_folder()) as work_dir:
        work = Path(work_dir)
        (work / "stubs.cpp").write_text(stubs, encoding="utf-8")
        tmp = root / f".helpers-{key}.{os.getpid()}.so"
        _run(
            [toolchain_cxx, "-std=c++17", "-shared", "-fPIC", "-O0", "-w", "stubs.cpp", "-ldl", "-o", str(tmp)],
            work,
            "compiling the JIT's helper stubs",
            TOOL_LIMITS,
        )
        os.replace(tmp, target)
    return target
