"""The server process: boot, framing, transport, the pygls protocol and its fixes, the server object and
the wiring of handlers (main.py: `create_server`, `serve`). Importing this package is light."""
