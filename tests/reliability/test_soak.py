"""Memory does not grow with edits typed like a typist: each edit waits for its publishDiagnostics
(so none is merged with the next), and after a warm-up RSS stays within +10 MB over N edits (20,000
by default; DERIVLS_SOAK_EDITS sets N, the bound scales with it down to 2 MB)."""

from __future__ import annotations

import os
import time
from pathlib import Path

import pytest

from tests.reliability.rawlsp import RawServer
from tests.reliability.realfiles import REAL_DERIVATIVES, packaged_layout

pytestmark = pytest.mark.slow

EDITS = int(os.environ.get("DERIVLS_SOAK_EDITS", "20000"))
# the start: after this many paced edits (every per-process cache, pool and import has been touched once)
WARM_UP = 500
MAX_GROWTH_KB = max(2 * 1024, 10 * 1024 * EDITS // 20_000)  # 10 MB for 20,000 edits


@pytest.mark.slow
def test_rss_stays_flat_over_many_paced_edits(tmp_path: Path) -> None:
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
                # type a character at the start of the file, then delete it
                end = 0 if i % 2 == 0 else 1
                change = {
                    "range": {"start": {"line": 0, "character": 0}, "end": {"line": 0, "character": end}},
                    "text": "x" if i % 2 == 0 else "",
                }
                mark = server.mark()
                server.notify(
                    "textDocument/didChange",
                    {"textDocument": {"uri": doc, "version": version}, "contentChanges": [change]},
                )
                published = server.diagnostics(doc, timeout=60, after=mark)
                assert published is not None, f"no diagnostics for edit {version}"
                if len(server.messages) > 1_000:  # the test's own list: kept short, not the server's
                    with server.cond:
                        del server.messages[:]

        edits(WARM_UP)
        before = server.rss_kb()
        started = time.monotonic()
        samples = []
        for _ in range(10):
            edits(EDITS // 10)
            samples.append(server.rss_kb() - before)
        print(f"\n{EDITS} paced edits in {time.monotonic() - started:.1f} s: RSS {before} kB, growth {samples} kB")
        assert samples[-1] <= MAX_GROWTH_KB, samples
        assert "Traceback" not in server.stderr_text()
        server.close()
