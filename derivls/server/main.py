"""The derivls language server: `create_server()` builds it, `serve(args)` runs it.

- Documents: files named derivatives.yaml (or language id `derivatives-yaml`) are analysed; open
  native_functions.yaml / tags.yaml buffers override the files on disk.
- Layout: app.py (the server object), protocol.py (pygls overrides), transport.py (stdio/TCP),
  pipeline.py (edit → analyse → publish), indexes.py (native indexes, overlays, watchers),
  handlers.py (registration), one adapter per feature turning derivls.ide data into LSP.
"""

from __future__ import annotations

import argparse

from derivls.server import handlers, transport
from derivls.server.app import DerivlsServer
from derivls.server.generated import SHOW_GENERATED_CODE
from derivls.server.protocol import GENERATED_SCHEME


def create_server() -> DerivlsServer:
    server = DerivlsServer()
    handlers.register(server)
    return server


def serve(args: argparse.Namespace) -> int:
    transport.configure_logging(getattr(args, "log_file", None), getattr(args, "log_level", "WARNING") or "WARNING")
    server = create_server()
    if getattr(args, "tcp", False):
        transport.serve_tcp(server, args.host, args.port)
    else:
        transport.serve_stdio(server)
    return 0


__all__ = ["GENERATED_SCHEME", "SHOW_GENERATED_CODE", "DerivlsServer", "create_server", "serve"]
