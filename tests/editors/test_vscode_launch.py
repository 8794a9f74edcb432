"""The VS Code extension's default launch never runs workspace code (issue 12, item 1).

The argv comes from the extension's own logic (editors/vscode/src/serverCommand.ts, bundled on the
fly with the extension's esbuild and run in node), the working directory is the extension's folder as
in extension.ts; the workspace shadows derivls, yaml, pygls, lsprotocol and stdlib modules. The
server must answer and none of those modules may run. The old launch (`python -m derivls serve` in
the workspace folder) runs them, which shows the test can fail.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests.editors.shadowing import add_shadowing_modules, imported

pytestmark = pytest.mark.editors

REPO = Path(__file__).resolve().parents[2]
EXTENSION_DIR = REPO / "editors" / "vscode"

CANDIDATES_JS = r"""
const esbuild = require('esbuild');
const built = esbuild.buildSync({
  entryPoints: ['src/serverCommand.ts'], bundle: true, write: false, platform: 'node', format: 'cjs', logLevel: 'error',
});
const mod = { exports: {} };
new Function('module', 'exports', 'require', built.outputFiles[0].text)(mod, mod.exports, require);
const ctx = JSON.parse(process.argv[1]);
process.stdout.write(JSON.stringify(mod.exports.serverCandidates({}, ctx)));
"""


def extension_candidates(ctx: dict) -> list[dict]:
    """serverCandidates({}, ctx) of the extension: the default launch, best first."""
    if shutil.which("node") is None:
        pytest.fail("node is needed to run the extension's launch logic (Node 20+)")
    if not (EXTENSION_DIR / "node_modules" / "esbuild").is_dir():
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=EXTENSION_DIR, check=True, capture_output=True)
    out = subprocess.run(
        ["node", "-e", CANDIDATES_JS, json.dumps(ctx)],
        cwd=EXTENSION_DIR,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert out.returncode == 0, out.stderr
    return json.loads(out.stdout)


def _frame(message: dict) -> bytes:
    body = json.dumps(message).encode()
    return b"Content-Length: %d\r\n\r\n%s" % (len(body), body)


def _frames(data: bytes) -> list[dict]:
    frames = []
    while data:
        header, _, rest = data.partition(b"\r\n\r\n")
        length = int(dict(line.split(b": ", 1) for line in header.split(b"\r\n"))[b"Content-Length"])
        frames.append(json.loads(rest[:length]))
        data = rest[length:]
    return frames


def serve_once(argv: list[str], cwd: Path, workspace: Path, derivatives: Path) -> list[dict]:
    """initialize, open derivatives.yaml, hover, shutdown, exit: the frames the server sent back."""
    text = derivatives.read_text(encoding="utf-8")
    acos = next(i for i, line in enumerate(text.splitlines()) if line.startswith("- name: acos("))
    messages = [
        {
            "jsonrpc": "2.0",
            "id": 1,
            "method": "initialize",
            "params": {"processId": None, "rootUri": workspace.as_uri(), "capabilities": {}},
        },
        {"jsonrpc": "2.0", "method": "initialized", "params": {}},
        {
            "jsonrpc": "2.0",
            "method": "textDocument/didOpen",
            "params": {"textDocument": {"uri": derivatives.as_uri(), "languageId": "yaml", "version": 1, "text": text}},
        },
        {
            "jsonrpc": "2.0",
            "id": 2,
            "method": "textDocument/hover",
            "params": {"textDocument": {"uri": derivatives.as_uri()}, "position": {"line": acos, "character": 9}},
        },
        {"jsonrpc": "2.0", "id": 3, "method": "shutdown", "params": None},
        {"jsonrpc": "2.0", "method": "exit", "params": None},
    ]
    env = {k: v for k, v in os.environ.items() if k != "PYTHONSAFEPATH"}
    proc = subprocess.run(
        argv,
        cwd=cwd,
        env=env,
        input=b"".join(_frame(m) for m in messages),
        capture_output=True,
        timeout=120,
        check=False,
    )
    try:
        return _frames(proc.stdout)
    except (ValueError, KeyError) as exc:
        raise AssertionError(
            f"exit {proc.returncode}; stdout {proc.stdout[:500]!r}; stderr {proc.stderr[-2000:]!r}"
        ) from exc


@pytest.fixture
def shadowing_checkout(tmp_path: Path, real_files) -> tuple[Path, Path, Path]:
    workspace = tmp_path / "pytorch"
    native = workspace / "aten" / "src" / "ATen" / "native"
    native.mkdir(parents=True)
    shutil.copy(real_files.native, native / "native_functions.yaml")
    shutil.copy(real_files.tags, native / "tags.yaml")
    derivatives = workspace / "tools" / "autograd" / "derivatives.yaml"
    derivatives.parent.mkdir(parents=True)
    shutil.copy(real_files.derivatives, derivatives)
    marker = tmp_path / "imported.txt"
    add_shadowing_modules(workspace, marker)
    return workspace, derivatives, marker


def test_vscode_default_launch_runs_no_workspace_code(shadowing_checkout):
    workspace, derivatives, marker = shadowing_checkout
    ctx = {
        "platform": sys.platform,
        "home": str(Path.home()),
        "workspaceFolder": str(workspace),
        "env": {"PATH": os.environ.get("PATH", "")},
        "pythonExtensionInterpreter": sys.executable,
        "neutralCwd": str(EXTENSION_DIR),
    }
    first = extension_candidates(ctx)[0]
    assert first["command"] == sys.executable and first["display"] == f"{sys.executable} -m derivls serve"
    # The probe, then the server, both in the extension's folder as extension.ts starts them.
    probe = subprocess.run(
        [first["probe"]["command"], *first["probe"]["args"]], cwd=EXTENSION_DIR, capture_output=True, check=False
    )
    assert probe.returncode == 0, probe.stderr
    frames = serve_once([first["command"], *first["args"]], EXTENSION_DIR, workspace, derivatives)
    by_id = {f["id"]: f for f in frames if "id" in f and "method" not in f}
    assert by_id[1]["result"]["serverInfo"]["name"] == "derivls", frames[:3]
    assert "error" not in by_id[2] and "error" not in by_id[3], by_id
    assert imported(marker) == []


def test_the_same_launch_runs_nothing_even_from_the_workspace_folder(shadowing_checkout):
    """The bootstrap alone (without the neutral working directory) keeps the workspace off sys.path."""
    workspace, derivatives, marker = shadowing_checkout
    ctx = {"platform": sys.platform, "home": str(Path.home()), "env": {}, "pythonExtensionInterpreter": sys.executable}
    first = extension_candidates(ctx)[0]
    frames = serve_once([first["command"], *first["args"]], workspace, workspace, derivatives)
    assert any(f.get("id") == 1 and "result" in f for f in frames)
    assert imported(marker) == []


def test_the_old_launch_from_the_workspace_folder_ran_workspace_code(shadowing_checkout):
    """What the extension did before (`python -m derivls serve` with the workspace as cwd): the test can fail."""
    workspace, derivatives, marker = shadowing_checkout
    subprocess.run(
        [sys.executable, "-m", "derivls", "serve"],
        cwd=workspace,
        input=b"",
        capture_output=True,
        timeout=60,
        check=False,
    )
    assert imported(marker)[:1] == ["derivls"]


def test_python_m_derivls_drops_the_working_directory_before_importing_dependencies(tmp_path: Path):
    """`python -m derivls` from a folder shadowing its dependencies (not derivls itself) imports none of them."""
    marker = tmp_path / "imported.txt"
    add_shadowing_modules(tmp_path, marker)
    shutil.rmtree(tmp_path / "derivls")  # imported by `-m` before any derivls code runs: the launchers' job
    (tmp_path / "derivatives.yaml").write_text("- name: abs(Tensor self) -> Tensor\n  self: grad\n")
    (tmp_path / "native_functions.yaml").write_text("- func: abs(Tensor self) -> Tensor\n")
    argv = ["check", "derivatives.yaml", "--native", "native_functions.yaml", "--format", "json"]  # imports json
    run = subprocess.run([sys.executable, "-m", "derivls", *argv], cwd=tmp_path, capture_output=True, text=True)
    codes = [row["code"] for row in json.loads(run.stdout)]  # a lone file: only the C++-sources notice
    assert (run.returncode, codes) == (0, ["formula-sources-missing"]), run.stderr
    assert imported(marker) == []
    # The same command with the folder on sys.path (as `-m` puts it there) does import a shadow
    # (`logging` or `json`, whichever the command reaches first).
    code = f"import sys; sys.path.insert(0, {str(tmp_path)!r}); sys.argv = ['derivls', *{argv!r}]; import derivls.cli.commandline"
    subprocess.run([sys.executable, "-c", code + "; derivls.cli.main()"], cwd=tmp_path, capture_output=True)
    assert set(imported(marker)) & {"json", "logging"}


def test_drop_working_directory():
    from derivls.__main__ import drop_working_directory

    assert drop_working_directory(["/w", "", ".", "/lib", "/w/", "/w/sub"], "/w") == ["/lib", "/w/sub"]
    assert drop_working_directory(["rel", "/lib"], None) == ["/lib"]
