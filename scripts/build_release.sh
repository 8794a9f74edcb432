#!/usr/bin/env bash
# Builds the release artefacts from a clean tree (`git archive HEAD`: what is committed, nothing else)
# and checks each one; fails on the first problem. Output: dist/release/ (or $1).
#
#   sdist + wheel   python -m build, with no warning in its output; twine check --strict; LICENSE in both;
#                   the wheel installed into a fresh venv, where `derivls --version` prints the version
#   .vsix           editors/vscode: npm ci, npm run package (bundles the server: bundle_server.py); its
#                   contents listed; its bundled server started by a `venv --without-pip` Python (nothing
#                   installed) answers `initialize` with serverInfo.version = the version
#
# Needs: python3 >= 3.10 with pip, build and twine (the `ci` extra), git, node 20 and npm.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
REPO=$PWD
PYTHON=${PYTHON:-python3}
OUT=$(realpath -m "${1:-dist/release}")
start=$(date +%s)
step() { echo "== release [$(($(date +%s) - start)) s]: $*"; }

VERSION=$("$PYTHON" -c 'import re,sys; print(re.search(r"^__version__ = \"([^\"]+)\"", open("derivls/__init__.py").read(), re.M).group(1))')
step "derivls $VERSION from $(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ' (uncommitted changes are left out)')"
WORK=$(mktemp -d "${TMPDIR:-/tmp}/derivls-release-XXXXXX")
trap 'rm -rf "$WORK"' EXIT
SRC=$WORK/src
mkdir "$SRC"
git archive --format=tar HEAD | tar -x -C "$SRC"
rm -rf "$OUT"
mkdir -p "$OUT"

step "python -m build (sdist, wheel)"
# Byte-compiling is part of a normal build: an environment that turns it off makes setuptools warn.
(cd "$SRC" && env -u PYTHONDONTWRITEBYTECODE "$PYTHON" -m build --outdir "$OUT" . >"$WORK/build.log" 2>&1) ||
  { cat "$WORK/build.log"; exit 1; }
if grep -i 'warn' "$WORK/build.log"; then
  echo "python -m build warned (above); full log: $WORK/build.log" >&2
  cp "$WORK/build.log" "$OUT/build.log"
  exit 1
fi
SDIST=$OUT/derivls-$VERSION.tar.gz
WHEEL=$OUT/derivls-$VERSION-py3-none-any.whl
test -s "$SDIST" && test -s "$WHEEL"

step "twine check --strict"
"$PYTHON" -m twine check --strict "$SDIST" "$WHEEL"

step "LICENSE in the wheel and the sdist"
"$PYTHON" - "$WHEEL" "$SDIST" "$VERSION" <<'EOF'
import sys, tarfile, zipfile
wheel, sdist, version = sys.argv[1:]
names = zipfile.ZipFile(wheel).namelist()
assert f"derivls-{version}.dist-info/licenses/LICENSE" in names, [n for n in names if "dist-info" in n]
members = tarfile.open(sdist).getnames()
for required in ("LICENSE", "README.md", "CHANGELOG.md", "pyproject.toml"):
    assert f"derivls-{version}/{required}" in members, required
meta = zipfile.ZipFile(wheel).read(f"derivls-{version}.dist-info/METADATA").decode()
assert "License-Expression: BSD-3-Clause" in meta and "License-File: LICENSE" in meta, meta[:800]
print(f"  {len(names)} files in the wheel, {len(members)} in the sdist; License-Expression: BSD-3-Clause")
EOF

step "the wheel in a fresh venv: derivls --version"
"$PYTHON" -m venv "$WORK/venv"
"$WORK/venv/bin/python" -m pip install --quiet "$WHEEL"
got=$(cd "$WORK" && "$WORK/venv/bin/derivls" --version)
[ "$got" = "derivls $VERSION" ] || { echo "derivls --version printed '$got', expected 'derivls $VERSION'" >&2; exit 1; }
echo "  $got"

step "the .vsix (npm ci, npm run package)"
(cd "$SRC/editors/vscode" && npm ci --no-audit --no-fund --loglevel=error &&
  PYTHON=$PYTHON npm run package) >"$WORK/vsix.log" 2>&1 || { cat "$WORK/vsix.log"; exit 1; }
VSIX=$OUT/derivls-$VERSION.vsix
cp "$SRC/editors/vscode/derivls.vsix" "$VSIX"
step "the .vsix's contents"
"$PYTHON" - "$VSIX" <<'EOF'
import collections, sys, zipfile
names = zipfile.ZipFile(sys.argv[1]).namelist()
groups = collections.Counter("/".join(n.split("/")[:4]) if n.startswith("extension/bundled/libs/") else n for n in names)
for name, count in sorted(groups.items()):
    print(f"  {name}" + (f" ({count} files)" if count > 1 else ""))
native = [n for n in names if n.endswith((".so", ".pyd", ".dylib", ".pyc"))]
assert not native, native
for required in ("extension/bundled/derivls_server.py", "extension/bundled/libs/derivls/__init__.py",
                 "extension/bundled/libs/pygls/__init__.py", "extension/bundled/libs/yaml/__init__.py",
                 "extension/LICENSE.txt", "extension/images/icon.png", "extension/dist/extension.js"):
    assert required in names, required
print(f"  {len(names)} files")
EOF

step "the .vsix's bundled server, run by a Python with nothing installed, answers initialize"
"$PYTHON" -m venv --without-pip "$WORK/bare"
mkdir "$WORK/vsix" && (cd "$WORK/vsix" && "$PYTHON" -m zipfile -e "$VSIX" .)
"$PYTHON" - "$WORK/bare/bin/python" "$WORK/vsix/extension" "$VERSION" <<'EOF'
import json, subprocess, sys
python, ext, version = sys.argv[1:]
def frame(m):
    body = json.dumps(m).encode()
    return b"Content-Length: %d\r\n\r\n" % len(body) + body
messages = [
    {"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {"processId": None, "rootUri": None, "capabilities": {}}},
    {"jsonrpc": "2.0", "method": "initialized", "params": {}},
    {"jsonrpc": "2.0", "id": 2, "method": "shutdown", "params": None},
    {"jsonrpc": "2.0", "method": "exit", "params": None},
]
run = subprocess.run([python, "-I", f"{ext}/bundled/derivls_server.py", "serve"], cwd=ext,
                     input=b"".join(frame(m) for m in messages), capture_output=True, timeout=300)
header, _, rest = run.stdout.partition(b"\r\n\r\n")
length = int(header.split(b"Content-Length:")[1].split(b"\r\n")[0])
answer = json.loads(rest[:length])
info = answer["result"]["serverInfo"]
assert run.returncode == 0 and info == {"name": "derivls", "version": version}, (run.returncode, info, run.stderr[-2000:])
print(f"  initialize answered: serverInfo {info}; exit {run.returncode}")
EOF

step "done: $(ls "$OUT" | tr '\n' ' ')"
