#!/bin/bash
# Installs Locust (pinned in tests/peers/locust/requirements.txt) into a cache outside the
# repository, for tests/locust.rs and benches/locust.rs, as tests/peers/install.sh does for
# the SDK peers:
#   cache: $BKN_PEERS_HOME, default $HOME/.cache/bkn-peers
#          locust-venv/   the Python venv -> locust-venv/bin/locust
#
# Idempotent and fast when nothing changed: reinstalled only when the pin file differs from the
# one it was installed from (a copy is kept beside it as the stamp). Needs python3 with venv.
# The last line printed is the venv's bin folder; everything else goes to stderr. Exits
# non-zero, saying why, when python3 is missing or the package registry cannot be reached.
set -euo pipefail
here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
home=${BKN_PEERS_HOME:-$HOME/.cache/bkn-peers}
mkdir -p "$home"
# One install at a time (tests may call this concurrently): the others wait, then find it done.
exec 9>"$home/.install-locust.lock"
flock 9

fail() { echo "install.sh: $*" >&2; exit 1; }

venv=$home/locust-venv
if ! cmp -s "$here/requirements.txt" "$venv/requirements.txt" || ! "$venv/bin/python" -c 'import locust' 2>/dev/null; then
  command -v python3 >/dev/null || fail "python3 is not on PATH"
  echo "install.sh: installing Locust into $venv" >&2
  rm -rf "$venv"
  python3 -m venv "$venv" >&2 || fail "python3 -m venv failed (is the venv module installed? apt-get install python3-venv)"
  # No dependency resolution from the registry's metadata: every package is pinned.
  if ! "$venv/bin/pip" install --quiet --disable-pip-version-check --no-input \
      --timeout 30 --retries 2 --no-deps -r "$here/requirements.txt" >&2; then
    rm -rf "$venv"
    fail "pip could not install tests/peers/locust/requirements.txt: is the Python package registry reachable?"
  fi
  "$venv/bin/python" -c 'import locust' || fail "the venv was built but cannot import locust"
  cp "$here/requirements.txt" "$venv/requirements.txt"
fi
echo "$venv/bin"
