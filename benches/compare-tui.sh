#!/bin/bash
# The explorer's frame time and start-up (benches/tui.rs) side by side with an earlier build, in
# one run, on the same machine at the same time (issue 29: "must not regress, side by side with
# the build before").
#
#   benches/compare-tui.sh [REV] [CRITERION ARGS...]
#     REV    the build to compare with (default 103fa3f); the working tree is the other side
#     ARGS   passed to both bench programs, e.g. a filter: 'frame 200x60' or startup
#   ROUNDS=N (default 2): how many times each side runs, alternately (before, now, before, now…),
#            so that a busier minute of the machine falls on both sides
#
# REV is checked out in a worktree of its own under target/compare-tui/ and its bench built in
# the bench profile with a target directory of its own; both are kept, so that the next run
# builds nothing for REV (`git worktree remove target/compare-tui/src-SHA` and removing the
# folder clean up). Each bench program starts the reference servers of its own build for the
# start-up figure. The working tree's bench is built with `cargo bench --no-run`.
# Criterion keeps each run as a baseline (before-1, now-1, …) in target/compare-tui/criterion;
# the table gives each benchmark's median per side (the lowest and highest of the rounds'
# medians) and now/before.
set -euo pipefail
rev=${1:-103fa3f}
[[ $# -gt 0 ]] && shift
rounds=${ROUNDS:-2}
root=$(git rev-parse --show-toplevel)
cd "$root"
target=${CARGO_TARGET_DIR:-$root/target}
work=$target/compare-tui
sha=$(git rev-parse --short "$rev^{commit}")
src=$work/src-$sha
mkdir -p "$work"

# Builds the `tui` bench in the bench profile (in the current folder; cargo's arguments
# after the name of its log) and prints the executable, or the compiler's errors and fails.
build() {
    local log=$1
    shift
    cargo bench --bench tui --no-run --message-format=json "$@" >"$log.json" 2>"$log.log" || {
        jq -r 'select(.reason == "compiler-message") | .message.rendered' "$log.json" >&2
        tail -5 "$log.log" >&2
        return 1
    }
    jq -r 'select(.reason == "compiler-artifact" and .target.name == "tui"
                  and (.target.kind | index("bench")) and .executable != null) | .executable' \
        "$log.json" | tail -1
}

echo "building the bench of the working tree ($(git rev-parse --short HEAD)$(git diff --quiet HEAD || echo ', with changes'))" >&2
now=$(build "$work/build-now")
if [[ ! -d $src ]]; then
    git worktree prune
    git worktree add --detach "$src" "$sha" >/dev/null
fi
# The other side's target directory starts as a copy of this one's bench profile (the
# dependencies are mostly the same; copied once).
if [[ ! -d $work/target-$sha/release && -d $target/release ]]; then
    echo "seeding $work/target-$sha from $target/release" >&2
    mkdir -p "$work/target-$sha"
    cp -a "$target/release" "$work/target-$sha/release"
fi
echo "building the bench of $sha" >&2
before=$(cd "$src" && CARGO_TARGET_DIR=$work/target-$sha build "$work/build-$sha")

export CRITERION_HOME=$work/criterion
rm -rf "$CRITERION_HOME"
for round in $(seq 1 "$rounds"); do
    echo "round $round of $rounds: $sha" >&2
    (cd "$src" && "$before" --bench --noplot --save-baseline "before-$round" "$@" >"$work/before-$round.log")
    echo "round $round of $rounds: now" >&2
    "$now" --bench --noplot --save-baseline "now-$round" "$@" >"$work/now-$round.log"
done

python3 - "$CRITERION_HOME" "$sha" <<'EOF'
import json, pathlib, sys
home, sha = pathlib.Path(sys.argv[1]), sys.argv[2]
medians = {}  # id -> side -> [median ns of each round]
for bench in home.rglob("benchmark.json"):
    baseline = bench.parent.name
    side = baseline.rsplit("-", 1)[0]
    if side not in ("before", "now"):
        continue
    full_id = json.loads(bench.read_text())["full_id"]
    est = json.loads((bench.parent / "estimates.json").read_text())
    medians.setdefault(full_id, {}).setdefault(side, []).append(est["median"]["point_estimate"])

def fmt(ns):
    return f"{ns / 1e6:.3f} ms" if ns >= 1e5 else f"{ns / 1e3:.1f} µs"

def cell(values):
    if not values:
        return "—"
    m = sorted(values)[len(values) // 2]
    return fmt(m) + (f" ({fmt(min(values))}–{fmt(max(values))})" if len(values) > 1 else "")

print(f"| benchmark | {sha} (before) | now | now/before |")
print("|---|---|---|---|")
for full_id in sorted(medians):
    sides = medians[full_id]
    b, n = sides.get("before", []), sides.get("now", [])
    ratio = f"{sorted(n)[len(n) // 2] / sorted(b)[len(b) // 2]:.2f}" if b and n else "—"
    print(f"| {full_id} | {cell(b)} | {cell(n)} | {ratio} |")
EOF
