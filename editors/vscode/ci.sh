#!/usr/bin/env bash
# Builds and checks the VS Code extension from a clean install; fails on the first failing step.
# Needs node >= 20 and npm, and a Python >= 3.10 with pip ($PYTHON, else python3): `npm run package`
# bundles the server (bundle_server.py: the pinned pure-Python wheels through pip download). No VS Code
# download.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

echo "== derivls vscode: node $(node --version), npm $(npm --version)"
npm ci --no-audit --no-fund
npm run typecheck
npm run lint
npm test
npm run package
test -s derivls.vsix
# (the listing goes to a file: `grep -q` closing the pipe early would make unzip die of SIGPIPE under pipefail)
unzip -l derivls.vsix > derivls.vsix.list
grep -q 'extension/bundled/libs/derivls/__init__.py' derivls.vsix.list
rm -f derivls.vsix.list
echo "== derivls vscode: OK ($(wc -c < derivls.vsix) bytes in derivls.vsix, the server bundled)"
