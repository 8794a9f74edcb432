"""The derivls language server: `create_server()` builds it, `serve(args)` runs it.

- Documents: files named derivatives.yaml (or language id `derivatives-yaml`) are analysed; open
  native_functions.yaml / tags.yaml buffers override the files on disk.
- Layout: runtime/ (this module, app.py: the server object, handlers.py: registration, protocol.py:
  pygls overrides, transport.py: stdio/TCP, boot, framing), documents/ (pipeline.py: edit → analyse
  → publish, indexes.py: loading native indexes, overlays, watchers, state, settings, saving),
  features/ (one adapter per feature turning derivls.ide data into LSP). Indexes and analyzers are
  the LSP-free workspace's (derivls.project.workspace).

Importing this module is light: pygls and lsprotocol are imported by `create_server()` (over stdio,
after the boot phase, boot.py), so a server answers from its cache before paying for them.
"""

from __future__ import annotations

import argparse

from derivls.base.gcpolicy import one_malloc_arena
from derivls.server.runtime import transport

TYPE_CHECKING = False
if TYPE_CHECKING:
    from derivls.server.runtime.app import DerivlsServer


def create_server() -> DerivlsServer:
    from derivls.server.runtime import handlers
    from derivls.server.runtime.app import DerivlsServer

    server = DerivlsServer()
    handlers.register(server)
    return server


def serve(args: argparse.Namespace) -> int:
    from derivls.base import bounded
    from derivls.base.writebehind import never_wait

    bounded.guard_scratch()  # the scratch folder (the gradcheck session's, a query's TMPDIR) goes even on a kill -9

    one_malloc_arena()  # before any thread: the index is built in one (gcpolicy.py)
    never_wait()  # a cache miss while a `derivls check` writes its cache is computed, not waited for
    transport.configure_logging(getattr(args, "log_file", None), getattr(args, "log_level", "WARNING") or "WARNING")
    if getattr(args, "tcp", False):
        transport.serve_tcp(create_server, args.host, args.port)
    else:
        transport.serve_stdio(create_server)
    return 0


__all__ = ["create_server", "serve"]
