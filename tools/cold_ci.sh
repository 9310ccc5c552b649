#!/usr/bin/env bash
# Times a cold `.ci/run`: a fresh clone of this repository's HEAD run with an empty HOME,
# so the target dir, the cargo registry, the pip cache, the venv and cargo-fuzz all start
# empty, as on a new machine; the machine's Rust toolchain (RUSTUP_HOME) and
# cargo-nextest are used as they are. Usage: tools/cold_ci.sh [WORKDIR] (default
# /tmp/cold-ci); prints the exit code and the seconds it took; the log is WORKDIR/ci.log.
set -u
repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
work=${1:-/tmp/cold-ci}
rm -rf "$work"
mkdir -p "$work/home"
git clone -q "$repo" "$work/clone"
cd "$work/clone"
start=$(date +%s)
HOME="$work/home" RUSTUP_HOME="${RUSTUP_HOME:-/root/.rustup}" CARGO_HOME="$work/home/.cargo" \
  PATH="$(dirname "$(command -v cargo)"):$PATH" CI=true \
  bash .ci/run > "$work/ci.log" 2>&1 < /dev/null
rc=$?
echo "cold .ci/run: exit $rc after $(( $(date +%s) - start )) s (log: $work/ci.log)"
exit $rc
