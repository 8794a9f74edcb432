"""The resident check: `derivls check --daemon` asks a derivls process that keeps its analysis warm.

A fresh `derivls check` pays for an interpreter, ~120 modules, the native index and every entry's cached
record before it analyses the one entry that changed (docs/performance.md): ~0.1 x torchgen's load at
best. A process that stays (as the language server does for a keystroke) answers a new one-entry edit
by analysing that entry. This is dmypy's and eslint_d's design, for pre-commit hooks, lintrunner and CI
loops that check the same tree many times.

- `address.py`: where a daemon listens (a socket in the user's private cache folder, named by the Python,
  derivls's version and the DERIVLS_* environment: a daemon only answers clients that would compute
  what it computes). Standard library only: the client's fast path imports it before anything else.
- `client.py`: `derivls check --daemon ...`: sends the command line and working folder, writes what comes
  back; starts a daemon when none answers (the flag is the user's request); runs the check in its own
  process when a daemon cannot be used (its answer is the same).
- `serve.py`: the daemon: one check at a time (requests are read and replies written without blocking, so
  a slow client holds no other up), `derivls check` itself run against projects it keeps (re-opened when
  any input but the derivatives.yaml text changed); stops after an idle time, when its own code changes on
  disk, on `derivls daemon stop`, on the first SIGTERM, or when its socket or folder is gone (`derivls
  cache --clear`, which also asks it to stop).
- `command.py`: `derivls daemon start | stop | status`.

Trust: the socket is in a folder only the user may enter (0700, owned: cachedir.check_folder), and the
daemon answers only peers of its own user id (SO_PEERCRED). It starts in a neutral folder with the
working folder off sys.path, runs nothing a workspace supplies (a check runs no compiler; `--compile`, `--since` (git)
and `--no-cache` are run by the client itself), and never writes in the workspace. Unlike derivls's other
children it outlives the command that started it, by design: bounded by its idle time, an address-space
limit, and a request size and time limit (docs/security.md).
"""
