"""Issue 51's editor side end to end: saving FunctionsManual.cpp gradchecks the entries that call the edited helper,
against the real server (`python -m derivls` over stdio, pytest-lsp), a trusted workspace with `gradcheckOnSave`.

A synthetic PyTorch checkout: tools/autograd/derivatives.yaml holds deg2rad's entry as torch 2.13 ships it, whose
formula calls the helper `deg2rad_backward`; torch/csrc/autograd/FunctionsManual.h is the installed torch 2.13
wheel's, FunctionsManual.cpp defines that helper alone (as torch does, but for a comment `// run N`, new at each run
of the test, so that no extension of an earlier run is reused: the session's JIT defines each save's code). Both
documents are open. The helper saved wrong (its sign dropped): deg2rad fails, reported on its formula's line in
derivatives.yaml and on the helper's name in FunctionsManual.cpp; saved right again: both cleared. Then the helper
saved with a C++ error: the build's error on its line in FunctionsManual.cpp. The first two saves are defined by the
session's JIT when its set-up ended in its bound (a fresh cache on a loaded machine may pass it: g++ then).

The time from each save to its diagnostics is printed (`-s`); nothing asserts it (the machine is shared). Slow (a
compiler, torch's import): `python -m pytest -m gradcheck tests/lsp/test_gradcheck_manual.py -s`.
"""

from __future__ import annotations

import asyncio
import random
import shutil
import sys
import time
from pathlib import Path
from typing import Any

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from derivls.codes.gradcheck import GRADCHECK_MISMATCH
from derivls.gradcheck.runner import torch_folder
from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize, position_of
from tests.lsp.test_gradcheck_session import run_tokens, session_status, warm_session

pytestmark = pytest.mark.gradcheck

SOURCE = "derivls-gradcheck"
TIMEOUT = 900.0  # a save's run: a cold precompiled header takes minutes on a loaded machine
FORMULA = "self: deg2rad_backward(grad)"
DERIVATIVES = f"- name: deg2rad(Tensor self) -> Tensor\n  {FORMULA}\n  result: auto_element_wise\n"
HELPER = "deg2rad_backward"
RIGHT = "return at::mul(grad, M_PI_180);"
WRONG = "return at::mul(grad, -M_PI_180);"
BROKEN = "return at::mul(grad, M_PI_180 * undeclared_name);"


def manual_text(n: int, last: str = RIGHT) -> str:
    """FunctionsManual.cpp with torch's deg2rad_backward, its last statement `last`."""
    return (
        "#include <torch/csrc/autograd/FunctionsManual.h>\n"
        "\n"
        "namespace torch::autograd::generated::details {\n"
        "\n"
        "Tensor deg2rad_backward(const Tensor& grad) {\n"
        f"  // run {n}\n"
        "  constexpr double M_PI_180 = 0.017453292519943295769236907684886127134428718885417;\n"
        f"  {last}\n"
        "}\n"
        "\n"
        "} // namespace torch::autograd::generated::details\n"
    )


def make_checkout(real_files: Any, root: Path, n: int) -> tuple[Path, Path]:
    """A PyTorch checkout of deg2rad only (see the module's doc); returns (derivatives.yaml, FunctionsManual.cpp)."""
    autograd = root / "tools" / "autograd"
    native = root / "aten" / "src" / "ATen" / "native"
    manual = root / "torch" / "csrc" / "autograd"
    for folder in (autograd, native, manual):
        folder.mkdir(parents=True)
    shutil.copytree(real_files.derivatives.parent / "templates", autograd / "templates")
    (autograd / "derivatives.yaml").write_text(DERIVATIVES, encoding="utf-8")
    shutil.copyfile(real_files.native, native / "native_functions.yaml")
    shutil.copyfile(real_files.tags, native / "tags.yaml")
    (root / "version.txt").write_text("2.13.0\n", encoding="utf-8")
    folder = torch_folder(sys.executable)
    assert folder is not None
    header = folder / "include" / "torch" / "csrc" / "autograd" / "FunctionsManual.h"
    shutil.copyfile(header, manual / "FunctionsManual.h")
    (manual / "FunctionsManual.cpp").write_text(manual_text(n), encoding="utf-8")
    return autograd / "derivatives.yaml", manual / "FunctionsManual.cpp"


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


class ManualEditor:
    """FunctionsManual.cpp's buffer edited to a whole new text and saved (written to disk, as an editor saves);
    each save's run waited for and timed."""

    def __init__(self, client: LanguageClient, docs: Documents, doc: str, manual: str, path: Path) -> None:
        self.client, self.docs, self.doc, self.manual, self.path = client, docs, doc, manual, path
        self.times: list[tuple[str, float]] = []

    async def save(self, text: str, what: str) -> tuple[list[types.Diagnostic], list[types.Diagnostic]]:
        """The gradcheck diagnostics of derivatives.yaml and of FunctionsManual.cpp once the save's run ended."""
        lines = self.docs.texts[self.manual].split("\n")
        self.docs.edit(self.manual, 0, 0, len(lines) - 1, len(lines[-1]), text)
        self.path.write_text(text, encoding="utf-8")
        before = run_tokens(self.client)
        self.client.diagnostics.pop(self.doc, None)
        started = time.monotonic()
        self.client.text_document_did_save(
            types.DidSaveTextDocumentParams(text_document=types.TextDocumentIdentifier(uri=self.manual))
        )
        while True:  # the run's progress ended, and derivatives.yaml published again with its results
            new = run_tokens(self.client) - before
            ended = [
                t for t in new if any(isinstance(v, types.WorkDoneProgressEnd) for v in self.client.progress_reports[t])
            ]
            if ended and self.doc in self.client.diagnostics:
                break
            assert time.monotonic() - started < TIMEOUT, f"{what}: no gradcheck result within {TIMEOUT} s"
            await asyncio.sleep(0.02)
        await asyncio.sleep(0.2)  # (FunctionsManual.cpp's diagnostics follow derivatives.yaml's publication)
        took = time.monotonic() - started
        self.times.append((what, took))
        load = Path("/proc/loadavg").read_text().split()[0]
        print(f"save FunctionsManual.cpp -> gradcheck diagnostics, {what}: {took:.1f} s (load {load})")
        entry = [d for d in self.client.diagnostics[self.doc] if d.source == SOURCE]
        helper = [d for d in self.client.diagnostics.get(self.manual, []) if d.source == SOURCE]
        return entry, helper


async def test_saving_a_wrong_helper_fails_its_caller_on_both_lines_and_saving_it_fixed_clears_both(
    client: LanguageClient, real_files, tmp_path: Path
):
    n = random.SystemRandom().randrange(10**6, 10**7)  # (a new text at each run of the test: see the module's doc)
    root = tmp_path / "pytorch"
    derivatives, manual = make_checkout(real_files, root, n)
    options = {"derivls": {"trustedWorkspace": True, "gradcheckOnSave": True}}
    await initialize(client, root, options=options)
    docs = Documents(client)
    doc = docs.open(derivatives)
    found = await diagnostics(client, doc, timeout=120)
    assert [d for d in found if d.severity == types.DiagnosticSeverity.Error] == [], found
    manual_doc = docs.open(manual, language_id="cpp")
    started = time.monotonic()
    first = await warm_session(client)
    print(f"session ready {time.monotonic() - started:.1f} s after the documents opened")
    # the JIT's set-up has a bound (120 s): a fresh cache on a loaded machine may pass it, and g++ builds each save
    jit = bool(first["jit"]["ready"])
    print(f"edits defined by {'the JIT' if jit else 'g++ (no JIT: ' + str(first['jit'].get('reason')) + ')'}")

    editor = ManualEditor(client, docs, doc, manual_doc, manual)
    formula_at = position_of(DERIVATIVES, FORMULA, offset=len("self: "))
    helper_at = position_of(manual_text(n), HELPER)

    # 1. the helper wrong: deg2rad fails, on its formula's line and on the helper's name
    entry, helper = await editor.save(manual_text(n, WRONG), "helper wrong")
    mismatches = [d for d in entry if d.code == str(GRADCHECK_MISMATCH)]
    assert formula_at.line in [d.range.start.line for d in mismatches], entry
    assert [(d.range.start.line, d.range.start.character, d.code) for d in helper] == [
        (helper_at.line, helper_at.character, str(GRADCHECK_MISMATCH))
    ], helper
    assert f"calls the edited `{HELPER}`" in helper[0].message
    assert helper[0].related_information and helper[0].related_information[0].location.uri == doc
    assert (await session_status(client))["jitRuns"] == (1 if jit else 0)  # (the edited helper defined by the JIT)

    # 2. fixed: both cleared
    entry, helper = await editor.save(manual_text(n + 1), "helper fixed")
    assert entry == [] and helper == [], (entry, helper)
    assert (await session_status(client))["jitRuns"] == (2 if jit else 0)

    # 3. a helper that no longer compiles: the build's error on its line in FunctionsManual.cpp
    entry, helper = await editor.save(manual_text(n + 2, BROKEN), "helper broken")
    broken_at = position_of(manual_text(n + 2, BROKEN), BROKEN)
    assert broken_at.line in [d.range.start.line for d in helper], helper
    print("save -> diagnostics: " + ", ".join(f"{what} {took:.1f} s" for what, took in editor.times))
