"""One list of settings (issue 49): the settings the server reads, the ones the VS Code extension declares, the ones
it reads and sends, and the ones editors/README.md and docs/editors.md document are the same list; so are the
lists of what an untrusted workspace cannot set and of what changes live. Read from the sources themselves
(derivls/server/documents/settings.py, editors/vscode/package.json and src/, the two pages), so that a setting
added in one place and forgotten in another fails here (the extension once never sent `torchInclude`)."""

from __future__ import annotations

import json
import re
from pathlib import Path

from derivls.server.documents import settings

ROOT = Path(__file__).parents[2]
VSCODE = ROOT / "editors" / "vscode"
CLIENT_OWN = {"importStrategy", "server.path", "server.python", "trace.server"}  # the extension's, not the server's
INIT_ONLY = {"trustedWorkspace"}  # from initializationOptions only: the editor's word, never a settings file's


def server_reads() -> set[str]:
    source = Path(settings.__file__).read_text(encoding="utf-8")
    return set(re.findall(r'raw(?:\.get\(|\[)"(\w+)"', source)) | set(re.findall(r'"(\w+)" in raw', source))


def package() -> dict:
    return json.loads((VSCODE / "package.json").read_text(encoding="utf-8"))


def declared() -> set[str]:
    return {key.removeprefix("derivls.") for key in package()["contributes"]["configuration"]["properties"]}


def ts(name: str) -> str:
    return (VSCODE / "src" / name).read_text(encoding="utf-8")


def function_body(source: str, name: str) -> str:
    start = source.index(f"function {name}(")
    end = source.index("\n}\n", start)
    return source[start:end]


def table_keys(page: Path, heading: str) -> set[str]:
    """The backticked first cells of the table under `heading`."""
    text = page.read_text(encoding="utf-8")
    section = text[text.index(f"\n{heading}\n") :]
    section = section[: section.find("\n## ", 1)] if "\n## " in section[1:] else section
    return set(re.findall(r"^\| `(\w+)` \|", section, re.M))


def named(sentence: str) -> set[str]:
    """The settings a sentence names in backticks, `derivls.` dropped, `derivls.server.*` spelled out."""
    names = {n.removeprefix("derivls.") for n in re.findall(r"`([\w.*]+)`", sentence)}
    if "server.*" in names:
        names = (names - {"server.*"}) | {"server.path", "server.python"}
    return names


def sentence(page: Path, opening: str, closing: str) -> str:
    text = " ".join(page.read_text(encoding="utf-8").split())
    start = text.index(opening)
    return text[start : text.index(closing, start)]


def test_the_server_reads_the_settings_the_extension_declares_and_trusted_workspace():
    assert server_reads() - INIT_ONLY == declared() - CLIENT_OWN
    assert INIT_ONLY <= server_reads()


def test_the_extension_reads_and_sends_every_setting_the_server_reads():
    keys = set(re.findall(r"'(\w+)'", ts("serverCommand.ts").split("SERVER_SETTING_KEYS = [")[1].split("]")[0]))
    read = set(re.findall(r"get\('(\w+)'", function_body(ts("serverCommand.ts"), "readServerSettings")))
    sent = set(re.findall(r"^    (\w+):", function_body(ts("serverCommand.ts"), "serverSettings"), re.M))
    expected = server_reads() - INIT_ONLY
    assert (keys, read, sent) == (expected, expected, expected)
    extension = ts("extension.ts")
    assert "readServerSettings(" in function_body(extension, "currentServerSettings")
    assert re.search(
        r"initializationOptions: \(\) => \(\{ \.\.\.currentServerSettings\(\), trustedWorkspace:", extension
    )


def test_both_pages_document_every_setting_the_server_reads():
    for page in (ROOT / "editors" / "README.md", ROOT / "docs" / "editors.md"):
        assert table_keys(page, "## Settings") == server_reads(), page


def test_docs_editors_lists_the_extensions_settings():
    row = sentence(ROOT / "docs" / "editors.md", "| `derivls.nativeFunctions`", "| the server's settings above")
    names = {n.removeprefix("derivls.").lstrip(".") for n in re.findall(r"`([\w.]+)`", row)}
    assert names == declared() - CLIENT_OWN
    text = (ROOT / "docs" / "editors.md").read_text(encoding="utf-8")
    assert {k for k in CLIENT_OWN if f"| `derivls.{k}` |" in text} == CLIENT_OWN


def test_the_untrusted_lists_are_the_extensions_restricted_settings():
    restricted = {
        k.removeprefix("derivls.") for k in package()["capabilities"]["untrustedWorkspaces"]["restrictedConfigurations"]
    }
    assert set(settings.TRUSTED_ONLY) <= restricted  # what the server keeps from a workspace the editor restricts too
    description = package()["capabilities"]["untrustedWorkspaces"]["description"]
    assert set(re.findall(r"derivls\.([\w.]+\w)", description)) == restricted
    for page in (ROOT / "editors" / "README.md", ROOT / "docs" / "editors.md"):
        said = sentence(page, "In an untrusted workspace the workspace's", "are ignored")
        assert named(said) == restricted, page


def test_the_trusted_workspace_rows_name_what_only_a_trusted_workspace_may_set():
    for page in (ROOT / "editors" / "README.md", ROOT / "docs" / "editors.md"):
        row = sentence(page, "| `trustedWorkspace` |", "security.md")
        assert set(settings.TRUSTED_ONLY) <= named(row), page


def test_the_settings_that_change_live_are_the_ones_the_extension_sends():
    said = sentence(
        ROOT / "editors" / "README.md", "Changing any of the server's settings", "is sent to the running server"
    )
    assert named(said) == server_reads() - INIT_ONLY


def test_every_clients_section_says_how_to_tell_the_server_the_workspace_is_trusted():
    """`gradcheckOnSave` set in Helix or Emacs without `trustedWorkspace` does nothing: each client says how."""
    text = (ROOT / "editors" / "README.md").read_text(encoding="utf-8")
    sections = re.split(r"\n(?=## )", text)
    for heading in ("## VS Code", "## Neovim", "## Helix (untested)", "## Emacs eglot (untested)"):
        section = next(s for s in sections if s.startswith(heading + "\n"))
        assert "trustedWorkspace" in section, heading
    assert "trustedWorkspace = true" in (ROOT / "editors" / "nvim" / "lsp" / "derivls.lua").read_text(encoding="utf-8")


def test_no_client_tells_to_install_derivls_from_the_package_index():
    """derivls is not on the package index yet: `pip install derivls` finds nothing (or someone else's)."""
    for path in (VSCODE / "src" / "serverCommand.ts", ROOT / "editors" / "nvim" / "lsp" / "derivls.lua"):
        assert not re.search(r"pip install derivls\b", path.read_text(encoding="utf-8")), path
