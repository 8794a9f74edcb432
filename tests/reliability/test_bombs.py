"""YAML alias bombs ("billion laughs"): refused at the first anchor with a located diagnostic, in
bounded time and memory, by the CLI and by the server (which keeps answering)."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.reliability import inputs
from tests.reliability.conftest import MAX_RSS_MB, open_and_query, run_cli
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE, REAL_TAGS

DERIVATIVES_BOMBS = {
    "entry": inputs.bomb_in_entry,
    "output_differentiability": inputs.bomb_in_output_differentiability,
    "list_item": inputs.bomb_as_list_item,
}
REFUSED = "anchors and aliases"


@pytest.mark.parametrize("command", ["check", "dump", "codegen"])
@pytest.mark.parametrize("kind", list(DERIVATIVES_BOMBS))
def test_cli_refuses_a_derivatives_bomb_at_its_first_anchor(tmp_path: Path, yardstick, command: str, kind: str) -> None:
    text = DERIVATIVES_BOMBS[kind]()
    path = tmp_path / "derivatives.yaml"
    path.write_text(text, encoding="utf-8")
    run = run_cli(command, str(path), "--native", str(REAL_NATIVE))
    assert "Traceback" not in run.stderr
    assert run.seconds <= yardstick.cli_budget(len(text)), run.seconds
    assert run.peak_mb <= MAX_RSS_MB
    if command == "check":
        assert run.returncode == 1
        first_anchor = next(i for i, line in enumerate(text.splitlines()) if "&a0" in line)
        assert f"derivatives.yaml:{first_anchor + 1}:" in run.stdout and REFUSED in run.stdout, run.stdout
        assert "[yaml-syntax]" in run.stdout


@pytest.mark.parametrize("key", ["variants", "func", "tags", "dispatch"])
def test_cli_refuses_a_native_functions_bomb(tmp_path: Path, yardstick, key: str) -> None:
    native = tmp_path / "native_functions.yaml"
    native.write_text(inputs.native_bomb(key), encoding="utf-8")
    (tmp_path / "tags.yaml").write_text(REAL_TAGS.read_text(encoding="utf-8"), encoding="utf-8")
    for command in ("check", "dump", "codegen"):
        run = run_cli(command, str(REAL_DERIVATIVES), "--native", str(native))
        assert "Traceback" not in run.stderr
        assert run.seconds <= yardstick.cli_budget(native.stat().st_size), (command, run.seconds)
        assert run.peak_mb <= MAX_RSS_MB, (command, run.peak_mb)
        assert REFUSED in run.stdout + run.stderr, (command, run.stdout[-500:], run.stderr[-500:])


@pytest.mark.parametrize("kind", list(DERIVATIVES_BOMBS))
def test_server_publishes_the_refusal_and_answers_every_request(tmp_path: Path, yardstick, kind: str) -> None:
    text = DERIVATIVES_BOMBS[kind]()
    published, server = open_and_query(tmp_path, text, yardstick.server_budget(len(text)))
    with server:
        messages = [d["message"] for d in published["diagnostics"]]
        assert any(REFUSED in m for m in messages), messages
        assert server.peak_kb() / 1024 <= MAX_RSS_MB
        assert "Traceback" not in server.stderr_text()
        server.close()


def test_server_with_a_bomb_in_an_open_native_functions_buffer_stays_responsive(tmp_path: Path, yardstick) -> None:
    """The open buffer overrides the file: the refusal is reported on it, and requests are answered."""
    root = tmp_path / "ws"
    (root / "aten").mkdir(parents=True)
    native_dir = root / "aten" / "src" / "ATen" / "native"
    native_dir.mkdir(parents=True)
    native = native_dir / "native_functions.yaml"
    native.write_text(REAL_NATIVE.read_text(encoding="utf-8"), encoding="utf-8")
    (native_dir / "tags.yaml").write_text(REAL_TAGS.read_text(encoding="utf-8"), encoding="utf-8")
    derivatives = root / "tools" / "autograd" / "derivatives.yaml"
    derivatives.parent.mkdir(parents=True)
    derivatives.write_text(REAL_DERIVATIVES.read_text(encoding="utf-8"), encoding="utf-8")
    with RawServer(cwd=root) as server:
        server.initialize(root)
        doc = server.open(derivatives)
        assert server.diagnostics(doc, timeout=120) is not None
        mark = server.mark()
        started = time.monotonic()
        native_doc = server.open(native, inputs.native_bomb("variants"))
        budget = yardstick.server_budget(native.stat().st_size)
        found = server.wait_for(
            lambda m: (
                m.get("method") == "textDocument/publishDiagnostics"
                and m["params"]["uri"] == native_doc
                and any(REFUSED in d["message"] for d in m["params"]["diagnostics"])
            ),
            timeout=budget,
        )
        assert found is not None, [m for m in server.messages[mark:]][-3:]
        assert time.monotonic() - started <= budget
        for method in ("textDocument/documentSymbol", "textDocument/inlayHint", "textDocument/hover"):
            params: dict[str, object] = {"textDocument": {"uri": doc}}
            if method == "textDocument/inlayHint":
                params["range"] = {"start": {"line": 0, "character": 0}, "end": {"line": 400, "character": 0}}
            if method == "textDocument/hover":
                params["position"] = {"line": 100, "character": 3}
            assert "result" in server.call(method, params, timeout=budget)
        assert server.peak_kb() / 1024 <= MAX_RSS_MB
        assert "Traceback" not in server.stderr_text()
        server.close()
