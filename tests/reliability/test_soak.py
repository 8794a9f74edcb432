"""Memory does not grow with edits: after a warm-up, N edits of the real file leave RSS within a
bound (20,000 edits: <= 5 MB; pygls kept a Future and a uuid per edit: 20 MB per 10,000 edits)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, packaged_layout

pytestmark = pytest.mark.slow

EDITS = int(os.environ.get("DERIVLS_SOAK_EDITS", "20000"))
WARM_UP = 2_000
MAX_GROWTH_KB = 5 * 1024 * EDITS // 20_000  # 5 MB for 20,000 edits, proportionally fewer


def test_rss_stays_flat_over_many_edits(tmp_path: Path) -> None:
    path = packaged_layout(tmp_path)
    with RawServer(cwd=tmp_path) as server:
        server.initialize(tmp_path)
        doc = server.open(path, REAL_DERIVATIVES.read_text(encoding="utf-8"))
        assert server.diagnostics(doc, timeout=120) is not None
        version = 1

        def edits(count: int) -> None:
            nonlocal version
            for i in range(count):
                version += 1
                # type a character at the start of a formula, then delete it
                end = 0 if i % 2 == 0 else 1
                change = {
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": end}},
                    "text": "x" if i % 2 == 0 else "",
                }
                server.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": doc, "version": version}, "contentChanges": [change]},
                )
            assert "result" in server.call("derivls/status", {}, timeout=300)
            time.sleep(1.0)  # let the last burst be analysed

        edits(WARM_UP)
        before = server.rss_kb()
        started = time.monotonic()
        edits(EDITS)
        growth = server.rss_kb() - before
        print(f"\n{EDITS} edits in {time.monotonic() - started:.1f} s: RSS {before} kB -> +{growth} kB")
        assert growth <= MAX_GROWTH_KB, growth
        assert "Traceback" not in server.stderr_text()
        server.close()
