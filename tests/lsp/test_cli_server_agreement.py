"""`derivls check` and the language server open their inputs the same way, so they report the same.

For every profile (auto / torchgen / legacy) × tags.yaml beside native_functions.yaml or not ×
layout (a checkout, a wheel's packaged files, a lone derivatives.yaml with the native file given),
on the real PyTorch 2.13 files and on the 2021 files: the diagnostics of `derivls check --format
json` (a subprocess) equal those the real server publishes (pytest-lsp, stdio).
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
import pytest_lsp
from lsprotocol import types
from pytest_lsp import LanguageClient

from tests.lsp.conftest import CONFIG, Documents, diagnostics, initialize

PROFILES = ("auto", "torchgen", "legacy")
LAYOUTS = ("checkout", "wheel", "file")
DATASETS = ("2.13", "2021")


@dataclass(frozen=True)
class Case:
    derivatives: Path
    native: Path  # where it was put (the lone-file layout passes it explicitly)
    layout: str


def _lay_out(root: Path, layout: str, dataset: str, sources: dict[str, Path], tags: bool) -> Case:
    if layout == "checkout":
        derivatives = root / "tools" / "autograd" / "derivatives.yaml"
        native = root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"
        # the loader each era shipped beside its files
        (root / ("torchgen" if dataset == "2.13" else "tools/codegen")).mkdir(parents=True)
    elif layout == "wheel":
        derivatives = root / "torchgen" / "packaged" / "autograd" / "derivatives.yaml"
        native = root / "torchgen" / "packaged" / "ATen" / "native" / "native_functions.yaml"
    else:
        derivatives = root / "work" / "derivatives.yaml"
        native = root / "vendor" / "native_functions.yaml"
    for path in (derivatives, native):
        path.parent.mkdir(parents=True, exist_ok=True)
    shutil.copyfile(sources["derivatives"], derivatives)
    shutil.copyfile(sources["native"], native)
    if tags:
        shutil.copyfile(sources["tags"], native.with_name("tags.yaml"))
    return Case(derivatives, native, layout)


@pytest.fixture(scope="module")
def cases(tmp_path_factory, real_files, legacy_dir) -> dict[tuple[str, str, bool], Case]:
    sources = {
        "2.13": {"derivatives": real_files.derivatives, "native": real_files.native, "tags": real_files.tags},
        # the 2021 files had no tags.yaml; "with tags" gives them 2.13's, as a user might by mistake
        "2021": {
            "derivatives": legacy_dir / "derivatives.yaml",
            "native": legacy_dir / "native_functions.yaml",
            "tags": real_files.tags,
        },
    }
    root = tmp_path_factory.mktemp("agreement")
    return {
        (dataset, layout, tags): _lay_out(
            root / f"{dataset}-{layout}-{'tags' if tags else 'notags'}", layout, dataset, sources[dataset], tags
        )
        for dataset in DATASETS
        for layout in LAYOUTS
        for tags in (True, False)
    }


Row = tuple[int, int, int, int, str, str, str]  # 0-based line, UTF-16 column, end line, end column, severity, …


def _utf16(text_lines: list[str], line: int, column: int) -> int:
    if line >= len(text_lines):
        return column
    return len(text_lines[line][:column].encode("utf-16-le")) // 2


def cli_rows(case: Case, profile: str) -> list[Row]:
    command = [sys.executable, "-m", "derivls", "check", str(case.derivatives), "--format", "json"]
    command += ["--profile", profile]
    if case.layout == "file":
        command += ["--native", str(case.native)]
    run = subprocess.run(command, capture_output=True, text=True, timeout=300)
    assert run.returncode in (0, 1), run.stderr
    lines = case.derivatives.read_text(encoding="utf-8").split("\n")
    rows = []
    for d in json.loads(run.stdout):
        if d["path"] != str(case.derivatives):
            continue  # native_functions.yaml's own diagnostics (tests/lsp/test_native_buffer.py compares those)
        line, end_line = d["line"] - 1, d["end_line"] - 1
        rows.append(
            (
                line,
                _utf16(lines, line, d["column"] - 1),
                end_line,
                _utf16(lines, end_line, d["end_column"] - 1),
                d["severity"],
                d["code"],
                d["message"],
            )
        )
    return sorted(rows)


def server_rows(found: list[types.Diagnostic]) -> list[Row]:
    severity = {1: "error", 2: "warning", 3: "information", 4: "hint"}
    return sorted(
        (
            d.range.start.line,
            d.range.start.character,
            d.range.end.line,
            d.range.end.character,
            severity[int(d.severity or 1)],
            str(d.code),
            d.message,
        )
        for d in found
    )


@pytest_lsp.fixture(config=CONFIG)
async def client(lsp_client: LanguageClient):
    yield
    await lsp_client.shutdown_session()


async def _compare(client: LanguageClient, root: Path, options: dict, chosen: list[Case], profile: str) -> None:
    await initialize(client, root, options={**options, "profile": profile})
    documents = Documents(client)
    opened = [(case, documents.open(case.derivatives)) for case in chosen]
    for case, doc in opened:
        served = server_rows(await diagnostics(client, doc, timeout=180))
        checked = cli_rows(case, profile)
        assert served == checked, f"{case.derivatives} with profile {profile}: server {served[:5]} != CLI {checked[:5]}"


@pytest.mark.slow  # every checkout and wheel layout, three profiles: a minute
@pytest.mark.parametrize("profile", PROFILES)
async def test_checkouts_and_wheels(client: LanguageClient, cases, profile: str, tmp_path: Path) -> None:
    """native_functions.yaml found by the layout: every dataset and tags.yaml choice in one server."""
    chosen = [case for (_, layout, _), case in cases.items() if layout != "file"]
    await _compare(client, tmp_path, {}, chosen, profile)


@pytest.mark.parametrize("tags", [True, False], ids=["tags", "no-tags"])
@pytest.mark.parametrize("dataset", DATASETS)
@pytest.mark.parametrize("profile", PROFILES)
async def test_lone_files(
    client: LanguageClient, cases, profile: str, dataset: str, tags: bool, tmp_path: Path
) -> None:
    """A derivatives.yaml outside any layout, native_functions.yaml given (--native / the setting)."""
    case = cases[(dataset, "file", tags)]
    await _compare(client, tmp_path, {"nativeFunctions": str(case.native)}, [case], profile)


def test_the_measured_disagreement_is_gone(cases) -> None:
    """--profile torchgen, no tags.yaml: the CLI indexes native_functions.yaml as torchgen 2.x reads it
    (with its generated functions and view groups), as the server does; no schema goes missing."""
    rows = cli_rows(cases[("2.13", "checkout", False)], "torchgen")
    assert [r for r in rows if r[5] == "schema-not-found"] == []
