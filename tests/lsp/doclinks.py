"""Every diagnostic a test's server publishes must carry codeDescription.href to a doc page that exists.

conftest.py's client records here each diagnostic that does not (one list: conftest.py is imported both
as pytest's conftest and as tests.lsp.conftest), and its autouse fixture fails the test that saw one."""

from __future__ import annotations

from pathlib import Path
from urllib.parse import urlparse
from urllib.request import url2pathname

from lsprotocol import types

UNDOCUMENTED: list[str] = []


def check(params: types.PublishDiagnosticsParams) -> None:
    for d in params.diagnostics:
        href = d.code_description.href if d.code_description is not None else None
        path = url2pathname(urlparse(href).path) if href and href.startswith("file://") else None
        if path is None or not Path(path).is_file():
            UNDOCUMENTED.append(f"{params.uri}: {d.code} {d.message[:60]!r} has codeDescription.href {href!r}")
