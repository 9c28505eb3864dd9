#!/usr/bin/env bash
# Reads a `swift test` log and prints both test libraries' per-test outcomes as one plain line:
# "tests: N passed, N failed, N skipped". Skipped tests (corpus absent, tool missing) are never counted as
# passed. Exits 1 when any test failed or the log holds no Swift Testing run at all.
# Swift Testing: the run line's total ("Test run with N tests") less the ✘ and ➜ lines, because a test's own
# ✔ line can start mid-line when a child process writes to the same stream. XCTest (the PostgreSQL queue
# suite): its "Test Case '...' passed|failed|skipped" lines.
set -euo pipefail
log=${1:-.build/test.log}
total=$(grep -Eo 'Test run with [0-9]+ tests' "$log" | tail -1 | grep -Eo '[0-9]+' || true)
failed=$(grep -E '✘ Test .* failed after' "$log" | grep -vc '✘ Test run with' || true)
skipped=$(grep -Ec '➜ Test .* skipped' "$log" || true)
xc_passed=$(grep -Ec "Test Case '[^']+' passed" "$log" || true)
xc_failed=$(grep -Ec "Test Case '[^']+' failed" "$log" || true)
xc_skipped=$(grep -Ec "Test Case '[^']+' skipped" "$log" || true)
if [ -z "$total" ]; then
  echo "tests: no Swift Testing run in $log"
  exit 1
fi
passed=$((total - failed - skipped + xc_passed))
failed=$((failed + xc_failed))
skipped=$((skipped + xc_skipped))
echo "tests: $passed passed, $failed failed, $skipped skipped"
[ "$failed" -eq 0 ]
