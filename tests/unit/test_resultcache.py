"""The whole-result cache of `derivls check` (derivls/project/resultcache.py): a second check of unchanged
inputs prints exactly what the first printed, without analysing; any changed input misses."""

from __future__ import annotations

import io
import json
import os
import pickle
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from derivls.base import diskcache
from derivls.base.diskcache import DiskCache
from derivls.base.writebehind import wait_for_writer
from derivls.cli import commandline as cli
from derivls.project import resultcache

FIXTURES = Path(__file__).resolve().parents[1] / "fixtures" / "lsp"
# Modules a check answered from the cache must not import (the ATen model, the loader, the analyses).
HEAVY = (
    "derivls.aten.native",
    "derivls.aten.schema",
    "derivls.derivatives.loader",
    "derivls.derivatives.releases",
    "derivls.derivatives.profiles",
    "derivls.derivatives.formulas.headers",
    "derivls.project.opener",
    "derivls.yamlsubset",
    "derivls.cli.codegen",
)
MISTAKES = (
    "- name: abs(Tensor selff) -> Tensor\n  self: grad * self.sgn()\n"
    "- name: mul.Tensor(Tensor self, Tensor other) -> Tensor\n  self: grad * other.sizs()\n  othr: grad\n"
)


@pytest.fixture
def checkout(tmp_path: Path) -> Path:
    """A copy of the small checkout fixture, with a version.txt and mistakes appended to derivatives.yaml."""
    root = tmp_path / "pytorch"
    shutil.copytree(FIXTURES / "checkout", root)
    (root / "version.txt").write_text("2.4.0\n")
    (root / "tools/autograd/templates").mkdir(parents=True)
    (root / "tools/autograd/templates/Functions.cpp").write_text("using at::Tensor;\n")
    derivatives = root / "tools/autograd/derivatives.yaml"
    derivatives.write_text(derivatives.read_text() + MISTAKES)
    return root


@pytest.fixture
def wheel(tmp_path: Path) -> Path:
    site = tmp_path / "site"
    shutil.copytree(FIXTURES / "packaged", site)
    (site / "torch/version.py").write_text("__version__ = '2.5.0+cpu'\n")
    return site


def run(*args: str, cache: Path, cwd: Path | None = None, env: dict[str, str] | None = None):
    full_env = dict(os.environ, DERIVLS_CACHE_DIR=str(cache), **(env or {}))
    full_env.pop("DERIVLS_NO_CACHE", None)
    return subprocess.run(
        [sys.executable, "-m", "derivls", *args], capture_output=True, text=True, cwd=cwd, env=full_env, check=False
    )


def entries(cache: Path) -> list[Path]:
    """The result entries in `cache`, once a detached writer still writing them is done (derivls/base/writebehind.py)."""
    wait_for_writer(cache)
    return sorted(cache.glob(f"{resultcache.KIND}-*.pickle")) if cache.is_dir() else []


def written(read, seconds: float = 60.0):
    """What `read()` gives once the detached writer has written it: on a loaded machine the writer may start
    after the command exits, or pause past wait_for_writer's stall limit, so the read is tried again until
    it gives something (at most `seconds`)."""
    import time

    deadline = time.monotonic() + seconds
    while True:
        value = read()
        if value is not None or time.monotonic() > deadline:
            return value
        time.sleep(0.1)


# -- a second check answers from the cache, identically --------------------------------------------


@pytest.mark.parametrize("fmt", ["text", "json", "github"])
def test_a_second_check_prints_exactly_what_the_first_printed(checkout: Path, tmp_path: Path, fmt: str) -> None:
    cache = tmp_path / "cache"
    first = run("check", "tools/autograd/derivatives.yaml", "--format", fmt, cache=cache, cwd=checkout)
    assert len(entries(cache)) == 1
    second = run("check", "tools/autograd/derivatives.yaml", "--format", fmt, cache=cache, cwd=checkout)
    fresh = run("check", "tools/autograd/derivatives.yaml", "--format", fmt, "--no-cache", cache=cache, cwd=checkout)
    assert first.returncode == second.returncode == fresh.returncode == 1
    assert first.stdout == second.stdout == fresh.stdout
    assert first.stderr == second.stderr == ""
    assert "schema-not-found" in second.stdout


def test_a_clean_file_keeps_exit_status_0_and_the_rules_line(wheel: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = str(wheel / "torchgen/packaged/autograd/derivatives.yaml")
    first, second = (run("check", path, cache=cache) for _ in range(2))
    assert first.returncode == second.returncode
    assert first.stdout == second.stdout
    assert "using torch 2.5 rules (torch/version.py says 2.5.0+cpu)" in second.stdout


def test_a_hit_does_not_analyse(checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(tmp_path / "cache"))
    monkeypatch.delenv("DERIVLS_NO_CACHE", raising=False)
    path = str(checkout / "tools/autograd/derivatives.yaml")
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["check", path]) == 1
    first = out.getvalue()

    import derivls.cli.report
    import derivls.project.analyse

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("analysed although the inputs are unchanged")

    monkeypatch.setattr(derivls.project.analyse, "analyse_path_with_rules", refuse)
    out.truncate(0)
    out.seek(0)
    assert cli.main(["check", path]) == 1
    assert out.getvalue() == first


def test_a_hit_imports_none_of_the_heavy_modules(checkout: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = str(checkout / "tools/autograd/derivatives.yaml")
    assert run("check", path, cache=cache).returncode == 1  # fills the cache
    probe = (
        "import sys, io\n"
        "from derivls.__main__ import drop_working_directory\n"
        "from derivls.cli import main\n"
        "real, sys.stdout = sys.stdout, io.StringIO()\n"
        f"status = main(['check', {path!r}])\n"
        "sys.stdout = real\n"
        f"print(status, sorted(m for m in {HEAVY!r} if m in sys.modules))\n"
    )
    env = dict(os.environ, DERIVLS_CACHE_DIR=str(cache))
    env.pop("DERIVLS_NO_CACHE", None)
    hit = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, env=env, check=True)
    assert hit.stdout.split(None, 1) == ["1", "[]\n"]
    cache_miss = probe.replace("main(['check'", "main(['check', '--no-cache'")
    miss = subprocess.run([sys.executable, "-c", cache_miss], capture_output=True, text=True, env=env, check=True)
    assert "derivls.derivatives.loader" in miss.stdout  # the probe can see a heavy import


def test_profile_choices_spelled_out_in_the_cli_equal_the_profiles() -> None:
    from derivls.derivatives.profiles import AUTO, CHOICES

    assert (cli.AUTO, cli.CHOICES) == (AUTO, CHOICES)


# -- every input is part of the key ----------------------------------------------------------------


def key_of(root: Path, **options: object) -> str | None:
    derivatives = options.pop("derivatives", root / "tools/autograd/derivatives.yaml")
    return resultcache.check_key(derivatives, **options)  # type: ignore[arg-type]


CHECKOUT_FILES = [
    "tools/autograd/derivatives.yaml",
    "aten/src/ATen/native/native_functions.yaml",
    "aten/src/ATen/native/tags.yaml",
    "torch/csrc/autograd/FunctionsManual.h",
    "aten/src/ATen/templates/TensorBody.h",
    "aten/src/ATen/core/TensorBase.h",
    "tools/autograd/templates/Functions.cpp",
    "version.txt",
]


@pytest.mark.parametrize("relative", CHECKOUT_FILES)
def test_changing_any_input_file_changes_the_key(checkout: Path, relative: str) -> None:
    before = key_of(checkout)
    assert before is not None and key_of(checkout) == before
    path = checkout / relative
    stat = path.stat()
    path.write_text(path.read_text() + "\n# changed\n")
    os.utime(path, ns=(stat.st_atime_ns, stat.st_mtime_ns))  # same mtime: the content decides
    assert key_of(checkout) != before


@pytest.mark.parametrize("relative", [f for f in CHECKOUT_FILES if f != "tools/autograd/derivatives.yaml"])
def test_removing_an_input_file_changes_the_key(checkout: Path, relative: str) -> None:
    before = key_of(checkout)
    (checkout / relative).unlink()
    assert key_of(checkout) != before


def test_the_wheel_layouts_version_py_and_headers_are_in_the_key(wheel: Path) -> None:
    derivatives = wheel / "torchgen/packaged/autograd/derivatives.yaml"
    keys = {resultcache.check_key(derivatives)}
    for relative in (
        "torch/version.py",
        "torch/include/torch/csrc/autograd/FunctionsManual.h",
        "torch/include/ATen/core/TensorBase.h",
        "torchgen/packaged/ATen/templates/TensorBody.h",
    ):
        (wheel / relative).write_text((wheel / relative).read_text() + "\n")
        keys.add(resultcache.check_key(derivatives))
    (wheel / "torch/include/ATen/core/TensorBody.h").write_text("class Tensor {};\n")  # appears
    keys.add(resultcache.check_key(derivatives))
    assert len(keys) == 6


def test_each_option_changes_the_key(checkout: Path, tmp_path: Path) -> None:
    native = checkout / "aten/src/ATen/native/native_functions.yaml"
    tags = checkout / "aten/src/ATen/native/tags.yaml"
    other = tmp_path / "elsewhere" / "native_functions.yaml"
    other.parent.mkdir()
    other.write_text(native.read_text())
    keys = [
        key_of(checkout),
        key_of(checkout, profile="legacy"),
        key_of(checkout, profile="torchgen"),
        key_of(checkout, torch_version="2.4"),
        key_of(checkout, native=native),
        key_of(checkout, native=other),
        key_of(checkout, native=native, tags=tags),
        key_of(checkout, tags=tags),
    ]
    assert None not in keys and len(set(keys)) == len(keys)


def test_the_layout_is_in_the_key(checkout: Path) -> None:
    before = key_of(checkout)
    (checkout / "torchgen").mkdir()  # a checkout with torchgen/: the torchgen profile by the layout
    assert key_of(checkout) != before


def test_the_path_as_given_is_in_the_key(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(checkout)
    relative = Path("tools/autograd/derivatives.yaml")
    assert key_of(checkout, derivatives=relative) != key_of(checkout, derivatives=checkout / relative)


def test_a_buffer_text_equal_to_the_file_has_the_files_key(checkout: Path) -> None:
    derivatives = checkout / "tools/autograd/derivatives.yaml"
    text = derivatives.read_text()
    assert resultcache.check_key(derivatives, text=text) == resultcache.check_key(derivatives)
    assert resultcache.check_key(derivatives, text=text + "\n") != resultcache.check_key(derivatives)


def test_the_code_fingerprint_is_in_the_key(checkout: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    before = key_of(checkout)
    monkeypatch.setattr(diskcache, "_SALT", diskcache._SALT + " other code")
    assert key_of(checkout) != before


def test_an_input_that_is_not_a_regular_file_is_not_cached(checkout: Path) -> None:
    fifo = checkout / "tools/autograd/fifo.yaml"
    os.mkfifo(fifo)
    assert key_of(checkout, derivatives=fifo) is None
    assert key_of(checkout, derivatives=checkout / "missing.yaml") is None
    assert key_of(checkout, native=checkout / "missing.yaml") is None  # a usage error of the full check


def test_a_changed_file_is_reported_anew(checkout: Path, tmp_path: Path) -> None:
    cache = tmp_path / "cache"
    path = str(checkout / "tools/autograd/derivatives.yaml")
    first = run("check", path, "--format", "json", cache=cache)
    (checkout / "tools/autograd/derivatives.yaml").write_text(
        (checkout / "tools/autograd/derivatives.yaml").read_text().replace("selff", "self")
    )
    second = run("check", path, "--format", "json", cache=cache)
    assert "schema-not-found" in {d["code"] for d in json.loads(first.stdout)}
    assert "schema-not-found" not in {d["code"] for d in json.loads(second.stdout)}
    assert len(entries(cache)) == 2


# -- --no-cache, and entries that cannot be used ---------------------------------------------------


def test_no_cache_neither_reads_nor_writes(checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    cache = tmp_path / "cache"
    path = str(checkout / "tools/autograd/derivatives.yaml")
    fresh = run("check", path, "--no-cache", cache=cache)
    assert not cache.exists()  # nothing written
    run("check", path, cache=cache)  # fills it (a detached writer: waited for)
    key = resultcache.check_key(Path(path))
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(cache))
    assert key is not None and isinstance(written(lambda: resultcache.load(DiskCache(), key)), resultcache.CachedCheck)

    get, put = DiskCache.get, DiskCache.put

    def refuse(real):  # a disabled cache may be asked (it answers nothing); an enabled one must not be
        def method(self: DiskCache, *args: object) -> object:
            assert not self.enabled, "the cache was used"
            return real(self, *args)

        return method

    monkeypatch.setattr(DiskCache, "get", refuse(get))
    monkeypatch.setattr(DiskCache, "put", refuse(put))
    out = io.StringIO()
    monkeypatch.setattr(sys, "stdout", out)
    assert cli.main(["check", path, "--no-cache"]) == fresh.returncode
    assert out.getvalue() == fresh.stdout


@pytest.mark.parametrize("content", [b"", b"garbage \x00\x01", pickle.dumps({"foreign": 1}), b"\x80\x05truncated"])
def test_an_unreadable_or_foreign_entry_is_ignored_and_rewritten(
    checkout: Path, tmp_path: Path, content: bytes
) -> None:
    cache = tmp_path / "cache"
    path = str(checkout / "tools/autograd/derivatives.yaml")
    first = run("check", path, "--format", "json", cache=cache)
    [entry] = entries(cache)
    entry.write_bytes(content)
    second = run("check", path, "--format", "json", cache=cache)
    assert (second.returncode, second.stdout, second.stderr) == (first.returncode, first.stdout, "")
    wait_for_writer(cache)
    assert isinstance(pickle.loads(entry.read_bytes()), resultcache.CachedCheck)  # rewritten


def test_check_compile_is_not_answered_from_the_cache(
    checkout: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("DERIVLS_CACHE_DIR", str(tmp_path / "cache"))
    path = str(checkout / "tools/autograd/derivatives.yaml")
    assert cli.main(["check", path]) == 1  # fills the cache

    def refuse(*args: object, **kwargs: object) -> None:
        raise AssertionError("check --compile used the whole-result cache")

    monkeypatch.setattr(resultcache, "check_key", refuse)
    monkeypatch.setattr(resultcache, "load", refuse)
    import derivls.cli.compile
    import derivls.compile.document

    analysed: list[str] = []

    def no_compiler(path: Path, analysis: object, **options: object) -> None:
        analysed.append(str(path))
        raise LookupError("no compiler in this test")

    monkeypatch.setattr(derivls.compile.document, "compile_file", no_compiler)
    err = io.StringIO()
    monkeypatch.setattr(sys, "stderr", err)
    assert cli.main(["check", path, "--compile"]) == 2
    assert analysed == [path] and "no compiler in this test" in err.getvalue()
