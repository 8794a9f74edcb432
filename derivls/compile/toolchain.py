"""The compiler, the torch headers, and the precompiled header built once per (headers, compiler, flags).

The precompiled header lives in derivls's cache folder (derivls.base.cachedir: `$DERIVLS_CACHE_DIR`, else
the platform's cache folder), under `pch/`, in a folder named by a hash of what it depends on: the compiler (its path
and `--version`), the flags, the include folders and the size and mtime of the headers that
matter. A change to any of them gives a new key, so a stale header is never used; the build
writes to a temporary file and renames it into place (atomic), under a lock, so two processes
never build the same header at once and never see a half-written one. Older headers of the
same (compiler, include folders) are removed when a new one is built: each is ~0.5 GB.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import time
from dataclasses import dataclass
from pathlib import Path

from derivls.base import bounded
from derivls.base.bounded import GB, Limits, env_limits
from derivls.base.children import neutral_folder
from derivls.compile.file_templates import PCH_NAME


class SetupError(Exception):
    """A missing compiler or missing headers: one line for the user."""


# A tool asked a question (`--version`, `nm`, `c++filt`): it answers in seconds.
TOOL_LIMITS = Limits(seconds=120, memory=4 * GB)


def pch_limits() -> Limits:
    """The precompiled header's build: ~40 s and ~1.5 GB on a quiet machine (torch 2.13, g++ 12)."""
    return env_limits("DERIVLS_PCH", 900, 6 * GB)


# Headers whose change makes the precompiled header stale (besides the compiler and flags).
STAMP_HEADERS = (
    "torch/csrc/autograd/FunctionsManual.h",
    "torch/csrc/autograd/generated/Functions.h",
    "torch/csrc/autograd/generated/VariableType.h",
    "torch/csrc/autograd/VariableTypeUtils.h",
    "torch/csrc/dynamo/compiled_autograd.h",
    "ATen/ATen.h",
    "ATen/Functions.h",
    "ATen/RedispatchFunctions.h",
    "c10/macros/cmake_macros.h",
    "torch/version.h",
)
REQUIRED_HEADERS = (
    "torch/csrc/autograd/FunctionsManual.h",
    "torch/csrc/autograd/generated/Functions.h",
    "ATen/ATen.h",
)


def find_compiler(cxx: str | None = None) -> str:
    """The C++ compiler: `cxx`, else $CXX, else g++, c++ or clang++ on PATH."""
    candidates = [cxx] if cxx else ([os.environ["CXX"]] if os.environ.get("CXX") else ["g++", "c++", "clang++"])
    for candidate in candidates:
        found = shutil.which(candidate)
        if found:
            return found
    if cxx:
        raise SetupError(f"C++ compiler not found: {cxx}")
    raise SetupError("no C++ compiler found (looked for $CXX, g++, c++, clang++ on PATH); install one or pass --cxx")


def find_include_dirs(derivatives: Path | None, torch_include: str | None = None) -> list[Path]:
    """The include folders of the torch that matches the yaml.

    Given: that folder. A torch wheel's packaged yaml (site-packages/torchgen/packaged/autograd/):
    site-packages/torch/include. A checkout (tools/autograd/derivatives.yaml): its torch/include,
    filled by a build (`python setup.py develop`) with the generated headers.
    """
    tried: list[Path] = []
    if torch_include is not None:
        roots = [Path(torch_include)]
    else:
        roots = []
        if derivatives is not None:
            here = derivatives.resolve().parent
            if here.name == "autograd" and here.parent.name == "packaged":
                roots.append(here.parent.parent.parent / "torch" / "include")
            for folder in here.parents:
                if (folder / "tools" / "autograd" / "derivatives.yaml").is_file():
                    roots.append(folder / "torch" / "include")
                    roots.append(folder / "build" / "include")
                    break
    for root in roots:
        tried.append(root)
        missing = [h for h in REQUIRED_HEADERS if not (root / h).is_file()]
        if not missing:
            dirs = [root]
            api = root / "torch" / "csrc" / "api" / "include"
            if api.is_dir():
                dirs.append(api)
            return dirs
    if not tried:
        raise SetupError("no torch headers found for this derivatives.yaml; pass --torch-include DIR (torch/include)")
    where = ", ".join(str(t) for t in tried)
    raise SetupError(
        f"torch headers not found (need {', '.join(REQUIRED_HEADERS)} under {where}); "
        "build the checkout (its generated headers) or pass --torch-include DIR of a matching torch"
    )


def cache_root() -> Path:
    """derivls's cache folder, checked (private, the user's own); SetupError when it is refused."""
    from derivls.base.cachedir import CacheFolderRefused, cache_directory, check_folder

    try:
        root = cache_directory()
        check_folder(root, create=True)
    except CacheFolderRefused as e:
        raise SetupError(f"no folder for the precompiled header: {e}") from None
    return root


def _is_clang(version: str) -> bool:
    return "clang" in version.lower()


def _is_gcc(cxx: str, version: str) -> bool:
    """GCC by its `--version` (`g++ (Debian 12.2.0…)`, `c++ (…)` + "Free Software Foundation") or its name."""
    v = version.lower()
    return "clang" not in v and ("gcc" in v or "g++" in v or "free software foundation" in v or "g++" in Path(cxx).name)


_versions: dict[tuple[str, int, int, int], str] = {}  # (compiler, its inode, size, mtime) -> `--version`


def compiler_version(compiler: str) -> str:
    """`compiler --version`, asked once per compiler binary (a long-lived process builds per run; another
    binary at that path, an upgrade, is asked again). Raises SetupError."""
    try:
        info = os.stat(compiler)
        key: tuple[str, int, int, int] | None = (compiler, info.st_ino, info.st_size, info.st_mtime_ns)
    except OSError:
        key = None
    if key is not None and key in _versions:
        return _versions[key]
    try:
        done = bounded.run([compiler, "--version"], TOOL_LIMITS, cwd=neutral_folder())
    except OSError as e:
        raise SetupError(f"cannot run the C++ compiler {compiler}: {e}") from e
    if done.limit is not None:
        raise SetupError(f"the C++ compiler {compiler} did not answer --version within {TOOL_LIMITS.seconds:.0f} s")
    version = done.stdout.strip()
    if key is not None and done.returncode == 0:
        _versions[key] = version
    return version


@dataclass(frozen=True)
class Toolchain:
    cxx: str
    version: str  # first line of `cxx --version`
    include_dirs: tuple[Path, ...]
    flags: tuple[str, ...]

    @staticmethod
    def find(derivatives: Path | None, cxx: str | None = None, torch_include: str | None = None) -> Toolchain:
        compiler = find_compiler(cxx)
        dirs = find_include_dirs(derivatives, torch_include)
        version = compiler_version(compiler)
        # -fPIC -O0: what gradcheck's shared library needs (-O0 is the compilers' default); `check --compile`'s
        # -fsyntax-only units take them too, so one precompiled header serves both
        flags = ["-std=c++20", "-w", "-fdiagnostics-color=never", "-fPIC", "-O0"]
        if _is_gcc(compiler, version):
            flags += [
                "-fno-diagnostics-show-caret",
                "-fdiagnostics-column-unit=byte",
                "-fno-diagnostics-show-line-numbers",
            ]
        elif _is_clang(version):
            flags += ["-fno-caret-diagnostics"]  # (clang's columns are bytes already)
        return Toolchain(compiler, version.splitlines()[0] if version else compiler, tuple(dirs), tuple(flags))

    @property
    def clang(self) -> bool:
        return _is_clang(self.version)

    def key(self, header: str) -> str:
        h = hashlib.sha256()
        for part in (self.cxx, self.version, *self.flags, header):
            h.update(part.encode() + b"\0")
        for folder in self.include_dirs:
            h.update(str(folder.resolve()).encode() + b"\0")
            for name in STAMP_HEADERS:
                try:
                    st = (folder / name).stat()
                    h.update(f"{name}:{st.st_size}:{st.st_mtime_ns}".encode())
                except OSError:
                    pass
        return h.hexdigest()[:24]

    def family(self, header: str) -> str:
        """What a stale header is replaced by a new one within: (compiler, include folders, header text)."""
        h = hashlib.sha256(
            (self.cxx + "\0" + "\0".join(str(d.resolve()) for d in self.include_dirs) + "\0" + header).encode()
        )
        return h.hexdigest()[:12]

    def include_flags(self, pch_dir: Path | None) -> list[str]:
        """-I flags; with the precompiled header's folder first. gcc finds `<header>.gch` beside the header a
        unit includes; clang uses a PCH only when told (`-include-pch`; the header's `#pragma once` then
        makes the unit's own #include of it a no-op)."""
        flags = [f"-I{pch_dir}"] if pch_dir is not None else []
        if pch_dir is not None and self.clang:
            flags += ["-include-pch", str(pch_dir / f"{PCH_NAME}.gch")]
        return flags + [f"-I{d}" for d in self.include_dirs]


@dataclass(frozen=True)
class Pch:
    folder: Path  # holds derivls-autograd.h and derivls-autograd.h.gch
    built: bool  # built by this call (False: reused)
    seconds: float
    size: int


def ensure_pch(toolchain: Toolchain, header: str, root: Path | None = None, nice: bool = True) -> Pch:
    """The precompiled header for `header` (the includes of both generated files): reused, or built."""
    import fcntl

    from derivls.compile.safety import HEADER, checked_headers, checked_source

    checked_source(header, toolchain.include_dirs, HEADER, own=())  # (RefusedSource: not built)
    root = root or cache_root()
    pch_root = root / "pch"
    key = toolchain.key(header)
    folder = pch_root / f"{toolchain.family(header)}-{key}"
    gch = folder / (PCH_NAME + ".gch")
    stamp = folder / "stamp"
    folder.mkdir(parents=True, exist_ok=True)
    with open(pch_root / f"{toolchain.family(header)}.lock", "w") as lock:
        fcntl.flock(lock, fcntl.LOCK_EX)
        if stamp.is_file() and gch.is_file() and stamp.read_text() == key:
            return Pch(folder, False, 0.0, gch.stat().st_size)
        started = time.monotonic()
        checked_headers(header, toolchain.include_dirs)  # (what the build reads, before it is built)
        for stale in folder.glob(f".{PCH_NAME}.gch.*.tmp"):  # under the lock: left by a builder that was killed
            stale.unlink(missing_ok=True)
        _write_atomic(folder / PCH_NAME, header)
        tmp = folder / f".{PCH_NAME}.gch.{os.getpid()}.tmp"
        command = [
            toolchain.cxx,
            *toolchain.flags,
            "-x",
            "c++-header",
            *toolchain.include_flags(None),
            str(folder / PCH_NAME),
            "-o",
            str(tmp),
        ]
        if nice:
            command = ["nice", *command]
        limits = pch_limits()
        try:  # cancelled (SIGTERM: SystemExit) or failed: no partial header is left
            result = bounded.run(command, limits, cwd=folder)
            if result.limit is not None:
                raise SetupError(
                    f"the precompiled header of the torch headers ran out of {limits.describe(result.limit)} "
                    f"with {toolchain.cxx} (DERIVLS_PCH_SECONDS, DERIVLS_PCH_MEMORY_MB raise the bounds)"
                )
            if result.returncode != 0:
                raise SetupError(
                    f"the torch headers do not compile with {toolchain.cxx}: {_first_error(result.stderr, toolchain)}"
                )
            os.replace(tmp, gch)
        finally:
            tmp.unlink(missing_ok=True)
        _write_atomic(stamp, key)
        for other in pch_root.glob(f"{toolchain.family(header)}-*"):
            if other != folder and other.is_dir():
                shutil.rmtree(other, ignore_errors=True)
        return Pch(folder, True, time.monotonic() - started, gch.stat().st_size)


def _first_error(stderr: str, toolchain: Toolchain) -> str:
    """Where the precompiled header's build failed, never the compiler's text (it may quote any file a header
    pulled in): a place in torch's headers by its path inside them and its line, any other place not named."""
    from derivls.compile import messages
    from derivls.compile.engine import Quotable

    errors = messages.parse(stderr[: 1 << 20])
    if not errors:
        return "it failed (its output is not quoted)"
    place = errors[0].place
    inside = Quotable("", toolchain.include_dirs).inside(place.path)
    if inside is not None:
        return f"the first error is at {inside}:{place.line} (the compiler's text is not quoted)"
    return "the first error is in a file outside torch's headers (not named, not quoted)"


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text, encoding="utf-8")
    os.replace(tmp, path)
