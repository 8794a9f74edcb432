"""The VS Code extension in a real VS Code: code-server + headless Chromium driven by Playwright.

setup.sh installs code-server (npm), Chromium and ripgrep (apt) and Playwright (pip), once, into a
cache; this module runs it (fast when cached), installs the freshly built editors/vscode/derivls.vsix
into a private extensions folder and drives VS Code as a user would, scenario by scenario:

- a workspace laid out like a torch wheel (torchgen/packaged/autograd/derivatives.yaml beside
  ../ATen/native/{native_functions,tags}.yaml), and one laid out like a PyTorch checkout
  (tools/autograd/derivatives.yaml, aten/src/ATen/native/...) that also holds Python packages shadowing
  derivls, yaml, pygls, lsprotocol and stdlib modules: the server (started exactly as the extension
  starts it by default: `python3` from the login shell's PATH) must answer and none of them may run;
- a machine where no Python has derivls, pygls or lsprotocol (a `venv --without-pip` python3 first on
  PATH) and the default settings: the server the .vsix carries (bundled/libs) runs, and diagnostics,
  hover with the node name and inlay hints appear on first open;
- `derivls.importStrategy: fromEnvironment` where no server is installed: the notification names what
  was tried and "derivls: Show Output" works while it is open.

Each scenario runs its steps in order (a failing step is recorded with a screenshot and the later
steps still run where they can); the tests below assert on the recorded steps. Screenshots and
timings go to the folder printed at the start ($DERIVLS_E2E_ARTIFACTS, else a temporary folder).
Every wait is on a UI element, bounded.
"""

from __future__ import annotations

import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.request
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pytest

try:
    from playwright.sync_api import TimeoutError as PlaywrightTimeout
except ImportError:  # the `browser` fixture fails with the reason
    PlaywrightTimeout = TimeoutError  # type: ignore[misc,assignment]

from tests.editors.shadowing import add_shadowing_modules, imported
from tests.editors.vsix import built_vsix

pytestmark = pytest.mark.editors

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[2]
EXTENSION_DIR = REPO / "editors" / "vscode"
VSIX = EXTENSION_DIR / "derivls.vsix"
SETUP = HERE / "setup.sh"
CHROMIUM = os.environ.get("DERIVLS_E2E_CHROMIUM", "/usr/bin/chromium")
CHROMIUM_FLAGS = [
    "--headless",
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
UI_TIMEOUT_MS = 120_000  # the first open indexes native_functions.yaml (about 10 s here, more on a busy CI)
SHORT_MS = 30_000
IN_CI = os.environ.get("CI", "").lower() == "true"

# The steps a scenario may run; tests look their results up by these names.
USER_SETTINGS = {
    "security.workspace.trust.enabled": False,
    "workbench.startupEditor": "none",
    "workbench.tips.enabled": False,
    "workbench.enableExperiments": False,
    "workbench.secondarySideBar.defaultVisibility": "hidden",
    "chat.commandCenter.enabled": False,
    "telemetry.telemetryLevel": "off",
    "update.mode": "none",
    "extensions.autoCheckUpdates": False,
    "extensions.autoUpdate": False,
    "extensions.ignoreRecommendations": True,
    "git.enabled": False,
    "editor.inlayHints.enabled": "on",
    "editor.codeLens": True,
    "editor.minimap.enabled": False,
    "files.autoSave": "off",
    "window.restoreWindows": "none",
}


def fail_missing(message: str) -> None:
    """Missing tools fail the test (never skip); the message says how to install them."""
    pytest.fail(message)


# ---------------------------------------------------------------------------------------------
# Installation


@dataclass(frozen=True)
class Tools:
    code_server: Path
    extensions_dir: Path
    artifacts: Path
    install_seconds: float


def _artifacts_dir() -> tuple[Path, bool]:
    """The folder of screenshots and logs, and whether it is a temporary one (removed after a passing run)."""
    explicit = os.environ.get("DERIVLS_E2E_ARTIFACTS")
    if explicit:
        path = Path(explicit)
        path.mkdir(parents=True, exist_ok=True)
        return path, False
    return Path(tempfile.mkdtemp(prefix="derivls-vscode-e2e-")), True


def _keep_or_remove(artifacts: Path, temporary: bool, failed: int) -> None:
    """A temporary artifacts folder is removed when every test passed and kept (its path printed) when one failed;
    DERIVLS_E2E_ARTIFACTS names a folder that is always kept."""
    if temporary and not failed:
        shutil.rmtree(artifacts, ignore_errors=True)
    else:
        print(f"\n[vscode e2e] kept: {artifacts}", file=sys.__stderr__, flush=True)


def _run(argv: list[str], cwd: Path, log: Path, env: dict[str, str] | None = None, timeout: float = 1800) -> str:
    with open(log, "a", encoding="utf-8") as out:
        out.write(f"$ {' '.join(argv)}\n")
        out.flush()
        proc = subprocess.run(
            argv, cwd=cwd, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True, timeout=timeout
        )
        out.write(proc.stdout)
    if proc.returncode != 0:
        pytest.fail(f"{' '.join(argv)} failed ({proc.returncode}); log: {log}\n{proc.stdout[-4000:]}")
    return proc.stdout


@pytest.fixture(scope="session")
def tools(request: pytest.FixtureRequest) -> Iterator[Tools]:
    artifacts, temporary = _artifacts_dir()
    print(f"\n[vscode e2e] screenshots and logs: {artifacts}", file=sys.__stderr__, flush=True)
    log = artifacts / "install.log"
    start = time.monotonic()
    if shutil.which("node") is None or shutil.which("npm") is None:
        fail_missing("node 20 and npm are needed for the VS Code end-to-end test")
    env = {**os.environ, "PYTHON": sys.executable}
    out = _run(["bash", str(SETUP)], cwd=REPO, log=log, env=env)
    found = re.findall(r"^CODE_SERVER=(.+)$", out, re.M)
    if not found or not Path(found[-1]).exists():
        pytest.fail(f"setup.sh did not print an existing CODE_SERVER=...; log: {log}")
    code_server = Path(found[-1])
    if not Path(CHROMIUM).exists():
        pytest.fail(f"{CHROMIUM} is missing after setup.sh; log: {log}")
    # The extension's own build, the server bundled (editors/vscode/ci.sh does the same with its checks).
    built_vsix(log)
    extensions_dir = artifacts / "extensions"
    shutil.rmtree(extensions_dir, ignore_errors=True)
    xdg = artifacts / "install-xdg"
    _run(
        [
            str(code_server),
            "--extensions-dir",
            str(extensions_dir),
            "--user-data-dir",
            str(artifacts / "install-user-data"),
            "--install-extension",
            str(VSIX),
            "--force",
        ],
        cwd=REPO,
        log=log,
        env={**os.environ, "XDG_CONFIG_HOME": str(xdg / "config"), "XDG_DATA_HOME": str(xdg / "data")},
    )
    installed = list(extensions_dir.glob("derivls.derivls-*"))
    if not installed:
        pytest.fail(f"the .vsix did not install into {extensions_dir}; log: {log}")
    seconds = time.monotonic() - start
    (artifacts / "timings.txt").open("a").write(f"install (setup.sh + vsix): {seconds:.1f} s\n")
    print(f"[vscode e2e] install: {seconds:.1f} s", file=sys.__stderr__, flush=True)
    yield Tools(code_server, extensions_dir, artifacts, seconds)
    _keep_or_remove(artifacts, temporary, request.session.testsfailed)


# ---------------------------------------------------------------------------------------------
# Workspaces


@dataclass
class Workspace:
    root: Path
    derivatives: Path
    lines: list[str]
    marker: Path | None = None

    def line_of(self, prefix: str) -> int:
        """1-based line of the first line starting with `prefix`."""
        return next(i for i, line in enumerate(self.lines, 1) if line.startswith(prefix))

    def relative(self) -> str:
        return self.derivatives.relative_to(self.root).as_posix()


SEED_FROM = "  self: grad * self.sgn()"  # abs's formula
SEED_TO = "  self: grads[0] * self.sgn()"  # grads-solely-zero, with the quick fix "Replace 'grads[0]' with 'grad'"


def _seeded_text(real: Path) -> str:
    lines = real.read_text(encoding="utf-8").splitlines(keepends=True)
    abs_line = next(i for i, line in enumerate(lines) if line.startswith("- name: abs(Tensor self) -> Tensor"))
    assert lines[abs_line + 1].rstrip("\n") == SEED_FROM, lines[abs_line + 1]
    lines[abs_line + 1] = SEED_TO + "\n"
    return "".join(lines)


def make_wheel_workspace(root: Path, real_files) -> Workspace:
    packaged = root / "torchgen" / "packaged"
    (packaged / "ATen" / "native").mkdir(parents=True)
    (packaged / "autograd").mkdir(parents=True)
    shutil.copy(real_files.native, packaged / "ATen" / "native" / "native_functions.yaml")
    shutil.copy(real_files.tags, packaged / "ATen" / "native" / "tags.yaml")
    derivatives = packaged / "autograd" / "derivatives.yaml"
    derivatives.write_text(_seeded_text(real_files.derivatives), encoding="utf-8")
    return Workspace(root, derivatives, derivatives.read_text(encoding="utf-8").splitlines())


def make_checkout_workspace(root: Path, real_files, marker: Path) -> Workspace:
    native = root / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    (root / "tools" / "autograd").mkdir(parents=True)
    shutil.copy(real_files.native, native / "native_functions.yaml")
    shutil.copy(real_files.tags, native / "tags.yaml")
    derivatives = root / "tools" / "autograd" / "derivatives.yaml"
    derivatives.write_text(_seeded_text(real_files.derivatives), encoding="utf-8")
    add_shadowing_modules(root, marker)
    return Workspace(root, derivatives, derivatives.read_text(encoding="utf-8").splitlines(), marker)


# ---------------------------------------------------------------------------------------------
# code-server + Chromium


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@dataclass
class StepResult:
    ok: bool
    value: Any = None
    error: str = ""
    seconds: float = 0.0


@dataclass
class Session:
    """One scenario: a code-server with its own HOME and user data, and one browser page."""

    name: str
    tools: Tools
    workspace: Workspace
    server_on_path: bool
    settings: dict[str, Any] = field(default_factory=dict)  # user settings beyond USER_SETTINGS
    steps: dict[str, StepResult] = field(default_factory=dict)
    shots: Path = field(init=False)
    page: Any = None

    def __post_init__(self) -> None:
        self.shots = self.tools.artifacts / self.name
        self.shots.mkdir(parents=True, exist_ok=True)
        self._shot_index = 0

    def screenshot(self, label: str) -> Path | None:
        if self.page is None:
            return None
        self._shot_index += 1
        path = self.shots / f"{self._shot_index:02d}-{label}.png"
        try:
            self.page.screenshot(path=str(path))
        except Exception as exc:  # noqa: BLE001 - a failed screenshot must not hide the step's own error
            path.with_suffix(".txt").write_text(f"screenshot failed: {exc}\n")
        return path

    def step(self, name: str, fn: Callable[[], Any]) -> Any:
        start = time.monotonic()
        try:
            value = fn()
        except Exception:  # noqa: BLE001 - recorded; the tests assert on it
            self.steps[name] = StepResult(False, error=traceback.format_exc(), seconds=time.monotonic() - start)
            self.screenshot(f"{name}-FAILED")
            return None
        self.steps[name] = StepResult(True, value=value, seconds=time.monotonic() - start)
        self.screenshot(name)
        return value

    def result(self, name: str) -> Any:
        if name not in self.steps:
            pytest.fail(f"[{self.name}] step {name!r} did not run; steps: {list(self.steps)}; {self.where()}")
        r = self.steps[name]
        if not r.ok:
            pytest.fail(f"[{self.name}] step {name!r} failed:\n{r.error}\n{self.where()}")
        return r.value

    def where(self) -> str:
        return f"screenshots and logs: {self.shots}"


def _environment(home: Path, with_server: bool) -> dict[str, str]:
    """code-server's environment; VS Code's server also reads PATH (and the rest) from the login shell."""
    base_path = "/usr/local/bin:/usr/bin:/bin"
    if with_server:
        path = f"{Path(sys.executable).parent}:{base_path}"
    else:
        # A python3 without derivls first on PATH (the system's may have one: an editable install).
        bare = home / "python-without-derivls"
        subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(bare)], check=True, timeout=120)
        path = f"{bare / 'bin'}:{base_path}"
    profile = [f"export PATH={path}"]
    env = {
        "HOME": str(home),
        "PATH": path,
        "SHELL": "/bin/bash",
        "LANG": "C.UTF-8",
        "XDG_CONFIG_HOME": str(home / ".config"),
        "XDG_DATA_HOME": str(home / ".local" / "share"),
        "XDG_CACHE_HOME": str(home / ".cache"),
    }
    if with_server and os.environ.get("PYTHONPATH"):
        # A development checkout (derivls not pip-installed into this Python) is found through PYTHONPATH.
        env["PYTHONPATH"] = os.environ["PYTHONPATH"]
        profile.append(f"export PYTHONPATH={os.environ['PYTHONPATH']}")
    home.mkdir(parents=True, exist_ok=True)
    (home / ".profile").write_text("\n".join(profile) + "\n", encoding="utf-8")
    return env


class CodeServer:
    def __init__(self, session: Session, home: Path) -> None:
        self.session = session
        self.port = _free_port()
        user_data = home / "user-data"
        (user_data / "User").mkdir(parents=True, exist_ok=True)
        settings = {**USER_SETTINGS, **session.settings}
        (user_data / "User" / "settings.json").write_text(json.dumps(settings, indent=1), encoding="utf-8")
        self.log = session.shots / "code-server.log"
        argv = [
            str(session.tools.code_server),
            "--bind-addr",
            f"127.0.0.1:{self.port}",
            "--auth",
            "none",
            "--user-data-dir",
            str(user_data),
            "--extensions-dir",
            str(session.tools.extensions_dir),
            "--disable-telemetry",
            "--disable-update-check",
            "--disable-workspace-trust",
            "--disable-getting-started-override",
            "--ignore-last-opened",
            str(session.workspace.root),
        ]
        self._out = open(self.log, "w", encoding="utf-8")  # noqa: SIM115 - closed in stop()
        self.proc = subprocess.Popen(
            argv,
            cwd=home,
            env=_environment(home, session.server_on_path),
            stdin=subprocess.DEVNULL,
            stdout=self._out,
            stderr=subprocess.STDOUT,
            start_new_session=True,
        )
        self.user_data = user_data

    def wait_ready(self, timeout_s: float = 120) -> None:
        deadline = time.monotonic() + timeout_s
        while time.monotonic() < deadline:
            if self.proc.poll() is not None:
                raise RuntimeError(f"code-server exited with {self.proc.returncode}; see {self.log}")
            try:
                with urllib.request.urlopen(f"http://127.0.0.1:{self.port}/healthz", timeout=2) as r:
                    if r.status == 200:
                        return
            except OSError:
                pass
            time.sleep(0.2)  # polling a port that is not open yet: nothing to wait on
        raise TimeoutError(f"code-server did not answer on port {self.port} within {timeout_s} s; see {self.log}")

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}/?folder={self.session.workspace.root}"

    def stop(self) -> None:
        if self.proc.poll() is None:
            os.killpg(self.proc.pid, signal.SIGTERM)
            try:
                self.proc.wait(timeout=20)
            except subprocess.TimeoutExpired:
                os.killpg(self.proc.pid, signal.SIGKILL)
                self.proc.wait(timeout=20)
        self._out.close()

    def extension_logs(self) -> str:
        """The derivls output channel and extension host logs VS Code wrote for this session."""
        texts = []
        for path in sorted(self.user_data.rglob("*.log")):
            if "derivls" in path.name or "exthost" in path.name or "remoteexthost" in path.name:
                texts.append(f"== {path}\n{path.read_text(errors='replace')[-6000:]}")
        return "\n".join(texts)


@dataclass
class Browser:
    playwright: Any
    browser: Any


@pytest.fixture(scope="module")
def browser(tools: Tools) -> Iterator[Browser]:
    try:
        from playwright.sync_api import sync_playwright
    except ImportError:  # pragma: no cover - setup.sh installs it
        fail_missing("Playwright is missing: pip install playwright (setup.sh installs it)")
    pw = sync_playwright().start()
    b = pw.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_FLAGS, headless=True)
    try:
        yield Browser(pw, b)
    finally:
        b.close()
        pw.stop()


# ---------------------------------------------------------------------------------------------
# Driving the workbench


MOD = "Control"


def open_page(session: Session, server: CodeServer, browser: Browser) -> None:
    context = browser.browser.new_context(viewport={"width": 1600, "height": 1000})
    context.set_default_timeout(UI_TIMEOUT_MS)
    page = context.new_page()
    session.page = page
    page.goto(server.url, wait_until="domcontentloaded")
    page.locator(".monaco-workbench").wait_for()
    page.locator(".explorer-folders-view, .explorer-viewlet").first.wait_for()


def run_command(page: Any, title: str) -> None:
    """F1, type the command's title, run the first match with that exact label."""
    page.keyboard.press("F1")
    box = page.locator(".quick-input-widget input.input")
    box.wait_for()
    box.fill(">" + title)
    item = page.locator(".quick-input-list .monaco-list-row", has_text=title).first
    item.wait_for()
    page.keyboard.press("Enter")
    page.locator(".quick-input-widget").wait_for(state="hidden")


def open_file_at(page: Any, relative: str, line: int) -> None:
    """Quick Open `path:line`: the file opens with the cursor on that line (the cursor is never moved after)."""
    page.keyboard.press(f"{MOD}+p")
    box = page.locator(".quick-input-widget input.input")
    box.wait_for()
    box.fill(f"{relative}:{line}")
    page.locator(".quick-input-list .monaco-list-row").first.wait_for()
    page.keyboard.press("Enter")
    page.locator(".quick-input-widget").wait_for(state="hidden")
    name = relative.rsplit("/", 1)[-1]
    page.locator(".tabs-container .tab.active", has_text=name).wait_for()
    page.locator(".monaco-editor .view-lines").first.wait_for()


def editor_line(page: Any, pattern: str) -> Any:
    """The rendered line of the active editor matching the regex `pattern` (it must be in view; VS Code
    renders spaces as no-break spaces, which `\\s` matches)."""
    return page.locator(".editor-instance .monaco-editor .view-lines .view-line", has_text=re.compile(pattern)).first


# The centre of the first occurrence of a word in a rendered line, from the text itself (not a guessed width).
WORD_CENTRE_JS = """(el, word) => {
  const walker = document.createTreeWalker(el, NodeFilter.SHOW_TEXT);
  for (let n = walker.nextNode(); n; n = walker.nextNode()) {
    const i = n.textContent.indexOf(word);
    if (i >= 0) {
      const r = document.createRange();
      r.setStart(n, i);
      r.setEnd(n, i + word.length);
      const b = r.getBoundingClientRect();
      return { x: b.x + b.width / 2, y: b.y + b.height / 2 };
    }
  }
  return null;
}"""


def text_of(locator: Any) -> str:
    """inner_text with VS Code's no-break and hair spaces (how it renders spaces and hint padding) as spaces."""
    return re.sub(r"[\u00a0\u200a]", " ", locator.inner_text())


def cursor_position(page: Any) -> str:
    """The status bar's `Ln x, Col y`."""
    item = page.locator(".statusbar-item", has_text=re.compile(r"Ln \d+, Col \d+")).first
    item.wait_for()
    return text_of(item).strip()


def run_scenario_with_server(session: Session, server: CodeServer, browser: Browser) -> None:
    ws = session.workspace
    abs_line = ws.line_of("- name: abs(Tensor self) -> Tensor")

    session.step("code_server_ready", server.wait_ready)
    session.step("workbench", lambda: open_page(session, server, browser))
    page = session.page

    def open_derivatives() -> dict[str, Any]:
        # Opened on abs's entry, so abs (seeded), acos and the lines after them are in view.
        open_file_at(page, ws.relative(), abs_line)
        return {"cursor": cursor_position(page)}

    session.step("open_derivatives", open_derivatives)

    def inlay_hints() -> dict[str, Any]:
        # No key press, click or scroll in the editor: the hints must come by themselves.
        acos = editor_line(page, r"name:\s+acos\(Tensor")
        acos.wait_for()
        acos.filter(has_text="AcosBackward0").wait_for()
        saves = page.locator(".editor-instance .view-lines .view-line", has_text="saves self: at::Tensor").first
        saves.wait_for()
        return {"acos_line": text_of(acos), "saves_line": text_of(saves), "cursor": cursor_position(page)}

    session.step("inlay_hints", inlay_hints)

    def code_lenses() -> dict[str, Any]:
        lens = page.locator(".monaco-editor .codelens-decoration", has_text="AcosBackward0").first
        lens.wait_for()
        return {
            "text": text_of(lens),
            "count": page.locator(".monaco-editor .codelens-decoration").count(),
            "cursor": cursor_position(page),
        }

    session.step("code_lenses", code_lenses)

    def hover() -> dict[str, Any]:
        # The mouse on the `acos` of `- name: acos(...)` (the cursor stays where it is).
        point = editor_line(page, r"name:\s+acos\(Tensor").evaluate(WORD_CENTRE_JS, "acos")
        page.mouse.move(point["x"], point["y"])
        hover_widget = page.locator(".monaco-hover:not(.hidden)", has_text="AcosBackward0").first
        hover_widget.wait_for(timeout=SHORT_MS)
        value = text_of(hover_widget)
        session.screenshot("hover-shown")
        page.keyboard.press("Escape")
        page.mouse.move(5, 5)
        return {"text": value}

    session.step("hover", hover)

    def problems() -> dict[str, Any]:
        run_command(page, "View: Focus Problems (Errors, Warnings, Infos)")
        row = page.locator(".markers-panel .monaco-list-row", has_text="only refer to 'grads[0]'").first
        row.wait_for(timeout=SHORT_MS)
        return {"row": text_of(row)}

    session.step("problems_panel", problems)

    def quick_fix() -> dict[str, Any]:
        row = page.locator(".markers-panel .monaco-list-row", has_text="only refer to 'grads[0]'").first
        row.dblclick()  # to the diagnostic in the editor
        editor_line(page, r"self:\s+grads\[0\]\s+\*\s+self\.sgn\(\)").wait_for(timeout=SHORT_MS)
        # Ctrl+. right after the jump can come before the editor has the code actions: ask again then.
        action = page.locator(
            ".action-widget .monaco-list-row.action.focused", has_text="Replace 'grads[0]' with 'grad'"
        ).first
        for attempt in range(5):
            page.keyboard.press(f"{MOD}+.")
            try:
                action.wait_for(timeout=5_000)
                break
            except PlaywrightTimeout:
                if attempt == 4:
                    raise
                page.keyboard.press("Escape")
        title = text_of(action)
        session.screenshot("quick-fix-menu")
        page.keyboard.press("Enter")  # the focused (first) quick fix
        editor_line(page, r"self:\s+grad\s+\*\s+self\.sgn\(\)").wait_for(timeout=SHORT_MS)
        page.locator(".markers-panel .monaco-list-row", has_text="only refer to 'grads[0]'").first.wait_for(
            state="detached", timeout=SHORT_MS
        )
        return {"action": title.strip(), "fixed": True}

    session.step("quick_fix", quick_fix)

    def generated_code() -> dict[str, Any]:
        lens = page.locator(".monaco-editor .codelens-decoration a", has_text="AcosBackward0").first
        lens.wait_for(timeout=SHORT_MS)
        lens.click()
        tab = page.locator(".tabs-container .tab", has_text="acos.cpp").first  # derivls-generated:/acos.cpp
        tab.wait_for(timeout=SHORT_MS)
        body = page.locator(
            ".editor-instance .view-lines",
            has_text=re.compile(r"struct\s+AcosBackward0\s+:\s+public\s+TraceableFunction"),
        ).first
        body.wait_for(timeout=SHORT_MS)
        return {"tab": text_of(tab), "text": text_of(body)[:3000]}

    session.step("generated_code", generated_code)


def run_scenario_without_server(session: Session, server: CodeServer, browser: Browser) -> None:
    ws = session.workspace
    session.step("code_server_ready", server.wait_ready)
    session.step("workbench", lambda: open_page(session, server, browser))
    page = session.page
    session.step("open_derivatives", lambda: open_file_at(page, ws.relative(), ws.line_of("- name: acos(Tensor self)")))

    def notification() -> dict[str, Any]:
        toast = page.locator(".notifications-toasts .notification-toast", has_text="cannot start the language server")
        toast.first.wait_for()
        return {"text": text_of(toast.first)}

    session.step("notification", notification)

    def show_output() -> dict[str, Any]:
        run_command(page, "derivls: Show Output")
        output = page.locator(".part.panel .monaco-editor .view-lines", has_text="cannot start the language server")
        output.first.wait_for()
        # One attempt, one notification: opening the file again does not stack up more of them.
        count = text_of(page.locator(".part.panel .monaco-editor .view-lines").first).count(
            "cannot start the language server"
        )
        still_open = page.locator(
            ".notifications-toasts .notification-toast", has_text="cannot start the language server"
        ).first.is_visible()
        return {"output": text_of(output.first), "notification_still_open": still_open, "count": count}

    session.step("show_output", show_output)


def _run_session(
    name: str,
    tools: Tools,
    browser: Browser,
    workspace: Workspace,
    tmp: Path,
    with_server: bool,
    settings: dict[str, Any] | None = None,
    expect_server: bool | None = None,
) -> Iterator[Session]:
    """`with_server`: the test's Python (derivls installed) first on PATH, else a bare venv's python3;
    `expect_server`: run the scenario where the server answers (default: `with_server`)."""
    session = Session(name, tools, workspace, server_on_path=with_server, settings=settings or {})
    server = CodeServer(session, tmp / "home")
    start = time.monotonic()
    try:
        if with_server if expect_server is None else expect_server:
            run_scenario_with_server(session, server, browser)
        else:
            run_scenario_without_server(session, server, browser)
    finally:
        seconds = time.monotonic() - start
        steps = {k: (v.ok, round(v.seconds, 1)) for k, v in session.steps.items()}
        with open(tools.artifacts / "timings.txt", "a", encoding="utf-8") as f:
            f.write(f"scenario {name}: {seconds:.1f} s; steps {steps}\n")
        print(f"[vscode e2e] scenario {name}: {seconds:.1f} s", file=sys.__stderr__, flush=True)
        if session.page is not None:
            session.page.context.close()
        server.stop()
        (session.shots / "extension-logs.txt").write_text(server.extension_logs(), encoding="utf-8")
    yield session


@pytest.fixture(scope="module")
def wheel(tools, browser, real_files, tmp_path_factory) -> Iterator[Session]:
    tmp = tmp_path_factory.mktemp("vscode-wheel")
    yield from _run_session("wheel", tools, browser, make_wheel_workspace(tmp / "ws", real_files), tmp, True)


@pytest.fixture(scope="module")
def checkout(tools, browser, real_files, tmp_path_factory) -> Iterator[Session]:
    tmp = tmp_path_factory.mktemp("vscode-checkout")
    ws = make_checkout_workspace(tmp / "pytorch", real_files, tmp / "imported.txt")
    yield from _run_session("checkout", tools, browser, ws, tmp, True)


@pytest.fixture(scope="module")
def bundled(tools, browser, real_files, tmp_path_factory) -> Iterator[Session]:
    """No Python on the machine has derivls, pygls or lsprotocol; default settings: the bundled server."""
    tmp = tmp_path_factory.mktemp("vscode-bundled")
    ws = make_wheel_workspace(tmp / "ws", real_files)
    yield from _run_session("bundled", tools, browser, ws, tmp, with_server=False, expect_server=True)


@pytest.fixture(scope="module")
def no_server(tools, browser, real_files, tmp_path_factory) -> Iterator[Session]:
    """The environment's server chosen (`fromEnvironment`) and none installed."""
    tmp = tmp_path_factory.mktemp("vscode-no-server")
    ws = make_wheel_workspace(tmp / "ws", real_files)
    settings = {"derivls.importStrategy": "fromEnvironment"}
    yield from _run_session("no-server", tools, browser, ws, tmp, with_server=False, settings=settings)


# ---------------------------------------------------------------------------------------------
# The tests

LAYOUTS = ["wheel", "checkout"]


@pytest.fixture(params=LAYOUTS)
def session(request) -> Session:
    return request.getfixturevalue(request.param)


def test_inlay_hints_appear_on_first_open_without_moving_the_cursor(session):
    opened = session.result("open_derivatives")
    hints = session.result("inlay_hints")
    assert "AcosBackward0" in hints["acos_line"]
    assert "saves self: at::Tensor" in hints["saves_line"]
    assert hints["cursor"] == opened["cursor"], (hints, opened)


def test_code_lenses_appear_without_moving_the_cursor(session):
    assert session.result("code_lenses")["cursor"] == session.result("open_derivatives")["cursor"]


def test_code_lenses_appear_on_first_open(session):
    lenses = session.result("code_lenses")
    assert "AcosBackward0" in lenses["text"] and lenses["count"] > 0


def test_hover_on_entry_name_names_the_backward_node(session):
    assert "AcosBackward0" in session.result("hover")["text"]


def test_seeded_grads0_is_in_the_problems_panel(session):
    row = session.result("problems_panel")["row"]
    assert "grads[0]" in row


def test_quick_fix_removes_the_diagnostic(session):
    assert session.result("quick_fix") == {"action": "Replace 'grads[0]' with 'grad'", "fixed": True}


def test_code_lens_opens_the_generated_code(session):
    gen = session.result("generated_code")
    assert "acos.cpp" in gen["tab"]
    assert "AcosBackward0" in gen["text"] and "TraceableFunction" in gen["text"]


def test_shadowing_workspace_runs_no_code(checkout):
    # The server answered (the steps above) and none of the workspace's derivls/, yaml/, pygls/, ... ran.
    checkout.result("hover")
    assert checkout.workspace.marker is not None
    assert imported(checkout.workspace.marker) == [], checkout.where()


def test_with_no_derivls_on_the_machine_the_bundled_server_shows_inlay_hints_on_first_open(bundled):
    opened = bundled.result("open_derivatives")
    hints = bundled.result("inlay_hints")
    assert "AcosBackward0" in hints["acos_line"] and "saves self: at::Tensor" in hints["saves_line"]
    assert hints["cursor"] == opened["cursor"], (hints, opened)


def test_with_no_derivls_on_the_machine_the_bundled_server_hovers_the_node_name(bundled):
    assert "AcosBackward0" in bundled.result("hover")["text"]


def test_with_no_derivls_on_the_machine_the_bundled_server_reports_the_seeded_grads0(bundled):
    assert "grads[0]" in bundled.result("problems_panel")["row"]


def test_without_server_the_notification_names_what_was_tried(no_server):
    text = no_server.result("notification")["text"]
    assert "`python3 -m derivls serve` (default python): ModuleNotFoundError: No module named 'derivls'" in text, text
    assert "`derivls serve` (PATH): not found" in text, text


def test_show_output_works_while_the_notification_is_open(no_server):
    shown = no_server.result("show_output")
    assert "cannot start the language server" in shown["output"]
    assert shown["notification_still_open"] is True
    assert shown["count"] == 1, shown["output"]
