#!/usr/bin/env bash
# Builds and checks the VS Code extension from a clean install; fails on the first failing step.
# Needs node >= 20 and npm; fetches packages from the npm registry only (no VS Code download).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")"

echo "== derivls vscode: node $(node --version), npm $(npm --version)"
npm ci --no-audit --no-fund
npm run typecheck
npm run lint
npm test
npm run package
test -s derivls.vsix
echo "== derivls vscode: OK ($(wc -c < derivls.vsix) bytes in derivls.vsix)"
