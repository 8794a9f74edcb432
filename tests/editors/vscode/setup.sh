#!/usr/bin/env bash
# Installs what the VS Code end-to-end test (test_vscode_e2e.py) needs; idempotent, fails on any error.
#
# - Debian packages: chromium (driven by Playwright through executable_path: no browser download),
#   ripgrep (seeded into @vscode/ripgrep's download cache: its postinstall would fetch rg otherwise),
#   libkrb5-dev (headers for the kerberos native module of code-server).
# - code-server (VS Code served to a browser) from the npm registry, into the cache folder, built
#   against the installed Node headers.
# - Playwright (the Python package) into the current Python, when it is missing.
#
# Prints `CODE_SERVER=<path>` as its last line. Cache folder: $DERIVLS_VSCODE_CACHE, else
# ${XDG_CACHE_HOME:-~/.cache}/derivls-vscode.
set -euo pipefail

CODE_SERVER_VERSION=${CODE_SERVER_VERSION:-4.100.3}
CACHE=${DERIVLS_VSCODE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/derivls-vscode}
PREFIX="$CACHE/code-server-$CODE_SERVER_VERSION"
BIN="$PREFIX/node_modules/.bin/code-server"
PYTHON=${PYTHON:-python3}
mkdir -p "$CACHE"
start=$(date +%s)

need_apt=()
for pkg in chromium ripgrep libkrb5-dev; do
  dpkg-query -W -f='${Status}' "$pkg" 2>/dev/null | grep -q 'install ok installed' || need_apt+=("$pkg")
done
if [ ${#need_apt[@]} -gt 0 ]; then
  echo "== setup: apt-get install ${need_apt[*]}"
  SUDO=()
  [ "$(id -u)" = 0 ] || SUDO=(sudo)
  "${SUDO[@]}" apt-get update -qq
  DEBIAN_FRONTEND=noninteractive "${SUDO[@]}" apt-get install -y -qq --no-install-recommends "${need_apt[@]}"
fi

if ! "$PYTHON" -c 'import playwright' 2>/dev/null; then
  # Only into a virtualenv (the project's test extra lists it; this is for running the test alone).
  if "$PYTHON" -c 'import sys; sys.exit(sys.prefix == sys.base_prefix)'; then
    echo "== setup: pip install playwright"
    "$PYTHON" -m pip install -q playwright
  else
    echo "Playwright is missing from $PYTHON (not a virtualenv): pip install -e '.[ci]' in the project's venv" >&2
    exit 1
  fi
fi

# code-server writes a config file into $XDG_CONFIG_HOME on every start, even for --version.
version() { XDG_CONFIG_HOME="$CACHE/xdg-config" "$BIN" --version; }

if [ -x "$BIN" ] && [ -d "$PREFIX/node_modules/code-server/lib/vscode/node_modules/@vscode/ripgrep/bin" ] &&
  version >/dev/null 2>&1; then
  echo "== setup: code-server $CODE_SERVER_VERSION already in $PREFIX"
else
  echo "== setup: npm install code-server@$CODE_SERVER_VERSION into $PREFIX"
  major=$(node -p 'process.versions.node.split(".")[0]')
  [ "$major" = 20 ] || { echo "code-server $CODE_SERVER_VERSION needs Node 20, found $(node --version)" >&2; exit 1; }
  rm -rf "$PREFIX"
  mkdir -p "$PREFIX"
  # @vscode/ripgrep's postinstall looks for ripgrep-<tag>-<target>.tar.gz in
  # $TMPDIR/vscode-ripgrep-cache-<package version>/ before downloading: seed it with Debian's rg.
  seed="$CACHE/tmp"
  rm -rf "$seed"
  mkdir -p "$seed/rg"
  cp "$(command -v rg)" "$seed/rg/rg"
  case "$(uname -m)" in
    x86_64) target=x86_64-unknown-linux-musl ;;
    aarch64) target=aarch64-unknown-linux-musl ;;
    *) echo "unsupported machine $(uname -m)" >&2; exit 1 ;;
  esac
  tgz="$CACHE/code-server-$CODE_SERVER_VERSION.tgz"
  [ -s "$tgz" ] || (cd "$CACHE" && npm pack "code-server@$CODE_SERVER_VERSION" --silent >/dev/null)
  # The ripgrep package versions and the release tag their postinstall wants.
  rgversions=$(tar xzf "$tgz" -O --wildcards 'package/lib/vscode/npm-shrinkwrap.json' 'package/lib/vscode/extensions/npm-shrinkwrap.json' |
    node -e 'let s="";process.stdin.on("data",d=>s+=d).on("end",()=>{const v=new Set();for(const m of s.matchAll(/"node_modules\/@vscode\/ripgrep":\s*\{\s*"version":\s*"([^"]+)"/g))v.add(m[1]);console.log([...v].join(" "))})')
  [ -n "$rgversions" ] || { echo "no @vscode/ripgrep version found in code-server's lock files" >&2; exit 1; }
  for v in $rgversions; do
    (cd "$CACHE" && [ -s "vscode-ripgrep-$v.tgz" ] || npm pack "@vscode/ripgrep@$v" --silent >/dev/null)
    tag=$(tar xzf "$CACHE/vscode-ripgrep-$v.tgz" -O package/lib/postinstall.js | sed -n "s/^const VERSION = '\(.*\)';.*/\1/p")
    [ -n "$tag" ] || { echo "no ripgrep release tag in @vscode/ripgrep@$v" >&2; exit 1; }
    mkdir -p "$seed/vscode-ripgrep-cache-$v"
    tar czf "$seed/vscode-ripgrep-cache-$v/ripgrep-$tag-$target.tar.gz" -C "$seed/rg" rg
    echo "== setup: seeded @vscode/ripgrep@$v ($tag, $target) with $(rg --version | sed -n 1p)"
  done
  # npm_config_yes: node-pty's postinstall runs `npx node-gyp`; nodedir: build against the installed headers;
  # unsafe_perm: code-server's postinstall refuses to run as root without it.
  (cd "$PREFIX" && TMPDIR="$seed" npm_config_yes=true npm_config_nodedir=${npm_config_nodedir:-/usr} \
    npm_config_unsafe_perm=true npm install --no-audit --no-fund "$tgz")
  version
fi
echo "== setup: done in $(($(date +%s) - start)) s"
echo "CODE_SERVER=$BIN"
