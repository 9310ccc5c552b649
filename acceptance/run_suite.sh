#!/usr/bin/env bash
# Runs the acceptance suite as two pytest sessions at once (`make acceptance`; see
# README.md, "Scheduling"):
#   - the modules marked `waits` (they mostly wait: on real time, on a Lease, on an
#     operation held for real seconds) in WAIT_JOBS workers, more than the cores;
#   - every other module, which keeps a core busy (Terraform, the provider, the fakes),
#     in BUSY_JOBS workers, one per core.
# Each module stays in one worker (`--dist loadfile`: its emulators are its own). The
# waiting session's output is printed after the busy one's. Exit 0 when both sessions
# pass (a session with nothing selected, pytest's exit 5, passes, unless both are empty).
#
# Usage: run_suite.sh PYTHON BUSY_JOBS WAIT_JOBS TMPDIR [pytest args...]
set -uo pipefail

py=$1 busy_jobs=$2 wait_jobs=$3 tmp=$4
shift 4
cd "$(dirname "${BASH_SOURCE[0]}")/.."

rm -rf "$tmp"
mkdir -p "$tmp"
"$py" -m pytest acceptance -m waits -n "$wait_jobs" --dist loadfile \
    --basetemp "$tmp/waits" "$@" > "$tmp/waits.log" 2>&1 &
waits=$!
"$py" -m pytest acceptance -m "not waits" -n "$busy_jobs" --dist loadfile \
    --basetemp "$tmp/busy" "$@"
busy_rc=$?
wait "$waits"
waits_rc=$?

echo
echo "== the modules that mostly wait (marked \`waits\`), in $wait_jobs workers at the same time as the above"
cat "$tmp/waits.log"

passed() { [[ $1 -eq 0 || $1 -eq 5 ]]; }
if passed "$busy_rc" && passed "$waits_rc" && ! [[ $busy_rc -eq 5 && $waits_rc -eq 5 ]]; then
    exit 0
fi
echo "acceptance: busy modules exit $busy_rc, waiting modules exit $waits_rc" >&2
exit 1
