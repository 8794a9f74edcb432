"""Characters PyYAML and LSP disagree on as line breaks: every diagnostic lands on the line the
editor shows (LSP ends lines only at \\n, \\r\\n and \\r), in the CLI and in the server."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

from derivls.project.analyse import analyse_path
from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, REAL_NATIVE, packaged_layout

# (name, character, whether PyYAML accepts it inside a double-quoted scalar)
BREAKS = [
    ("form-feed", "\x0c", False),
    ("next-line", "\x85", True),
    ("line-separator", "\u2028", True),
    ("paragraph-separator", "\u2029", True),
    ("file-separator", "\x1c", False),
    ("group-separator", "\x1d", False),
    ("record-separator", "\x1e", False),
    ("vertical-tab", "\x0b", False),
    ("lone-cr", "\r", True),
    ("crlf", "\r\n", True),
]
ENTRY = "- name: addcmul(Tensor self, Tensor tensor1, Tensor tensor2, *, Scalar value=1) -> Tensor"


def lsp_lines(text: str) -> list[str]:
    return re.split(r"\r\n|\r|\n", text)


def crafted(char: str) -> tuple[str, int, int]:
    """The real file with `char` inside a quoted formula of addcmul (and once in the first entry), and
    a misspelled key two lines below it. Returns the text, the LSP line of the misspelled key, and
    the LSP (line, column) of the first `char`."""
    text = REAL_DERIVATIVES.read_text(encoding="utf-8")
    head, entry, tail = text.partition(ENTRY + "\n")
    body = entry + tail
    body = body.replace(
        "  self: handle_r_to_c(self.scalar_type(), grad)\n",
        f'  self: "handle_r_to_c(self.scalar_type(),{char}grad)"\n',
        1,
    )
    body = body.replace("  tensor2: handle_r_to_c(tensor2", "  tensor22: handle_r_to_c(tensor2", 1)
    crafted_text = head + body
    lines = lsp_lines(crafted_text)
    key_line = next(i for i, line in enumerate(lines) if line.startswith("  tensor22:"))
    char_at = crafted_text.index(char)
    char_line = len(lsp_lines(crafted_text[:char_at])) - 1
    return crafted_text, key_line, char_line


@pytest.mark.parametrize("name,char,accepted", BREAKS, ids=[b[0] for b in BREAKS])
def test_cli_diagnostics_land_on_lsp_lines(tmp_path: Path, name: str, char: str, accepted: bool) -> None:
    text, key_line, char_line = crafted(char)
    path = tmp_path / "derivatives.yaml"
    path.write_bytes(text.encode("utf-8"))
    analysis, _ = analyse_path(path, REAL_NATIVE, REAL_NATIVE.with_name("tags.yaml"))
    found = [(d.span.line, d.code) for d in analysis.diagnostics]
    if accepted:
        assert found == [(key_line, "unknown-name")]
    else:
        # PyYAML (and so torchgen) refuses the control character: one yaml-syntax error on it, the
        # rest of the file analysed on the right lines
        assert (char_line, "yaml-syntax") in found
        assert all(code != "not-a-list" for _, code in found)
        assert all(line == char_line for line, code in found if code == "yaml-syntax")


def test_the_first_entry_stays_a_list_with_a_break_in_a_comment(tmp_path: Path) -> None:
    for name, char, accepted in BREAKS:
        if not accepted or char in ("\r", "\r\n"):
            continue
        text = "- name: abs(Tensor self) -> Tensor  # a" + char + "\n  self: grad * self.sgn()\n  selff: grad\n"
        path = tmp_path / "derivatives.yaml"
        path.write_bytes(text.encode("utf-8"))
        analysis, _ = analyse_path(path, REAL_NATIVE, REAL_NATIVE.with_name("tags.yaml"))
        codes = [(d.span.line, d.code) for d in analysis.diagnostics]
        assert (2, "unknown-name") in codes, (name, codes)
        assert all(code not in ("not-a-list", "entry-not-mapping") for _, code in codes), (name, codes)


def test_server_diagnostics_land_on_lsp_lines(tmp_path: Path) -> None:
    with RawServer(cwd=tmp_path) as server:
        server.initialize(tmp_path)
        for name, char, accepted in BREAKS:
            text, key_line, char_line = crafted(char)
            path = packaged_layout(tmp_path / name)
            doc = server.open(path, text)
            published = server.diagnostics(doc, timeout=60)
            assert published is not None, f"no diagnostics for {name}"
            found = [(d["range"]["start"]["line"], d.get("code")) for d in published["diagnostics"]]
            found = [item for item in found if item[1] != "native-not-found"]
            if accepted:
                assert found == [(key_line, "unknown-name")], name
            else:
                assert (char_line, "yaml-syntax") in found, (name, found)
        assert "Traceback" not in server.stderr_text()
        server.close()
