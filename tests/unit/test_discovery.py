"""derivls.base.discovery: every layout rule (checkout, wheel, lone file) in one place."""

from __future__ import annotations

from pathlib import Path

from derivls.base import discovery


def _touch(path: Path) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("", encoding="utf-8")
    return path


def _checkout(root: Path, loader: str = "torchgen") -> dict[str, Path]:
    (root / loader).mkdir(parents=True)
    return {
        "derivatives": _touch(root / "tools" / "autograd" / "derivatives.yaml"),
        "native": _touch(root / "aten" / "src" / "ATen" / "native" / "native_functions.yaml"),
        "tags": _touch(root / "aten" / "src" / "ATen" / "native" / "tags.yaml"),
        "cpp": _touch(root / "torch" / "csrc" / "autograd" / "FunctionsManual.cpp"),
        "h": _touch(root / "torch" / "csrc" / "autograd" / "FunctionsManual.h"),
    }


def _wheel(site: Path) -> dict[str, Path]:
    packaged = site / "torchgen" / "packaged"
    return {
        "derivatives": _touch(packaged / "autograd" / "derivatives.yaml"),
        "native": _touch(packaged / "ATen" / "native" / "native_functions.yaml"),
        "tags": _touch(packaged / "ATen" / "native" / "tags.yaml"),
        "h": _touch(site / "torch" / "include" / "torch" / "csrc" / "autograd" / "FunctionsManual.h"),
    }


def test_layouts_are_told_apart(tmp_path: Path) -> None:
    new = _checkout(tmp_path / "new")
    old = _checkout(tmp_path / "old", loader="tools/codegen")
    wheel = _wheel(tmp_path / "site")
    lone = _touch(tmp_path / "elsewhere" / "derivatives.yaml")
    assert discovery.layout_of(new["derivatives"]) == discovery.Layout(
        discovery.CHECKOUT, (tmp_path / "new").resolve(), has_torchgen=True
    )
    assert discovery.layout_of(old["derivatives"]).has_tools_codegen
    assert not discovery.layout_of(old["derivatives"]).has_torchgen
    assert discovery.layout_of(wheel["derivatives"]) == discovery.Layout(
        discovery.WHEEL, (tmp_path / "site").resolve(), has_torchgen=True
    )
    assert discovery.layout_of(lone).kind == discovery.LONE_FILE


def test_native_files_of_each_layout(tmp_path: Path) -> None:
    new = _checkout(tmp_path / "new")
    wheel = _wheel(tmp_path / "site")
    found = discovery.find_native_files(new["derivatives"])
    assert (found.native, found.tags) == (new["native"].resolve(), new["tags"].resolve())
    found = discovery.find_native_files(wheel["derivatives"])
    assert (found.native, found.tags) == (wheel["native"].resolve(), wheel["tags"].resolve())
    lone = discovery.find_native_files(_touch(tmp_path / "elsewhere" / "derivatives.yaml"))
    assert lone.native is None and lone.tried and "--native" in lone.missing_message()
    given = discovery.find_native_files(None, new["native"])
    assert (given.native, given.tags) == (new["native"], new["tags"])  # tags.yaml beside it


def test_workspace_derivatives_of_a_checkout_and_a_wheel(tmp_path: Path) -> None:
    new = _checkout(tmp_path / "new")
    wheel = _wheel(tmp_path / "site")
    assert discovery.workspace_derivatives(tmp_path / "new") == [new["derivatives"]]
    assert discovery.workspace_derivatives(tmp_path / "site") == [wheel["derivatives"]]
    assert discovery.workspace_derivatives(tmp_path / "site" / "torchgen") == [wheel["derivatives"]]
    assert discovery.workspace_derivatives(tmp_path) == []


def test_derivatives_for_native(tmp_path: Path) -> None:
    new = _checkout(tmp_path / "new")
    wheel = _wheel(tmp_path / "site")
    assert discovery.derivatives_for_native(new["native"]) == [new["derivatives"].resolve()]
    assert discovery.derivatives_for_native(wheel["native"]) == [wheel["derivatives"].resolve()]


def test_functions_manual_sources_cpp_first(tmp_path: Path) -> None:
    new = _checkout(tmp_path / "new")
    wheel = _wheel(tmp_path / "site")
    assert discovery.functions_manual_sources(new["derivatives"]) == [new["cpp"].resolve(), new["h"].resolve()]
    # a wheel ships only the header
    assert discovery.functions_manual_sources(wheel["derivatives"]) == [wheel["h"].resolve()]
    # a lone derivatives.yaml: from the checkout of its native_functions.yaml, or a workspace folder
    lone = _touch(tmp_path / "elsewhere" / "derivatives.yaml")
    assert discovery.functions_manual_sources(lone, native=new["native"]) == [new["cpp"], new["h"]]
    assert discovery.functions_manual_sources(lone, roots=[tmp_path / "new"]) == [new["cpp"], new["h"]]
    assert discovery.functions_manual_sources(lone) == []
